"""A fake GitHub REST API on 127.0.0.1 for PyGithub to talk to (no patched internals).

It serves a small "world" of issues loaded from tests/fixtures/github/*.json as it stood
at `server.now` (None = everything), with GitHub's query parameters, `Link` pagination,
rate-limit headers and a request log. `server.failure` switches on one failure mode.
Pull requests are world issues with `pull_request: true`; they are listed among issues
(as GitHub does) and by the pulls endpoints, with `merged_at`, `files` and `base`.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.support.paths import FIXTURES

GITHUB_FIXTURES = FIXTURES / "github"
FAILURES = ("500", "401", "rate_limit", "secondary", "secondary_retry_after", "malformed")
MAX_PER_PAGE = 100  # GitHub's own cap


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def _iso(dt: datetime | None) -> str | None:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ") if dt else None


def _user(login: str) -> dict[str, Any]:
    bot = login.endswith("[bot]")
    return {"login": login, "id": zlib.crc32(login.encode()), "type": "Bot" if bot else "User",
            "site_admin": False, "html_url": f"https://github.com/{login}"}


def _reactions(url: str, counts: dict[str, int]) -> dict[str, Any]:
    names = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
    out: dict[str, Any] = {"url": url + "/reactions", "total_count": sum(counts.values())}
    out.update({n: counts.get(n, 0) for n in names})
    return out


@dataclass
class Logged:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, str]
    authorization: str | None


@dataclass
class FakeGithub:
    """The fake server's state: the world, the clock, failure switches and the log."""

    world: dict[str, Any]
    now: datetime | None = None
    failure: str | None = None
    fail_times: int | None = None  # None: fail every request; N: only the next N
    fail_path: str = ""  # only requests whose path contains this fail
    max_per_page: int = MAX_PER_PAGE
    requests: list[Logged] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_fixture(cls, name: str = "marin-issues.json", pulls: str | None = None,
                     **kw: Any) -> FakeGithub:
        """Serve a fixture world; `pulls` names a fixture whose pull requests join it."""
        world = json.loads((GITHUB_FIXTURES / name).read_text(encoding="utf-8"))
        if pulls is not None:
            extra = json.loads((GITHUB_FIXTURES / pulls).read_text(encoding="utf-8"))
            world["issues"] = world["issues"] + extra["pulls"]
        return cls(world=world, **kw)

    # -- lifecycle -------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeGithub:
        fake = self

        class Handler(_Handler):
            server_state = fake

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def paths(self) -> list[str]:
        """Return the logged request paths (without query strings)."""
        return [r.path for r in self.requests]

    # -- the world as of `now` -------------------------------------------------------
    def _visible(self, created: str) -> bool:
        return self.now is None or _time(created) <= self.now  # type: ignore[operator]

    def comments_of(self, issue: dict[str, Any]) -> list[dict[str, Any]]:
        owner_repo, number = self.world["repo"], issue["number"]
        out = []
        for c in issue.get("comments", []):
            if not self._visible(c["created_at"]):
                continue
            seen = [v for v in c["versions"] if self._visible(v["at"])]
            api = f"{self.base_url}/repos/{owner_repo}/issues/comments/{c['id']}"
            out.append({
                "url": api,
                "html_url": f"https://github.com/{owner_repo}/issues/{number}#issuecomment-{c['id']}",
                "issue_url": f"{self.base_url}/repos/{owner_repo}/issues/{number}",
                "id": c["id"], "node_id": f"IC_kw{c['id']}", "user": _user(c["user"]),
                "created_at": c["created_at"], "updated_at": seen[-1]["at"],
                "author_association": "MEMBER", "body": seen[-1]["body"],
                "reactions": _reactions(api, c.get("reactions", {})),
                "performed_via_github_app": None,
            })
        return sorted(out, key=lambda c: c["id"])

    def issue_payload(self, issue: dict[str, Any]) -> dict[str, Any]:
        """Return the REST payload of `issue` as of `now`."""
        repo, n = self.world["repo"], issue["number"]
        api = f"{self.base_url}/repos/{repo}/issues/{n}"
        comments = self.comments_of(issue)
        kind = "pull" if issue.get("pull_request") else "issues"
        closed = issue.get("closed_at")
        closed = closed if closed and self._visible(closed) else None
        # Comments and closing bump updated_at; editing a comment does not.
        times = [issue["created_at"], closed] + [c["created_at"] for c in comments]
        updated = max(_time(t) for t in times if t)  # type: ignore[type-var]
        payload: dict[str, Any] = {
            "url": api, "repository_url": f"{self.base_url}/repos/{repo}",
            "labels_url": api + "/labels{/name}", "comments_url": api + "/comments",
            "events_url": api + "/events", "timeline_url": api + "/timeline",
            "html_url": f"https://github.com/{repo}/{kind}/{n}",
            "id": issue["id"], "node_id": f"I_kw{issue['id']}", "number": n,
            "title": issue["title"], "user": _user(issue["user"]),
            "labels": [{"id": zlib.crc32(name.encode()), "name": name, "color": "ededed",
                        "default": False, "description": None} for name in issue["labels"]],
            "state": "closed" if closed else "open", "locked": False, "assignee": None,
            "assignees": [], "milestone": None, "comments": len(comments),
            "created_at": issue["created_at"], "updated_at": _iso(updated), "closed_at": closed,
            "author_association": "MEMBER", "active_lock_reason": None, "body": issue["body"],
            "reactions": _reactions(api, issue.get("reactions", {})),
            "performed_via_github_app": None,
            "state_reason": issue.get("state_reason") if closed else None,
        }
        if issue.get("pull_request"):
            payload["pull_request"] = {"url": f"{self.base_url}/repos/{repo}/pulls/{n}",
                                       "html_url": payload["html_url"],
                                       "merged_at": self._merged(issue, closed)}
        return payload

    @staticmethod
    def _merged(issue: dict[str, Any], closed: str | None) -> str | None:
        return issue.get("merged_at") if closed and issue.get("merged_at") else None

    def pull_payload(self, issue: dict[str, Any]) -> dict[str, Any]:
        """Return the REST pulls-list item of a pull request as of `now`."""
        item = self.issue_payload(issue)
        repo, n = self.world["repo"], issue["number"]
        api = f"{self.base_url}/repos/{repo}/pulls/{n}"
        return {
            "url": api, "id": item["id"], "node_id": f"PR_kw{item['id']}", "number": n,
            "html_url": item["html_url"], "state": item["state"], "locked": False,
            "title": item["title"], "user": item["user"], "body": item["body"],
            "labels": item["labels"], "created_at": item["created_at"],
            "updated_at": item["updated_at"], "closed_at": item["closed_at"],
            "merged_at": self._merged(issue, item["closed_at"]),
            "merge_commit_sha": None, "draft": False, "author_association": "MEMBER",
            "head": {"ref": f"branch-{n}", "sha": f"{n:040d}"},
            "base": {"ref": issue.get("base", "main"), "sha": "0" * 40},
        }

    def pulls(self) -> list[dict[str, Any]]:
        return [self.pull_payload(i) for i in self.world["issues"]
                if i.get("pull_request") and self._visible(i["created_at"])]

    def issues(self) -> list[dict[str, Any]]:
        world = self.world["issues"]
        return [self.issue_payload(i) for i in world if self._visible(i["created_at"])]


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeGithub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        fake = self.server_state
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with fake._lock:
            auth = self.headers.get("Authorization")
            fake.requests.append(Logged("GET", parts.path, query, auth))
            failing = fake.failure is not None and fake.fail_path in parts.path
            if failing and fake.fail_times is not None:
                failing = fake.fail_times > 0
                fake.fail_times -= 1
        if failing:
            return self._fail(fake.failure or "")
        segs = [s for s in parts.path.split("/") if s]
        repo = fake.world["repo"]
        if parts.path == "/rate_limit":
            core = {"limit": 5000, "remaining": 4999, "reset": int(time.time()) + 3600, "used": 1}
            return self._json(200, {"resources": {"core": core}, "rate": core})
        if len(segs) < 3 or segs[0] != "repos" or f"{segs[1]}/{segs[2]}" != repo:
            return self._json(404, {"message": "Not Found",
                                    "documentation_url": "https://docs.github.com/rest"})
        rest = segs[3:]
        if not rest:
            return self._json(200, {"id": 1, "name": segs[2], "full_name": repo,
                                    "url": f"{fake.base_url}/repos/{repo}", "private": False})
        if rest == ["issues"]:
            return self._page(self._list_issues(query), query)
        if rest == ["pulls"]:
            return self._page(self._list_pulls(query), query)
        if len(rest) == 3 and rest[0] == "pulls" and rest[1].isdigit() and rest[2] == "files":
            found = [i for i in fake.world["issues"] if i["number"] == int(rest[1])
                     and i.get("pull_request") and fake._visible(i["created_at"])]
            if not found:
                return self._json(404, {"message": "Not Found"})
            files = [{"sha": "0" * 40, "filename": name, "status": "modified",
                      "additions": 1, "deletions": 1, "changes": 2}
                     for name in found[0].get("files", [])]
            return self._page(files, query)
        if len(rest) >= 2 and rest[0] == "issues" and rest[1].isdigit():
            found = [i for i in fake.world["issues"]
                     if i["number"] == int(rest[1]) and fake._visible(i["created_at"])]
            if not found:
                return self._json(404, {"message": "Not Found"})
            if len(rest) == 2:
                return self._json(200, fake.issue_payload(found[0]))
            if rest[2:] == ["comments"]:
                comments = fake.comments_of(found[0])
                since = _time(query.get("since"))
                if since:
                    comments = [c for c in comments if _time(c["updated_at"]) >= since]  # type: ignore[operator]
                return self._page(comments, query)
        return self._json(404, {"message": "Not Found"})

    def _list_issues(self, q: dict[str, str]) -> list[dict[str, Any]]:
        items = self.server_state.issues()
        state = q.get("state", "open")
        if state != "all":
            items = [i for i in items if i["state"] == state]
        if q.get("labels"):
            wanted = set(q["labels"].split(","))
            items = [i for i in items if wanted <= {lab["name"] for lab in i["labels"]}]
        since = _time(q.get("since"))
        if since:
            items = [i for i in items if _time(i["updated_at"]) >= since]  # type: ignore[operator]
        key = {"created": "created_at", "updated": "updated_at", "comments": "comments"}
        items.sort(key=lambda i: i[key[q.get("sort", "created")]],
                   reverse=q.get("direction", "desc") == "desc")
        return items

    def _list_pulls(self, q: dict[str, str]) -> list[dict[str, Any]]:
        items = self.server_state.pulls()
        state = q.get("state", "open")
        if state != "all":
            items = [i for i in items if i["state"] == state]
        key = {"created": "created_at", "updated": "updated_at"}[q.get("sort", "created")]
        items.sort(key=lambda i: i[key], reverse=q.get("direction", "desc") == "desc")
        return items

    def _page(self, items: list[dict[str, Any]], q: dict[str, str]) -> None:
        per_page = min(int(q.get("per_page", 30)), self.server_state.max_per_page)
        page = int(q.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.server_state.base_url}{urlsplit(self.path).path}"
        for rel, target in (("next", page + 1), ("last", last)):
            if page < last:
                links.append(f'<{base}?{urlencode({**q, "page": target})}>; rel="{rel}"')
        headers = {"Link": ", ".join(links)} if links else {}
        self._json(200, items[(page - 1) * per_page: page * per_page], headers)

    def _fail(self, mode: str) -> None:
        if mode == "500":
            return self._json(500, {"message": "Server Error"})
        if mode == "401":
            return self._json(401, {"message": "Bad credentials",
                                    "documentation_url": "https://docs.github.com/rest"})
        if mode == "rate_limit":
            reset = int(time.time()) + 3600
            return self._json(403, {"message": "API rate limit exceeded for 127.0.0.1."},
                              {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)})
        if mode in ("secondary", "secondary_retry_after"):
            extra = {"Retry-After": "3600"} if mode == "secondary_retry_after" else {}
            return self._json(403, {"message": "You have exceeded a secondary rate limit. "
                                    "Please wait a few minutes before you try again."}, extra)
        if mode == "malformed":
            return self._raw(200, b'[{"number": 8506, "title": "cut off', {})
        raise ValueError(f"unknown failure mode {mode!r}; known: {', '.join(FAILURES)}")

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._raw(status, json.dumps(data).encode(), headers or {})

    def _raw(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        base = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4990",
                "X-RateLimit-Reset": str(int(time.time()) + 3600), "X-RateLimit-Resource": "core"}
        for key, value in {**base, **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
