"""The Internet Archive's Save Page Now 2 API, for `chronicle archive` (sources stage).

`POST <api>/save` (form `url=`, headers `Accept: application/json` and `Authorization:
LOW <access>:<secret>`) answers `{"url", "job_id"}`, or `{"status": "error",
"status_ext": "error:...", "message"}` when it refuses the capture; `GET
<api>/save/status/<job_id>` answers `status` `pending`, `success` (with `timestamp`,
YYYYMMDDHHMMSS, UTC) or `error` (with `status_ext`, `message`). The memento is
`<api>/web/<timestamp>/<url>`. Too many requests is HTTP 429 (with `Retry-After`), or an
error whose `status_ext` says a limit was reached (concurrent sessions, captures a day).

The keys go into the Authorization header and nowhere else: no message this module makes
holds them (every text from the network passes `_scrub`, which removes them in every form
an echo can take, and control characters), and `WaybackKeys` hides the secret from repr().
Whatever answers at the archive's address is untrusted: each request, connecting and every
byte of its answer included, ends after `timeout` seconds (its sockets are shut), and an
answer longer than MAX_ANSWER_BYTES is not read further.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter

from chronicle.clean import clean_line, load_json, redact, safe_url, scrub_urls
from chronicle.errors import ChronicleError

TIMEOUT_SECONDS = 30.0  # per request, whole: connecting, sending and reading all of the answer
CONNECT_SECONDS = 10.0
MAX_ANSWER_BYTES = 64 * 1024  # SPN2 answers with a few hundred bytes of JSON
# status_ext values that mean "a limit was reached": retried on a later night, not failures.
LIMITS = frozenset({"error:user-session-limit", "error:too-many-daily-captures",
                    "error:too-many-requests", "error:service-unavailable"})
_MAX_REASON = 200  # characters of the archive's own message kept in a reason


@dataclass(frozen=True)
class WaybackKeys:
    """The S3-style keys of an archive.org account (the secret is never shown)."""

    access: str = field(repr=False)
    secret: str = field(repr=False)

    def header(self) -> str:
        return f"LOW {self.access}:{self.secret}"


@dataclass(frozen=True)
class JobStatus:
    """Where one capture job is: `pending`, `success` (its `timestamp`) or `error`
    (`reason`: the archive's status_ext, or its message)."""

    status: str
    timestamp: datetime | None = None
    reason: str | None = None

    @property
    def limited(self) -> bool:
        """True when the job ended because a rate limit was reached."""
        return self.status == "error" and (self.reason or "").split(" ")[0] in LIMITS


class RateLimited(Exception):
    """The archive said: too many requests (HTTP 429, or a limit's status_ext)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(Exception):
    """The archive did not answer usefully (network, timeout, 5xx, not JSON)."""


class Rejected(Exception):
    """The archive refused to capture this page (an error status_ext that is not a limit)."""


class KeysRefused(ChronicleError):
    """The archive refused the keys (HTTP 401/403): the user fixes the secrets (exit 2)."""


@dataclass(frozen=True)
class _Answer:
    """An HTTP answer read whole (bounded): its status, Retry-After and body."""

    status: int
    retry_after: str | None
    body: bytes


class SavePageNow:
    """A client of one SPN2 endpoint; close it (or use it in a `with`)."""

    def __init__(self, api_url: str, keys: WaybackKeys,
                 timeout: float = TIMEOUT_SECONDS) -> None:
        self.api_url = api_url
        self._keys = keys
        self._timeout = timeout
        self._sockets = _Sockets()
        self._session = requests.Session()
        self._session.trust_env = False  # no ~/.netrc credentials, no proxy from the env
        adapter = _adapter(self._sockets)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.headers.update({"Accept": "application/json",
                                      "Authorization": keys.header(),
                                      "User-Agent": "chronicle-archive"})

    def __enter__(self) -> SavePageNow:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

    def submit(self, url: str) -> str:
        """Ask for a capture of `url`; return its job id.

        RateLimited, Unavailable, Rejected (this page will not be captured), KeysRefused.
        """
        answer = self._json(self._request("POST", "/save", data={"url": url}))
        job = answer.get("job_id")
        if isinstance(job, str) and job and "/" not in job:
            return job
        reason = self._reason(answer)
        if reason.split(" ")[0] in LIMITS:
            raise RateLimited(reason)
        raise Rejected(reason)

    def status(self, job_id: str) -> JobStatus:
        """Return where the capture job `job_id` is (RateLimited, Unavailable, KeysRefused)."""
        answer = self._json(self._request("GET", f"/save/status/{job_id}"))
        status = answer.get("status")
        if status == "success":
            try:
                when = datetime.strptime(str(answer.get("timestamp")) + "+0000",
                                         "%Y%m%d%H%M%S%z")
            except ValueError as err:
                raise Unavailable(f"a successful job without a timestamp "
                                  f"({self._scrub(str(answer.get('timestamp')))[:40]})") from err
            return JobStatus("success", when.astimezone(UTC))
        if status == "error":
            return JobStatus("error", reason=self._reason(answer))
        if status == "pending":
            return JobStatus("pending")
        raise Unavailable(f"an unknown job status {self._scrub(str(status))[:40]!r}")

    def _request(self, method: str, path: str, **kw: Any) -> _Answer:
        """Return the archive's answer, read whole within the request's time and size."""
        deadline = time.monotonic() + self._timeout
        # The timer shuts the request's sockets when its time is up, wherever it waits
        # (a server sending one byte every few seconds never trips a per-read timeout).
        timer = threading.Timer(self._timeout, self._sockets.shut)
        timer.start()
        try:
            with self._session.request(
                    method, self.api_url + path, stream=True, allow_redirects=False,
                    timeout=(min(CONNECT_SECONDS, self._timeout), self._timeout),
                    **kw) as response:
                answer = _Answer(response.status_code, response.headers.get("Retry-After"),
                                 _read(response, deadline))
        except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
            if time.monotonic() >= deadline:
                raise Unavailable(f"no whole answer from {safe_url(self.api_url)} within "
                                  f"{self._timeout:g} s") from None
            raise Unavailable(self._scrub(f"{type(err).__name__}: {err}")) from None
        finally:
            timer.cancel()
        if answer.status == 429:
            raise RateLimited("HTTP 429 Too Many Requests", _retry_after(answer.retry_after))
        if answer.status in (401, 403):
            raise KeysRefused(
                f"{safe_url(self.api_url)}: the archive refused the keys (HTTP "
                f"{answer.status}); check WAYBACK_S3_ACCESS_KEY and "
                "WAYBACK_S3_SECRET_KEY (an archive.org account's S3 keys, "
                "https://archive.org/account/s3.php)")
        if answer.status >= 300 and answer.status != 400:  # 400: the archive's reason, JSON
            raise Unavailable(f"HTTP {answer.status} from {safe_url(self.api_url)}")
        return answer

    def _json(self, answer: _Answer) -> dict[str, Any]:
        with contextlib.suppress(ValueError):
            found = load_json(answer.body, MAX_ANSWER_BYTES)
            if isinstance(found, dict):
                return found
        raise Unavailable(f"HTTP {answer.status}, not a JSON object")

    def _reason(self, answer: dict[str, Any]) -> str:
        ext = answer.get("status_ext")
        message = answer.get("message") or answer.get("exception") or "no reason given"
        text = f"{ext} ({message})" if isinstance(ext, str) and ext else str(message)
        return self._scrub(text)[:_MAX_REASON]

    def _scrub(self, text: str) -> str:
        """Return `text` (from the network, or an exception) as one line without control
        characters, the keys (in any form an echo gives them) or credentials in URLs."""
        # Controls go first: an escape sequence inside a key must not hide it from redact.
        text = " ".join(clean_line(text).split())
        return scrub_urls(redact(text, (self._keys.secret, self._keys.access,
                                        f"{self._keys.access}:{self._keys.secret}")))


def _read(response: requests.Response, deadline: float) -> bytes:
    """Return the body of `response`: Unavailable past `deadline` or MAX_ANSWER_BYTES."""
    body = bytearray()
    for chunk in response.iter_content(16 * 1024):
        body += chunk
        if len(body) > MAX_ANSWER_BYTES:
            raise Unavailable(f"an answer longer than {MAX_ANSWER_BYTES:,} bytes")
        if time.monotonic() >= deadline:
            raise Unavailable("the answer took longer than its time")
    return bytes(body)


class _Sockets:
    """The sockets a client opened, so that a request past its time can be cut off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._open = [s for s in self._open if s.fileno() != -1] + [sock]

    def shut(self) -> None:
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once


def _adapter(sockets: _Sockets) -> HTTPAdapter:
    """Return a transport whose connections hand their sockets to `sockets` (urllib3's
    pool classes are the documented place to choose a connection class)."""

    class Connection(urllib3.connection.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            sockets.add(self.sock)

    class SecureConnection(urllib3.connection.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            sockets.add(self.sock)

    class Pool(urllib3.HTTPConnectionPool):
        ConnectionCls = Connection

    class SecurePool(urllib3.HTTPSConnectionPool):
        ConnectionCls = SecureConnection

    adapter = HTTPAdapter(max_retries=0)
    adapter.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SecurePool}
    return adapter


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the caller's own backoff applies
