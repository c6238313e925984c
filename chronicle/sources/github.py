"""GitHub issue threads (PyGithub): the tracked issues, their comments and reactions,
and the merged pull requests behind the run's changes (sources/pulls.py decides which).

`parse_*` turn REST payloads (issue and comment JSON) into models; they are shared by the
live fetcher and the simulated source, and drop the control characters strangers can type
(chronicle/clean.py): stored text must fit every feed later. `fetch_github` is the only
function here that touches the network: it GETs the REST payloads through PyGithub's
Requester (auth, bounded retries, rate-limit handling) and hands them to `parse_thread`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from chronicle.clean import clean_line, clean_text, safe_url
from chronicle.config import RunConfig, secret
from chronicle.models import Comment, PullRequest, Thread, parse_time
from chronicle.sources.github_failures import (
    bounded_retry,
    github_message,
    rate_limit_message,
    retry_message,
    source_error,
)
from chronicle.sources.pulls import collect_pulls

_REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")


def _login(user: Any) -> str:
    if isinstance(user, Mapping) and user.get("login"):
        return clean_line(str(user["login"]))
    return "ghost"  # GitHub's name for deleted accounts


def parse_reactions(raw: Any) -> dict[str, int]:
    """Return the non-zero reaction counts of a REST `reactions` object."""
    if not isinstance(raw, Mapping):
        return {}
    return {k: int(raw[k]) for k in _REACTIONS if isinstance(raw.get(k), int) and raw[k] > 0}


def parse_comment(raw: Mapping[str, Any]) -> Comment:
    """Return a Comment from a REST issue-comment payload."""
    created = parse_time(raw.get("created_at"))
    if created is None:
        raise ValueError(f"comment {raw.get('id')!r} has no created_at")
    return Comment(
        id=int(raw["id"]),
        author=_login(raw.get("user")),
        body=clean_text(str(raw.get("body") or "")),
        created_at=created,
        updated_at=parse_time(raw.get("updated_at")) or created,
        url=clean_line(str(raw.get("html_url") or "")),
        reactions=parse_reactions(raw.get("reactions")),
    )


def parse_thread(issue: Mapping[str, Any], comments: Sequence[Mapping[str, Any]]) -> Thread:
    """Return a Thread from a REST issue payload and its comment payloads."""
    created = parse_time(issue.get("created_at"))
    if created is None:
        raise ValueError(f"issue #{issue.get('number')} has no created_at")
    labels = tuple(
        clean_line(str(lab["name"]) if isinstance(lab, Mapping) else str(lab))
        for lab in issue.get("labels") or ()
    )
    return Thread(
        number=int(issue["number"]),
        title=clean_line(str(issue.get("title") or "")),
        body=clean_text(str(issue.get("body") or "")),
        state=clean_line(str(issue.get("state") or "open")),
        labels=labels,
        author=_login(issue.get("user")),
        created_at=created,
        updated_at=parse_time(issue.get("updated_at")) or created,
        closed_at=parse_time(issue.get("closed_at")),
        url=clean_line(str(issue.get("html_url") or "")),
        comments=tuple(
            sorted((parse_comment(c) for c in comments), key=lambda c: (c.created_at, c.id))
        ),
        reactions=parse_reactions(issue.get("reactions")),
    )


# ---------------------------------------------------------------------------
# Live fetcher (network). PyGithub is imported inside fetch_github only, so that
# `chronicle build` neither needs nor loads it.

DEFAULT_API_URL = "https://api.github.com"
_PER_PAGE = 100  # GitHub's maximum page size
_TIMEOUT = 15
_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


@dataclass(frozen=True)
class GithubFetch:
    """What one GitHub fetch returned: threads, pull requests, and counts for the manifest."""

    threads: list[Thread]  # full current state of every tracked thread updated in (since, as_of]
    detail: dict[str, Any]  # {"threads": n, "comments": m, "requests": k[, "pulls": p, ...]}
    pulls: list[PullRequest] | None = None  # None: github.pulls is not configured


class _Malformed(ValueError):
    """A payload that is valid JSON but not the shape the REST API documents."""


def fetch_github(config: RunConfig, since: datetime | None, as_of: datetime,
                 token: str | None = None, pulls_since: datetime | None = None) -> GithubFetch:
    """Return the tracked threads updated in (since, as_of] and, when `github.pulls` is
    configured, the PRs that count merged in (pulls_since, as_of] (None: since the run
    started); raise SourceError on failure."""
    import requests
    from github import Auth, Github, GithubException, RateLimitExceededException

    for name, value in (("since", since), ("as_of", as_of), ("pulls_since", pulls_since)):
        if value is not None and value.tzinfo is None:
            raise ValueError(f"{name}={value!r} is naive: pass an aware UTC datetime")
    token = token or secret("GITHUB_TOKEN")
    api_url = os.environ.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL
    shown = safe_url(api_url)  # what messages say: never user:pass@ or ?token=
    wait = float(config.github.max_rate_limit_wait_seconds)
    gh = Github(
        auth=Auth.Token(token) if token else None,
        base_url=api_url,
        per_page=_PER_PAGE,
        retry=bounded_retry(wait),
        seconds_between_requests=None,
        timeout=_TIMEOUT,
    )
    client = _Client(gh.requester, config.github.repo)
    wanted = config.github.pulls
    pulls: list[PullRequest] | None = None
    try:
        threads = _collect(client, config, since, as_of)
        if wanted.paths or wanted.labels:
            start = datetime.combine(config.run.start, time(0), tzinfo=UTC)
            pulls, looked = collect_pulls(client, config.github.repo, wanted.paths,
                                          wanted.labels, pulls_since or start, as_of)
    except RateLimitExceededException as err:
        raise source_error(rate_limit_message(err, client.where, wait, token), token) from err
    except GithubException as err:
        raise source_error(github_message(err, client.where, client.what, shown), token) from err
    except requests.exceptions.RetryError as err:
        raise source_error(retry_message(err, client.where, wait), token) from err
    except requests.exceptions.RequestException as err:
        msg = (f"could not reach {shown} while fetching {client.where} ({type(err).__name__}); "
               "check GITHUB_API_URL and the network, then run the snapshot again")
        raise source_error(msg, token) from err
    except (ValueError, KeyError, TypeError) as err:
        msg = (f"malformed payload for {client.where}: {err}; GITHUB_API_URL ({shown}) must "
               "point at a GitHub REST API; if it does, retry later")
        raise source_error(msg, token) from err
    finally:
        gh.close()
    comments = sum(len(t.comments) for t in threads)
    detail: dict[str, Any] = {"threads": len(threads), "comments": comments}
    if pulls is not None:
        detail.update(pulls=len(pulls), pulls_looked_at=looked)
    detail["requests"] = client.requests
    return GithubFetch(threads=threads, detail=detail, pulls=pulls)


class _Client:
    """GETs through PyGithub's Requester: its auth, retries and errors, our pagination.

    PyGithub's object model is not used on purpose: list items are partial objects whose
    `raw_data` completes them with one more GET each, and the manifest wants a request count.
    """

    def __init__(self, requester: Any, repo: str) -> None:
        self.requester = requester
        self.repo = repo
        self.requests = 0
        self.what = f"repository {repo}"

    @property
    def where(self) -> str:
        """What was being fetched when something failed, naming the repository."""
        return self.what if self.what.startswith("repository") else f"{self.what} of {self.repo}"

    def get(self, url: str, params: dict[str, Any] | None, what: str) -> tuple[dict, Any]:
        self.what = what
        self.requests += 1
        headers, data = self.requester.requestJsonAndCheck("GET", url, parameters=params)
        return headers, data

    def pages(self, url: str, params: dict[str, Any], what: str) -> Iterator[Mapping[str, Any]]:
        next_url: str | None = url
        query: dict[str, Any] | None = {**params, "per_page": _PER_PAGE}
        while next_url:
            headers, data = self.get(next_url, query, what)
            if not isinstance(data, list):
                raise _Malformed(f"expected a JSON list, got {type(data).__name__}")
            yield from (_mapping(item) for item in data)
            match = _LINK_NEXT.search(str(headers.get("link") or ""))
            next_url, query = (match.group(1), None) if match else (None, None)


def _collect(client: _Client, config: RunConfig, since: datetime | None,
             as_of: datetime) -> list[Thread]:
    # Load inputs.
    repo = config.github.repo
    client.get(f"/repos/{repo}", None, f"repository {repo}")
    found: dict[int, Mapping[str, Any]] = {}
    for label in dict.fromkeys(config.github.labels + config.github.failure_labels):
        params = {"state": "all", "labels": label, "sort": "updated", "direction": "asc"}
        if since is not None:
            params["since"] = _stamp(since)
        for issue in client.pages(f"/repos/{repo}/issues", params, f"issues labelled {label!r}"):
            if "pull_request" in issue:
                continue  # the issues endpoint lists pull requests too
            if _in_window(_updated(issue), since, as_of):
                found.setdefault(int(issue["number"]), issue)
    for number in config.github.issues:
        if number in found:
            continue
        _, issue = client.get(f"/repos/{repo}/issues/{number}", None, f"issue #{number}")
        issue = _mapping(issue)
        if _in_window(_updated(issue), since, as_of) or _comment_edited(
            client, repo, number, issue, since, as_of
        ):
            found[number] = issue
    # Process.
    threads = []
    for number, issue in sorted(found.items()):
        comments: list[Mapping[str, Any]] = []
        if issue.get("comments"):
            url, what = f"/repos/{repo}/issues/{number}/comments", f"comments of issue #{number}"
            comments = [c for c in client.pages(url, {}, what) if _created(c) <= as_of]
        client.what = f"issue #{number}"
        threads.append(parse_thread(issue, comments))
    return threads


def _comment_edited(client: _Client, repo: str, number: int, issue: Mapping[str, Any],
                    since: datetime | None, as_of: datetime) -> bool:
    """Whether a comment of a configured issue changed in (since, as_of].

    Editing a comment need not bump the issue's updated_at, and bots rewrite status
    comments in place, so always-archived threads are checked comment by comment.
    """
    if since is None or not issue.get("comments") or _updated(issue) > as_of:
        return False
    url, what = f"/repos/{repo}/issues/{number}/comments", f"comments of issue #{number}"
    recent = client.pages(url, {"since": _stamp(since)}, what)
    return any(_in_window(_updated(c), since, as_of) for c in recent)


def _mapping(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _Malformed(f"expected a JSON object, got {type(value).__name__}")
    return value


def _updated(raw: Mapping[str, Any]) -> datetime:
    value = parse_time(raw.get("updated_at")) or parse_time(raw.get("created_at"))
    if value is None:
        raise _Malformed(f"item {raw.get('number') or raw.get('id')!r} has no updated_at")
    return value


def _created(raw: Mapping[str, Any]) -> datetime:
    value = parse_time(raw.get("created_at"))
    if value is None:
        raise _Malformed(f"comment {raw.get('id')!r} has no created_at")
    return value


def _in_window(when: datetime, since: datetime | None, as_of: datetime) -> bool:
    return (since is None or when > since) and when <= as_of


def _stamp(dt: datetime) -> str:
    # GitHub's `since` is inclusive and second-resolution; the window is re-checked locally.
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
