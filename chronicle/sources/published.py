"""A published chain head, read for `chronicle verify --against URL|FILE` (sources stage).

The one request `verify` may make: GET a chronicle's api/latest.json (or a MANIFEST.json)
over http(s); or a saved copy of one read from a file. Either is bounded: at most
MAX_BYTES are read (a latest.json is a few KB, a manifest tens of KB), and a URL gets
TIMEOUT_SECONDS in all, however the server answers (a byte every few seconds never
trips a per-read timeout). Parsing and checking what came back is store/verify.py's.
"""

from __future__ import annotations

import os
import stat
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from chronicle.clean import safe_url, scrub_urls
from chronicle.errors import ChronicleError

LATEST = "api/latest.json"
MAX_BYTES = 10 << 20  # 10 MB: far above any head a chronicle publishes
TIMEOUT_SECONDS = 30.0  # the whole fetch: connecting, redirects, every byte
_CHUNK = 1 << 16
_FIX = "check the URL, or pass a saved copy of the file or the head's sha256"


class _Late(Exception):
    """The whole answer did not arrive before the deadline."""


def head_url(url: str) -> str:
    """Return the URL to fetch: a site's root or page means its api/latest.json."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ChronicleError(f"--against {safe_url(url)}: not an http(s) URL, a file or a "
                             "sha256 (64 hex digits)")
    if parts.path.endswith(".json"):
        return url
    base = url if parts.path.endswith("/") else url.rsplit("/", 1)[0] + "/"
    if not urlsplit(base).path:
        base += "/"
    return base + LATEST


def fetch_published(url: str, timeout: float | None = None) -> bytes:
    """Return the body at `url` (api/latest.json of a site) within `timeout` seconds in
    all (default TIMEOUT_SECONDS); ChronicleError if unreachable, too slow or too large."""
    timeout = TIMEOUT_SECONDS if timeout is None else timeout
    target = head_url(url)
    shown = safe_url(target)
    outcome: dict[str, Any] = {}

    def fetch() -> None:
        try:
            outcome["body"] = _download(target, time.monotonic() + timeout)
        except BaseException as err:  # handed to the caller's thread
            outcome["error"] = err

    # A thread bounds what no socket timeout does (a name lookup, a server that drips):
    # the command goes on at the deadline; the thread ends at its next timeout.
    worker = threading.Thread(target=fetch, name="chronicle-verify-against", daemon=True)
    worker.start()
    worker.join(timeout + 1.0)
    err = outcome.get("error")
    if worker.is_alive() or isinstance(err, _Late):
        raise ChronicleError(f"--against {shown}: no complete answer within {timeout:g} s "
                             f"(a chronicle's api/latest.json is a few KB); {_FIX}")
    if isinstance(err, urllib.error.HTTPError):
        raise ChronicleError(f"--against {shown}: the server answered {err.code}; check the "
                             "URL (a chronicle site's root, or its api/latest.json)")
    if isinstance(err, ChronicleError):
        raise ChronicleError(f"--against {shown}: {err}")
    if isinstance(err, (urllib.error.URLError, OSError, ValueError)):
        reason = scrub_urls(str(getattr(err, "reason", err)))
        raise ChronicleError(f"--against {shown}: could not fetch it ({reason}); check the "
                             "URL and the network, or pass a saved file or the sha256")
    if err is not None:
        raise err
    body: bytes = outcome["body"]
    return body


def _download(target: str, deadline: float) -> bytes:
    """Return the body at `target`, read by chunks until `deadline` (monotonic)."""
    request = urllib.request.Request(target, headers={"User-Agent": "chronicle-verify"})
    with urllib.request.urlopen(request, timeout=_left(deadline)) as response:
        length = response.headers.get("Content-Length")
        if length is not None and length.isdigit() and int(length) > MAX_BYTES:
            raise ChronicleError(_too_large(int(length)))
        chunks: list[bytes] = []
        size = 0
        while True:
            _left(deadline)
            chunk = response.read1(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_BYTES:
                raise ChronicleError(_too_large(size))
            chunks.append(chunk)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Late
    return left


def _too_large(size: int) -> str:
    return (f"{size:,} bytes or more, over the {MAX_BYTES >> 20} MB a chronicle's head can "
            "take; not a chronicle's api/latest.json or MANIFEST.json")


def read_published_file(path: Path) -> bytes:
    """Return a saved head (an api/latest.json or MANIFEST.json) at `path`: a regular file
    of at most MAX_BYTES (a FIFO or a device would never end); ChronicleError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise ChronicleError(f"--against {path}: cannot read it "
                             f"({os.strerror(err.errno or 0).lower()}); {_FIX}") from None
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ChronicleError(f"--against {path}: not a regular file (a FIFO or a device); "
                                 f"{_FIX}")
        if info.st_size > MAX_BYTES:
            raise ChronicleError(f"--against {path}: {_too_large(info.st_size)}")
        body = source.read(MAX_BYTES + 1)
    if len(body) > MAX_BYTES:  # it grew while being read
        raise ChronicleError(f"--against {path}: {_too_large(len(body))}")
    return body
