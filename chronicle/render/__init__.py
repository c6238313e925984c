"""Jinja2 templates (StrictUndefined) -> Markdown pages, and the filters they share.

Every template is HTML-bound Markdown, so autoescape is on for all of them: a value from
outside (an issue title, a run name) reaches the page as text, never as markup. Trusted
fragments we build ourselves (sanitised comment HTML, chart embeds) are `Markup`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import yaml
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from chronicle.models import parse_time

MISSING = "—"  # shown for a missing value: missing is never zero
# Characters that Markdown (or attr_list / macros-like plugins) would interpret in text.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#+!-])")
_ENTITIES = {"{": "&#123;", "}": "&#125;", "|": "&#124;"}
QUOT, APOS = "&#34;", "&#39;"  # how markupsafe escapes quotes


def fmt_num(value: Any, digits: int = 3, suffix: str = "") -> str:
    """Return a finite number with `digits` decimals, or the missing mark."""
    if not _finite(value):
        return MISSING
    return f"{float(value):,.{digits}f}{suffix}"


def fmt_signed(value: Any, digits: int = 3, suffix: str = "") -> str:
    """Return a change with its sign (+0.012, −0.004), or the missing mark."""
    if not _finite(value):
        return MISSING
    text = f"{float(value):+,.{digits}f}{suffix}"
    return text.replace("-", "−")


def fmt_pct(value: Any, digits: int = 1) -> str:
    """Return a fraction (0.0123) as a percentage (1.2%), or the missing mark."""
    if not _finite(value):
        return MISSING
    return f"{float(value) * 100:.{digits}f}%"


def fmt_si(value: Any, unit: str = "") -> str:
    """Return 2.07e11 as 207.0B (T, B, M, K), or the missing mark."""
    if not _finite(value):
        return MISSING
    v = float(value)
    for name, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.2f}{name}{unit}"
    return f"{v:.0f}{unit}"


def fmt_duration(seconds: Any) -> str:
    """Return seconds as '2 h 05 min' / '12 min', or the missing mark."""
    if not _finite(seconds):
        return MISSING
    minutes = round(float(seconds) / 60)
    if minutes >= 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{minutes} min"


def fmt_time(value: Any) -> str:
    """Return an ISO time or datetime as '2026-09-30 03:17 UTC', or the missing mark."""
    when = value if isinstance(value, datetime) else parse_time(value)
    return when.strftime("%Y-%m-%d %H:%M UTC") if when else MISSING


def md_text(value: Any) -> Markup:
    """Return untrusted text escaped for both HTML and Markdown (one line).

    Quotes stay quotes: this is text, never an attribute value, and markupsafe's `&#34;`
    would have its `#` escaped for Markdown and show as typed (`&#34;`) on the page.
    """
    text = " ".join(str(value).split())
    html = str(escape(text)).replace(QUOT, '"').replace(APOS, "'")
    out = _MD_SPECIAL.sub(r"\\\1", html)
    return Markup("".join(_ENTITIES.get(ch, ch) for ch in out))


def href(url: Any) -> str:
    """Return an http(s) URL made safe for a Markdown link target, else ''."""
    text = str(url or "").strip()
    if not re.match(r"^https?://[^\s<>]+$", text):
        return ""
    return text.replace("(", "%28").replace(")", "%29")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def front_matter(meta: Mapping[str, Any]) -> str:
    """Return a YAML front matter block; `date` stays an unquoted YAML timestamp."""
    meta = dict(meta)
    when = meta.pop("date", None)
    body = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    if when is not None:
        # mkdocs-rss-plugin wants a real datetime in page.meta: an unquoted timestamp.
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(when, datetime) else str(when)
        body = f"date: {stamp}\n" + body
    return f"---\n{body}---\n\n"


def environment() -> Environment:
    """Return the Jinja environment of chronicle's page templates."""
    env = Environment(
        loader=PackageLoader("chronicle.render", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=True,
        keep_trailing_newline=True,
    )
    env.filters.update(num=fmt_num, signed=fmt_signed, pct=fmt_pct, si=fmt_si,
                       duration=fmt_duration, time=fmt_time, md=md_text, href=href)
    return env


_ENV: Environment | None = None


def render(template: str, **context: Any) -> str:
    """Render one template of chronicle/render/templates with `context`."""
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV.get_template(template).render(**context)
