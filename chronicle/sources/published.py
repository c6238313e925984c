"""A published chain head, fetched for `chronicle verify --against URL` (sources stage).

The one request `verify` may make: GET a chronicle's api/latest.json (or a MANIFEST.json)
over http(s), bounded in time and size. Parsing what came back is store/verify.py's.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit

from chronicle.clean import safe_url, scrub_urls
from chronicle.errors import ChronicleError

LATEST = "api/latest.json"
MAX_BYTES = 1 << 20  # a latest.json or a manifest is a few KB
TIMEOUT_SECONDS = 30


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


def fetch_published(url: str) -> bytes:
    """Return the body at `url` (api/latest.json of a site); ChronicleError if unreachable."""
    target = head_url(url)
    shown = safe_url(target)
    request = urllib.request.Request(target, headers={"User-Agent": "chronicle-verify"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            body: bytes = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as err:
        raise ChronicleError(f"--against {shown}: the server answered {err.code}; check the "
                             "URL (a chronicle site's root, or its api/latest.json)") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = scrub_urls(str(getattr(err, "reason", err)))
        raise ChronicleError(f"--against {shown}: could not fetch it ({reason}); check the "
                             "URL and the network, or pass a saved file or the sha256") from None
    if len(body) > MAX_BYTES:
        raise ChronicleError(f"--against {shown}: more than {MAX_BYTES} bytes; not a "
                             "chronicle's api/latest.json")
    return body
