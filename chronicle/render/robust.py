"""Robust Links on a day page's outbound links: what each pointed at and when.

A link out of a sealed page (an issue, a comment, a pull request on GitHub) cites a
resource that keeps changing. Robust Links (robustlinks.mementoweb.org/spec) annotate the
anchor with `data-originalurl` (the resource), `data-versiondate` (the date of its state
the page shows: the snapshot the day's figures and threads are as of) and, where an
archived copy exists, `data-versionurl` (the memento).

The anchor is written as inline HTML, not as a Markdown link with an attr_list: inline
HTML is passed through untouched by Python-Markdown in every engine, whereas the text of
an attribute list is first run through the inline patterns (a URL's `*` or a
magic-link extension would rewrite it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from chronicle.render import anchor, href

# Characters a URL may hold that mean something to a template-ish plugin: kept out of
# the page as percent-escapes (the URL they name is the same).
_TEMPLATE_CHARS = str.maketrans({"{": "%7B", "}": "%7D"})


@dataclass(frozen=True)
class LinkVersion:
    """When the linked states were captured (ISO 8601, UTC), and the mementos known for
    outbound URLs (URL -> memento URL)."""

    date: str
    mementos: Mapping[str, str] = field(default_factory=dict)


def link_version(day: Mapping[str, Any],
                 mementos: Mapping[str, str] | None = None) -> LinkVersion | None:
    """Return the Robust Links version of a day's outbound links; None for a day sealed
    before its JSON recorded `figures_as_of` (chronicle.day_page/16), whose links stay plain
    in every language, as its sealed page has them."""
    when = day.get("figures_as_of")
    if not when:
        return None
    return LinkVersion(str(when), dict(mementos or {}))


def outbound_link(label: Any, url: Any, version: LinkVersion | None) -> Markup:
    """Return an anchor to an outside http(s) URL with its Robust Links attributes (a
    plain Markdown link without a `version`); '' when the URL is not one."""
    target = href(url).translate(_TEMPLATE_CHARS)
    if not target:
        return Markup("")
    if version is None:
        text = label if isinstance(label, Markup) else escape(label)
        return Markup(f"[{text}]({target})")
    data = {"originalurl": target, "versiondate": version.date}
    memento = href(version.mementos.get(str(url).strip(), "")).translate(_TEMPLATE_CHARS)
    if memento:
        data["versionurl"] = memento
    return anchor(label, target, **data)
