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

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# XML 1.0 refuses these (tab, LF and CR are allowed); lone surrogates cannot be encoded.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\t\n\r\x0b\x0c\x85\u2028\u2029]+")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")
_SECRET_PARAM = re.compile(
    r"(token|key|secret|pass|pwd|auth|sig|signature|credential|session|code)", re.I)


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
