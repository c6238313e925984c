"""A fake W&B GraphQL server on 127.0.0.1 for the real wandb client to talk to.

wandb 0.31 sends every request from its Go helper (`wandb-core`), so patching Python does
nothing: tests run the real `wandb.Api` against this real HTTP server. It answers the
operations the client sends for `api.run(path)`, `api.runs(...)` and `scan_history(...)`,
records every request, and can be told to fail (500, 401, malformed JSON, slow, 429).
"""

from __future__ import annotations

import base64
import bisect
import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_OP_RE = re.compile(r"\b(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)")
# "echo" is a 401 whose message repeats the credentials it got, as careless proxies do.
FAILURE_MODES = ("500", "401", "403", "echo", "malformed", "slow", "429")


@dataclass
class FakeRun:
    """One W&B run as the server stores it; `rows` are history rows sorted by `_step`."""

    entity: str
    project: str
    name: str
    created_at: str
    state: str = "running"
    heartbeat_at: str | None = None
    display_name: str | None = None
    group: str | None = None
    config: dict[str, Any] = field(default_factory=dict)  # GraphQL shape: {k: {"value": v}}
    config_text: str | None = None  # sent instead of `config`, as is (JSON too deep to dump)
    summary: dict[str, Any] = field(default_factory=dict)
    # History rows sorted by `_step`; a str is sent as-is (raw JSON text, may be broken).
    rows: Sequence[dict[str, Any] | str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"{self.entity}/{self.project}/{self.name}"

    def last_step(self) -> int:
        return _step_of(self.rows[-1]) if len(self.rows) else -1

    def node(self) -> dict[str, Any]:
        """Return the run as a GraphQL `RunFragment` node (JSON fields as strings)."""
        return {
            "id": base64.b64encode(f"Run:{self.path}".encode()).decode(),
            "projectId": "1",
            "tags": [],
            "name": self.name,
            "displayName": self.display_name or self.name,
            "sweepName": None,
            "state": self.state,
            "config": self.config_text or json.dumps(self.config),
            "group": self.group,
            "jobType": None,
            "commit": None,
            "readOnly": False,
            "createdAt": self.created_at,
            "heartbeatAt": self.heartbeat_at,
            "description": None,
            "notes": None,
            "systemMetrics": "{}",
            "summaryMetrics": json.dumps(self.summary),
            "historyLineCount": len(self.rows),
            "user": {"name": "fake", "username": "fake"},
            "historyKeys": self.history_keys(),
        }

    def history_keys(self) -> dict[str, Any]:
        return {"lastStep": self.last_step(), "keys": {}}

    def page(self, min_step: int, max_step: int, limit: int) -> list[str]:
        """Return rows with min_step <= _step < max_step (at most `limit`) as JSON strings."""
        lo = bisect.bisect_left(self.rows, min_step, key=_step_of)
        hi = bisect.bisect_left(self.rows, max_step, key=_step_of)
        rows = (self.rows[i] for i in range(lo, min(hi, lo + limit)))
        return [r if isinstance(r, str) else json.dumps(r) for r in rows]


def _step_of(row: dict[str, Any] | str) -> int:
    """Step of a row; a broken raw row counts as the step of its `_step` text, else -1."""
    if isinstance(row, str):
        found = re.search(r'"_step":\s*(\d+)', row)
        return int(found.group(1)) if found else -1
    return int(row["_step"])


@dataclass
class Failure:
    """Make the server fail: `mode` is one of FAILURE_MODES; `operations` None = all."""

    mode: str
    operations: frozenset[str] | None = None
    delay: float = 5.0

    def applies(self, op: str) -> bool:
        return self.operations is None or op in self.operations


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    operation: str
    variables: dict[str, Any]
    authorization: str


class FakeWandb:
    """The server: add runs, optionally set `failure` or `api_key`, read `requests`."""

    def __init__(self, api_key: str | None = None) -> None:
        self.runs: dict[str, FakeRun] = {}
        self.api_key = api_key  # when set, any other key gets a 401
        self.failure: Failure | None = None
        self.requests: list[Request] = []
        self.unknown: list[str] = []  # query text of operations the server cannot answer
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- setup ---------------------------------------------------------------------------

    def add_run(self, run: FakeRun) -> FakeRun:
        self.runs[run.path] = run
        return run

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> FakeWandb:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeWandb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def operations(self) -> list[str]:
        """Return the operation names received so far, in order."""
        with self._lock:
            return [r.operation for r in self.requests]

    def pages(self, run: str | None = None) -> list[dict[str, Any]]:
        """Return the variables of every HistoryPage request (for one run name)."""
        with self._lock:
            return [r.variables for r in self.requests if r.operation == "HistoryPage"
                    and (run is None or r.variables.get("run") == run)]

    # -- answering -----------------------------------------------------------------------

    def _record(self, op: str, variables: dict[str, Any], auth: str) -> None:
        with self._lock:
            self.requests.append(Request(op, variables, auth))

    def _authorized(self, auth: str) -> bool:
        if self.api_key is None:
            return True
        expected = base64.b64encode(f"api:{self.api_key}".encode()).decode()
        return auth == f"Basic {expected}"

    def _run(self, v: dict[str, Any], name_var: str) -> FakeRun | None:
        return self.runs.get(f"{v.get('entity')}/{v.get('project')}/{v.get(name_var)}")

    def answer(self, op: str, query: str, v: dict[str, Any]) -> dict[str, Any] | None:
        """Return the `data` of a GraphQL answer, or None for an unknown operation."""
        if op == "Viewer":
            return {"viewer": {"id": "VXNlcjox", "entity": "fake", "username": "fake",
                               "email": "fake@example.org", "flags": "{}",
                               "teams": {"edges": []}}}
        if op == "GetDefaultEntity":
            return {"viewer": {"id": "VXNlcjox", "entity": "fake"}}
        if op in ("Run", "RunHistoryKeys"):
            run = self._run(v, "name")
            if run is None:
                return {"project": None}
            node = run.node() if op == "Run" else {"historyKeys": run.history_keys()}
            return {"project": {"run": node}}
        if op == "RunParquetHistory":
            # Empty parquetUrls/liveData keep the client on the plain HistoryPage path.
            found = self._run(v, "runName") is not None
            parquet: dict[str, list[str]] = {"parquetUrls": [], "liveData": []}
            return {"project": {"run": {"parquetHistory": parquet} if found else None}}
        if op == "HistoryPage":
            run = self._run(v, "run")
            if run is None:
                return {"project": {"run": None}}
            rows = run.page(int(v["minStep"]), int(v["maxStep"]), int(v["pageSize"]))
            return {"project": {"run": {"history": rows}}}
        if op == "Runs":
            return self._runs_page(v)
        return None

    def _runs_page(self, v: dict[str, Any]) -> dict[str, Any]:
        filters = json.loads(v.get("filters") or "{}")
        found = [r for r in self.runs.values()
                 if r.entity == v.get("entity") and r.project == v.get("project")
                 and all(getattr(r, k, None) == want for k, want in filters.items())]
        order = v.get("order") or "-created_at"
        found.sort(key=lambda r: r.created_at, reverse=order.startswith("-"))
        start = int(v.get("cursor") or 0)
        per_page = int(v.get("perPage") or 50)
        page = found[start:start + per_page]
        edges = [{"node": r.node(), "cursor": str(start + i + 1)} for i, r in enumerate(page)]
        return {"project": {
            "internalId": "1", "runCount": len(found), "readOnly": False,
            "runs": {"edges": edges, "pageInfo": {
                "endCursor": edges[-1]["cursor"] if edges else None,
                "hasNextPage": start + per_page < len(found)}},
        }}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeWandb
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self.fake._record(f"GET {self.path}", {}, self.headers.get("Authorization", ""))
        self._send(404, b'{"errors": [{"message": "not found"}]}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        try:
            payload = json.loads(body)
        except ValueError:
            payload = {}
        query = str(payload.get("query") or "")
        variables = payload.get("variables") or {}
        match = _OP_RE.search(query)
        op = payload.get("operationName") or (match.group(1) if match else "?")
        fake = self.fake
        fake._record(op, variables, auth)

        failure = fake.failure
        if failure is not None and failure.applies(op):
            if failure.mode == "slow":
                time.sleep(failure.delay)
            elif failure.mode == "500":
                self._send(500, b'{"errors": [{"message": "internal server error"}]}')
                return
            elif failure.mode in ("401", "403"):
                message = b"unauthorized" if failure.mode == "401" else b"permission denied"
                self._send(int(failure.mode), b'{"errors": [{"message": "' + message + b'"}]}')
                return
            elif failure.mode == "echo":
                given = base64.b64decode(auth.removeprefix("Basic ") or "").decode()
                echo = json.dumps({"errors": [{"message": f"bad credentials {given!r}"}]})
                self._send(401, echo.encode())
                return
            elif failure.mode == "malformed":
                self._send(200, b'{"data": {"project": {"run": ')
                return
            elif failure.mode == "429":  # W&B's rate limit
                self._send(429, b'{"errors": [{"message": "rate limit exceeded"}]}')
                return
        if not fake._authorized(auth):
            self._send(401, b'{"errors": [{"message": "invalid api key"}]}')
            return
        data = fake.answer(op, query, variables)
        if data is None:
            with fake._lock:
                fake.unknown.append(query)
            self._send(400, json.dumps({"errors": [{"message": f"unknown op {op}"}]}).encode())
            return
        self._send(200, json.dumps({"data": data}).encode())

    def _send(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the "slow" failure mode): nothing to tell


class SyntheticRows(Sequence[dict[str, Any]]):
    """`n` history rows made on demand by repeating `base` rows (for volume tests)."""

    def __init__(self, base: Sequence[dict[str, Any]], n: int, start_time: float,
                 seconds_per_step: float = 19.0) -> None:
        self.base, self.n = base, n
        self.start_time, self.seconds_per_step = start_time, seconds_per_step

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        row = dict(self.base[i % len(self.base)])
        row["_step"] = i
        row["_timestamp"] = self.start_time + i * self.seconds_per_step
        return row

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[i] for i in range(self.n))
