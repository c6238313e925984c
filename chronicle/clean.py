"""Untrusted strings made safe where they enter (kernel, shared by every stage).

Two things never get past an edge:
- control characters: a NUL or an escape in an issue title is stored forever, every later
  feed (XML) would refuse it and a terminal showing it obeys it, so text from a source
  keeps tab, newline and carriage return and loses the other C0 controls, DEL, the C1
  controls (U+0080-U+009F: U+009B is a terminal's escape too), lone surrogates and
  U+FFFE/U+FFFF. Carriage returns stay in multi-line text because GitHub ends the lines
  of every body typed in its web editor with CR LF: removing them would make each stored
  comment differ from its next fetch (an "edited" comment that was never edited). A
  one-line text (`clean_line`) has no line break of any kind;
- credentials in URLs: `WANDB_BASE_URL=https://user:pass@host` or `?token=...` would reach
  error messages, the manifest, the home page and the search index; a URL keeps its scheme,
  host, port, path and fragment, loses its userinfo and any secret-looking query parameter.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# XML 1.0 refuses these (tab, LF and CR are allowed); lone surrogates cannot be encoded.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\t\n\r\x0b\x0c\x85\u2028\u2029]+")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")
_SECRET_PARAM = re.compile(
    r"(token|key|secret|pass|pwd|auth|sig|signature|credential|session|code)", re.I)


# A plain http(s) URL: a host name (or IPv4 address), an optional port and a path of the
# characters RFC 3986 leaves unreserved (or a path needs); no userinfo, query or fragment,
# and nothing a page, a Markdown parser or a terminal could read as more than a URL.
PLAIN_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/+:@-]*)?$")


def plain_url(value: Any) -> bool:
    """Return whether `value` is a plain http(s) URL (PLAIN_URL)."""
    return isinstance(value, str) and PLAIN_URL.match(value) is not None


def clean_text(text: str) -> str:
    """Return `text` without the control characters XML and terminals cannot take."""
    return _CONTROL.sub("", text)


def clean_line(text: str) -> str:
    """Return one line of text (a title, a name): controls removed, line breaks -> spaces."""
    # NEL (U+0085) is a C1 control but also a line break: a space, like the others.
    return _LINE_BREAKS.sub(" ", clean_text(text.replace("\x85", "\n")))


def safe_url(url: str) -> str:
    """Return `url` without userinfo (user:pass@) and without secret-looking query values."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:  # not parseable as a URL: drop anything that could be a secret
        return re.sub(r"//[^/@\s]*@", "//", url.split("?", 1)[0])
    params = parse_qsl(parts.query, keep_blank_values=True)
    secret = [k for k, _ in params if _SECRET_PARAM.search(k)]
    if "@" not in parts.netloc and not secret:
        return url  # nothing to hide: keep it byte for byte
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port is not None else ""
    query = urlencode([(k, "***" if k in secret else v) for k, v in params], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub_urls(text: str) -> str:
    """Return `text` with every URL in it passed through `safe_url`."""
    return _URL.sub(lambda m: safe_url(m.group(0)), text)


# JSON from disk or the network is bounded before anything walks it: json.loads raises
# RecursionError (not ValueError) past Python's recursion limit, and a document just
# under that limit still breaks every recursive walk after it (cleaning, hashing, deep
# copies). Nothing chronicle stores or publishes nests anywhere near this deep.
MAX_JSON_DEPTH = 64


def load_json(data: bytes | str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Return the JSON document `data`; ValueError (never RecursionError) when it is not
    JSON, longer than `max_bytes` or nested deeper than `max_depth` levels."""
    if len(data) > max_bytes:
        raise ValueError(f"{len(data):,} bytes, more than the {max_bytes:,} it may have")
    try:
        doc = json.loads(data)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    if json_depth(doc) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return doc


def json_depth(doc: Any) -> int:
    """Return how deeply `doc` (parsed JSON) nests: 0 for a scalar, 1 for a flat list."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def redact(text: str, secrets: Iterable[str]) -> str:
    """Return `text` with each secret replaced by `***` in every form an echo of it can
    take: as sent, in any case, percent-encoded (any characters, once or twice), in hex,
    and inside base64 (either alphabet, at any alignment)."""
    for secret in secrets:
        if len(secret) < _MIN_SECRET:
            continue  # not a secret worth the name: every short word would go
        for pattern in _secret_patterns(secret):
            text = pattern.sub("***", text)
    return text


_MIN_SECRET = 4


def _secret_patterns(secret: str) -> list[re.Pattern[str]]:
    raw = secret.encode()
    # Each character as typed, in any case, or percent-encoded (%25 when encoded twice).
    chars = "".join(
        "(?:" + "|".join([re.escape(ch), *(f"%(?:25)?{b:02x}" for b in ch.encode())]) + ")"
        for ch in secret)
    patterns = [re.compile(chars, re.I), re.compile(re.escape(raw.hex()), re.I)]
    for pad in range(3):  # the secret's bytes start at any of base64's three alignments
        encoded = base64.b64encode(bytes(pad) + raw).decode().rstrip("=")
        first = -(-8 * pad // 6)  # the first character made only of the secret's bits
        last = 8 * (pad + len(raw)) // 6  # ...and one past the last such character
        core = encoded[first:last]
        patterns.append(re.compile(re.escape(core)))
        patterns.append(re.compile(re.escape(core.translate(_URLSAFE))))
    return patterns


_URLSAFE = str.maketrans("+/", "-_")
