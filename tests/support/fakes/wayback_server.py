"""A Save Page Now 2 server on 127.0.0.1, shaped like the real one (sources/wayback.py).

`POST /save` (form `url`) answers `{"url", "job_id"}`, or `{"status": "error",
"status_ext", "message"}`, or HTTP 429 with `Retry-After`; `GET /save/status/<job>`
answers `{"status": "pending", "job_id"}`, then `{"status": "success", "timestamp",
"original_url", "duration_sec"}` or `{"status": "error", "status_ext", "message"}`. A
request without the expected `Authorization: LOW access:secret` gets 401. Every request is
logged (method, path, form url, headers), so a test can count what was asked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Job:
    url: str
    plan: str  # "ok", "pending", "error"
    polls: int = 0


@dataclass
class FakeWayback:
    """The fake: `plans` maps a URL to how its job goes ("ok" after `pending_polls`
    pending answers, "pending" forever, "error", "reject": refused at submission), default
    "ok"; `limit_after` submissions are answered, later ones get 429 (None: no limit)."""

    access: str
    secret: str
    plans: dict[str, str] = field(default_factory=dict)
    pending_polls: int = 2
    limit_after: int | None = None
    echo_auth: bool = False  # an error message that repeats the Authorization header
    # ...written in some other form (percent-encoded, base64...): what the message holds
    echo_form: Callable[[str], str] | None = None
    say: str = ""  # added to every error message (terminal escapes, say)
    drip: float = 0.0  # seconds between the bytes of each answer (a slow server)
    pad: int = 0  # bytes of padding in each answer (an oversized one)
    on_day: str | None = None  # YYYYMMDD of the captures (None: today, UTC, as the real one)
    log: list[dict[str, Any]] = field(default_factory=list)
    jobs: dict[str, Job] = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeWayback:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def submitted(self) -> list[str]:
        """Return the URL of every capture asked for (429s included), in order."""
        return [e["url"] for e in self.log if e["method"] == "POST"]

    def answer(self, method: str, path: str, form: dict[str, str],
               headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            self.log.append({"method": method, "path": path, "url": form.get("url"),
                             "headers": headers})
            if headers.get("Authorization") != f"LOW {self.access}:{self.secret}":
                return 401, {}, {"message": "You need to be logged in"}
            if method == "POST" and path == "/save":
                return self._submit(form.get("url", ""), headers)
            if method == "GET" and path.startswith("/save/status/"):
                return self._status(path.rsplit("/", 1)[1])
            return 404, {}, {"message": "not found"}

    def _submit(self, url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        asked = sum(1 for e in self.log if e["method"] == "POST")
        if self.limit_after is not None and asked > self.limit_after:
            return 429, {"Retry-After": "0"}, {"message": "Too Many Requests"}
        plan = self.plans.get(url, "ok")
        if plan == "reject":
            message = "Cannot capture this URL" + self.say
            if self.echo_auth:
                auth = str(headers.get("Authorization"))
                message += f" (request had {self.echo_form(auth) if self.echo_form else auth})"
            return 200, {}, {"status": "error", "status_ext": "error:blocked-url",
                             "message": message}
        job_id = f"spn2-{len(self.jobs):08x}"
        self.jobs[job_id] = Job(url, plan)
        return 200, {}, {"url": url, "job_id": job_id}

    def _status(self, job_id: str) -> tuple[int, dict[str, str], Any]:
        job = self.jobs.get(job_id)
        if job is None:
            return 200, {}, {"status": "error", "status_ext": "error:not-found",
                             "message": "job not found"}
        job.polls += 1
        if job.plan == "pending" or job.polls <= self.pending_polls:
            return 200, {}, {"status": "pending", "job_id": job_id, "resources": []}
        if job.plan == "error":
            return 200, {}, {"status": "error", "status_ext": "error:not-found",
                             "message": "Server returned HTTP status 404." + self.say,
                             "job_id": job_id, "resources": []}
        return 200, {}, {"status": "success", "job_id": job_id, "original_url": job.url,
                         "timestamp": self._timestamp(), "duration_sec": 6.2,
                         "resources": [job.url], "outlinks": {}}


    def _timestamp(self) -> str:
        now = datetime.now(UTC)
        day = self.on_day or now.strftime("%Y%m%d")
        return day + now.strftime("%H%M%S")


class _Handler(BaseHTTPRequestHandler):
    owner: FakeWayback

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _reply(self, answer: Callable[..., tuple[int, dict[str, str], Any]],
               form: dict[str, str]) -> None:
        code, headers, body = answer(self.command, self.path, form, dict(self.headers))
        if self.owner.pad and isinstance(body, dict):
            body = {**body, "padding": "x" * self.owner.pad}
        blob = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(blob)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if not self.owner.drip:
            self.wfile.write(blob)
            return
        for i in range(len(blob)):  # one byte at a time, never fast enough to time out a read
            try:
                self.wfile.write(blob[i:i + 1])
                self.wfile.flush()
            except OSError:
                return  # the client gave up
            time.sleep(self.owner.drip)

    def do_GET(self) -> None:
        self._reply(self.owner.answer, {})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        self._reply(self.owner.answer, form)
