"""The Internet Archive's Save Page Now 2 API, for `chronicle archive` (sources stage).

`POST <api>/save` (form `url=`, headers `Accept: application/json` and `Authorization:
LOW <access>:<secret>`) answers `{"url", "job_id"}`, or `{"status": "error",
"status_ext": "error:...", "message"}` when it refuses the capture; `GET
<api>/save/status/<job_id>` answers `status` `pending`, `success` (with `timestamp`,
YYYYMMDDHHMMSS, UTC) or `error` (with `status_ext`, `message`). The memento is
`<api>/web/<timestamp>/<url>`. Too many requests is HTTP 429 (with `Retry-After`), or an
error whose `status_ext` says a limit was reached (concurrent sessions, captures a day).

The keys go into the Authorization header and nowhere else: no message this module makes
holds them (every text from the network passes `_scrub`), and `WaybackKeys` hides the
secret from repr().
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import requests

from chronicle.clean import safe_url, scrub_urls
from chronicle.errors import ChronicleError

API_URL = "https://web.archive.org"
TIMEOUT_SECONDS = 30.0  # per request: connecting, and between bytes
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


def memento_url(api_url: str, timestamp: datetime, url: str) -> str:
    """Return the Wayback URL of `url` as captured at `timestamp`."""
    return f"{api_url}/web/{timestamp.strftime('%Y%m%d%H%M%S')}/{url}"


def check_api_url(value: str) -> str:
    """Return WAYBACK_API_URL without its trailing slash; ChronicleError if not http(s)."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query \
            or parts.username or parts.password:
        raise ChronicleError(f"WAYBACK_API_URL={safe_url(value)!r}: expected a plain http(s) "
                             f"URL such as {API_URL}; unset it to use the Internet Archive")
    return value.strip().rstrip("/")


class SavePageNow:
    """A client of one SPN2 endpoint; close it (or use it in a `with`)."""

    def __init__(self, api_url: str, keys: WaybackKeys,
                 timeout: float = TIMEOUT_SECONDS) -> None:
        self.api_url = api_url
        self._keys = keys
        self._timeout = timeout
        self._session = requests.Session()
        self._session.trust_env = False  # no ~/.netrc credentials, no proxy from the env
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

    def _request(self, method: str, path: str, **kw: Any) -> requests.Response:
        try:
            response = self._session.request(method, self.api_url + path,
                                             timeout=self._timeout, allow_redirects=False, **kw)
        except requests.RequestException as err:
            raise Unavailable(self._scrub(f"{type(err).__name__}: {err}")) from None
        if response.status_code == 429:
            raise RateLimited("HTTP 429 Too Many Requests",
                              _retry_after(response.headers.get("Retry-After")))
        if response.status_code in (401, 403):
            raise KeysRefused(
                f"{safe_url(self.api_url)}: the archive refused the keys (HTTP "
                f"{response.status_code}); check WAYBACK_S3_ACCESS_KEY and "
                "WAYBACK_S3_SECRET_KEY (an archive.org account's S3 keys, "
                "https://archive.org/account/s3.php)")
        code = response.status_code
        if code >= 300 and code != 400:  # 400 carries the archive's reason as JSON
            raise Unavailable(f"HTTP {response.status_code} from {safe_url(self.api_url)}")
        return response

    def _json(self, response: requests.Response) -> dict[str, Any]:
        with contextlib.suppress(ValueError):
            answer = response.json()
            if isinstance(answer, dict):
                return answer
        raise Unavailable(f"HTTP {response.status_code}, not a JSON object")

    def _reason(self, answer: dict[str, Any]) -> str:
        ext = answer.get("status_ext")
        message = answer.get("message") or answer.get("exception") or "no reason given"
        text = f"{ext} ({message})" if isinstance(ext, str) and ext else str(message)
        return self._scrub(" ".join(text.split()))[:_MAX_REASON]

    def _scrub(self, text: str) -> str:
        """Return `text` (from the network, or an exception) without the keys in it."""
        for secret in (self._keys.secret, self._keys.access):
            if secret:
                text = text.replace(secret, "***")
        return scrub_urls(text)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the caller's own backoff applies
