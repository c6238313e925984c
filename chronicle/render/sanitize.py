"""Untrusted issue text (GitHub Markdown written by strangers) -> one safe HTML block.

Each comment is converted on its own with Python-Markdown and then cleaned with nh3 (an
allow-list sanitiser), so nothing in it can reach the page around it: an unclosed code
fence or a stray `</div>` ends where the comment ends, `<script>` and `javascript:` /
`data:` links are dropped, and braces become entities so no template-ish plugin ever
sees `{{ ... }}` or `{% ... %}`. The result is emitted as a raw HTML block, which
Markdown passes through untouched.
"""

from __future__ import annotations

import functools
import html
import re

import markdown
import nh3
from markupsafe import Markup, escape

from chronicle.render.i18n import Language

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "em", "h4", "h5",
    "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "td": {"align"},
                      "th": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
MAX_CHARS = 200_000  # a pathological comment is cut, not allowed to stall the build

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HEADING = re.compile(r"<(/?)h([1-6])\b", re.IGNORECASE)
# Images would make readers' browsers fetch from third parties: keep them as links.
_IMG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r'\b(src|alt)="([^"]*)"')
_ENTITY_MAP = str.maketrans({"{": "&#123;", "}": "&#125;", "`": "&#96;", "~": "&#126;"})
_EXTENSIONS = ["fenced_code", "tables", "sane_lists", "nl2br"]


def clean_html(html: str) -> str:
    """Return `html` reduced to the allow-list, with braces as entities."""
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="nofollow noopener noreferrer ugc",
        strip_comments=True,
    )
    # Fence markers become entities too: Markdown's fenced-code preprocessor runs before
    # raw HTML blocks are set aside, so a ``` line inside <pre> could open a fence.
    return cleaned.translate(_ENTITY_MAP)


def _image_as_link(match: re.Match[str]) -> str:
    attrs = dict(_ATTR.findall(match.group(0)))
    label = attrs.get("alt") or "image"
    src = attrs.get("src", "")
    return f'<a href="{src}">[image: {label}]</a>' if src else f"[image: {label}]"


def _demote(match: re.Match[str]) -> str:
    # A comment's "# Title" must not outrank the page's own headings.
    level = min(6, int(match.group(2)) + 3)
    return f"<{match.group(1)}h{level}"


@functools.lru_cache(maxsize=4096)
def comment_html(text: str) -> Markup:
    """Return the sanitised HTML of one untrusted Markdown comment (remembered: a thread
    page, the day pages and every language's edition show the same comments)."""
    text = (text or "")[:MAX_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    text = _COMMENT.sub("", text)
    html = markdown.markdown(text, extensions=_EXTENSIONS, output_format="html")
    html = _IMG.sub(_image_as_link, html)
    html = _HEADING.sub(_demote, html)
    return Markup(clean_html(html).strip())


def comment_block(text: str, lang: Language, css_class: str = "chronicle-comment") -> Markup:
    """Return a comment as a self-contained raw HTML block for a Markdown page (`lang`
    says an empty one is empty)."""
    body = comment_html(text) or Markup("<p><em>" + escape(lang.gettext("(empty)"))
                                        + "</em></p>")
    other = lang.quoted(text) if text else None  # words in another language: said so
    marked = f' lang="{other}"' if other else ""
    return Markup(f'<div class="{escape(css_class)}"{marked}>\n{body}\n</div>')


def plain_text(text: str, limit: int = 300) -> str:
    """Return untrusted text as one plain line (no markup at all), cut to `limit`."""
    stripped = nh3.clean(_COMMENT.sub("", text or ""), tags=set())
    line = " ".join(stripped.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def title_text(text: str, limit: int = 200) -> str:
    """Return untrusted text as a page title: plain, one line, no angle brackets."""
    return html.unescape(plain_text(text, limit)).replace("<", "‹").replace(">", "›")
