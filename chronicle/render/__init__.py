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
from jinja2 import Environment, PackageLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

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
)
from chronicle.render.i18n import Language

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


def anchor(label: Any, url: Any, **data: str) -> Markup:
    """Return an HTML link to an http(s) `url` (with `data-*` attributes from `data`:
    `versionurl` -> data-versionurl), or the label alone when `url` is not one: the one way
    a URL from outside (an archive, GitHub, a record) is written into a page, escaped for
    HTML whatever engine or language renders it. `label` is escaped unless Markup."""
    text = label if isinstance(label, Markup) else escape(label)
    target = href(url)
    if not target:
        return Markup(text)
    attrs = "".join(f' data-{name}="{escape(value)}"' for name, value in data.items())
    return Markup(f'<a href="{escape(target)}"{attrs}>{text}</a>')


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


def _lang(context: Context) -> Language:
    lang = context.get("lang")
    if not isinstance(lang, Language):
        raise TypeError(f"template {context.name}: rendered without a `lang` (a Language)")
    return lang


# What `{% trans %}` and `_()` call in a template, as Jinja's own "newstyle" gettext does
# (the translation is markup-safe only where the template autoescapes; `%(name)s`
# placeholders are filled from the keywords, escaped), with the words of the `lang` the
# template is rendered with: the language is an argument of `render`, never a global.
@pass_context
def _gettext(context: Context, message: str, **variables: Any) -> str:
    text = _lang(context).gettext(message)
    if context.eval_ctx.autoescape:
        text = Markup(text)
    return text % variables  # always a format string, as Jinja's own: "%%" is "%"


@pass_context
def _ngettext(context: Context, singular: str, plural: str, num: int,
              **variables: Any) -> str:
    variables.setdefault("num", num)
    text = _lang(context).ngettext(singular, plural, num)
    if context.eval_ctx.autoescape:
        text = Markup(text)
    return text % variables


@pass_context
def _pgettext(context: Context, ctx: str, message: str, **variables: Any) -> str:
    variables.setdefault("context", ctx)
    text = _lang(context).pgettext(ctx, message)
    if context.eval_ctx.autoescape:
        text = Markup(text)
    return text % variables


def _by_language(method: str) -> Any:
    """Return a filter calling `Language.<method>` of the template's `lang`."""
    @pass_context
    def apply(context: Context, value: Any, *args: Any) -> Any:
        return getattr(_lang(context), method)(value, *args)
    return apply


def _with_language(fn: Any) -> Any:
    """Return a filter calling `fn(value, lang)` with the template's `lang`."""
    @pass_context
    def apply(context: Context, value: Any) -> Any:
        return fn(value, _lang(context))
    return apply


def link(text: Any, url: str, raw: bool = False) -> Markup:
    """Return a link: Markdown (`[text](url)`, which mkdocs checks and rewrites), or, with
    `raw`, an HTML anchor that mkdocs leaves alone: a translated edition's link to a file
    only the English record publishes (its JSON, the API, CITATION.cff), which is not part
    of that edition's build. `text` is escaped unless it is already Markup."""
    label = text if isinstance(text, Markup) else escape(text)
    if raw:
        return Markup(f'<a href="{escape(url)}">{label}</a>')
    return Markup(f"[{label}]({url})")


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
        # (`"open" | term(...)`), and a compiled template is kept for the process: no
        # filter may be folded whose output depends on the language it is rendered in.
        optimized=False,
    )
    # {% trans %} blocks are msgids with their whitespace collapsed (as extracted).
    env.policies["ext.i18n.trimmed"] = True
    env.newstyle_gettext = True  # type: ignore[attr-defined]
    env.globals.update(gettext=_gettext, _=_gettext, ngettext=_ngettext, pgettext=_pgettext)
    env.filters.update(num=fmt_num, signed=fmt_signed, pct=fmt_pct, points=fmt_points,
                       count=fmt_count, plain=fmt_plain, md=md_text, href=href)
    env.globals["link"] = link
    env.filters.update({name: _by_language(method) for name, method in (
        ("si", "si"), ("si_signed", "si_signed"), ("usd", "usd"), ("plural", "plural"),
        ("duration", "duration"), ("time", "time"), ("date", "date"), ("hours", "hours"),
        ("term", "term"), ("said", "said"))})
    # What the record says in generated sentences, said in the template's language from
    # the record's facts (render/record_text.py); text people wrote stays as written.
    from chronicle.render import record_text

    env.filters.update({name: _with_language(fn) for name, fn in (
        ("what", record_text.failure_text), ("title", record_text.day_title),
        ("reason", record_text.check_reason), ("method", record_text.claim_method))})
    return env


_ENV: Environment | None = None


__all__ = ["MISSING", "anchor", "fmt_count", "fmt_date", "fmt_duration", "fmt_hours", "fmt_month",
           "fmt_num", "fmt_pct", "fmt_plain", "fmt_points", "fmt_si", "fmt_si_signed",
           "fmt_signed", "fmt_time", "fmt_usd", "fmt_zh", "front_matter", "href", "md_text",
           "render"]


def render(template: str, lang: Language, **context: Any) -> str:
    """Render one template of chronicle/render/templates in `lang` with `context`."""
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV.get_template(template).render(lang=lang, **context)
