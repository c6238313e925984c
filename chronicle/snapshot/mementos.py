"""Which archive a chronicle's mementos come from, and which records a snapshot chains
(snapshot stage).

`chronicle archive` writes a mementos record after the deploy; the next `chronicle
snapshot` puts it in the hash chain. A record is checked there first (store/mementos.py
`record_problems`): its pages must be this chronicle's sealed pages, its mementos the
archive's copies of them. The archive is the one `WAYBACK_API_URL` names (default: the
Internet Archive) for both commands.
"""

from __future__ import annotations

from collections.abc import Mapping

from chronicle.clean import clean_line, plain_url, safe_url
from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.store import RecordCheck, Store, record_problems

API_URL = "https://web.archive.org"
API_VAR = "WAYBACK_API_URL"


def check_api_url(value: str) -> str:
    """Return WAYBACK_API_URL without its trailing slash; ChronicleError unless it is a
    plain http(s) URL (the rule site.url follows: no quotes, spaces, <>, user@, ?query)."""
    if not plain_url(value.strip()):
        shown = clean_line(safe_url(value))[:120]
        raise ChronicleError(f"{API_VAR}={shown!r}: expected a plain http(s) URL such as "
                             f"{API_URL} (no quotes, spaces, <>, user@, ?query or "
                             "#fragment); unset it to use the Internet Archive")
    return value.strip().rstrip("/")


def api_url(environ: Mapping[str, str]) -> str:
    """Return the archive's base URL: WAYBACK_API_URL, or the Internet Archive's
    (ChronicleError, exit 2, when it is not a plain http(s) URL)."""
    return check_api_url(environ.get(API_VAR, "").strip() or API_URL)


def record_check(config: RunConfig, store: Store, environ: Mapping[str, str]) -> RecordCheck:
    """Return what a snapshot asks of a mementos record before it chains it: its pages are
    this chronicle's sealed pages, its mementos the archive's copies of them."""
    archive = api_url(environ)
    sealed = frozenset(store.sealed_days())
    return lambda record: record_problems(record, config.site.url, archive, sealed)
