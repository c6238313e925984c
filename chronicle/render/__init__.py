"""Jinja2 templates (StrictUndefined) -> Markdown pages, and the filters they share.

Every template is HTML-bound Markdown, so autoescape is on for all of them: a value from
outside (an issue title, a run name) reaches the page as text, never as markup. Trusted
fragments we build ourselves (sanitised comment HTML, chart embeds) are `Markup`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import yaml
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from chronicle.render import i18n
from chronicle.render.formats import (
    MISSING,
    fmt_count,
    fmt_date,
    fmt_duration,
    fmt_hours,
    fmt_month,
    fmt_num,
    fmt_pct,
    fmt_plain,
    fmt_points,
    fmt_si,
    fmt_si_signed,
    fmt_signed,
    fmt_time,
    fmt_usd,
    fmt_zh,
    plural,
)

# Characters that Markdown (or attr_list / macros-like plugins) would interpret in text.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#+!-])")
_ENTITIES = {"{": "&#123;", "}": "&#125;", "|": "&#124;"}
QUOT, APOS = "&#34;", "&#39;"  # how markupsafe escapes quotes


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
        extensions=["jinja2.ext.i18n"],
        # Jinja's optimizer computes a filter of a constant when it compiles a template
        # (`"open" | term(...)`), and a compiled template is kept for the process: the
        # language it was first compiled in would stay in every later edition's pages.
        optimized=False,
    )
    # {% trans %} blocks are msgids with their whitespace collapsed (as extracted), and
    # look up the language of the build being rendered (render/i18n.py).
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext)
    env.filters.update(num=fmt_num, signed=fmt_signed, pct=fmt_pct, points=fmt_points,
                       si=fmt_si, si_signed=fmt_si_signed, count=fmt_count, plain=fmt_plain,
                       usd=fmt_usd, plural=plural, duration=fmt_duration, time=fmt_time,
                       date=fmt_date, hours=fmt_hours, md=md_text, href=href)
    env.globals["language"] = i18n.language
    # Imported here: both modules format with the filters above.
    from chronicle.render.terms import term
    from chronicle.render.translate import translate_text

    env.filters.update(term=term, sealed=translate_text)
    return env


_ENV: Environment | None = None


__all__ = ["MISSING", "fmt_count", "fmt_date", "fmt_duration", "fmt_hours", "fmt_month",
           "fmt_num", "fmt_pct", "fmt_plain", "fmt_points", "fmt_si", "fmt_si_signed",
           "fmt_signed", "fmt_time", "fmt_usd", "fmt_zh", "front_matter", "href", "md_text",
           "plural", "render"]


def render(template: str, **context: Any) -> str:
    """Render one template of chronicle/render/templates with `context`."""
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV.get_template(template).render(**context)
