"""How a chart sits on a page: a figure holding the static SVG, which the site's script
swaps for the interactive vega-embed view (render stage, pure).

Pages publish a chart's spec (`<stem>.vl.json`); the build draws the static `<stem>.svg`
of every published spec in its render workers, or reads it from the SVG cache
(site/outputs/statics.py).

The SVG's `alt` and the live chart's accessible name are the spec's `description`: what
the chart shows and its latest value, so a reader who cannot see it still gets both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from typing import Any

from markupsafe import Markup, escape

SPEC_SUFFIX = ".vl.json"  # every published spec gets a static <stem>.svg


def chart_title(spec: Mapping[str, Any], name: str) -> str:
    """Return a chart's title from its spec (str or {"text": ...}), else its name."""
    title = spec.get("title")
    if isinstance(title, Mapping):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(t) for t in title)
    return str(title) if title else name.replace("_", " ")


def chart_alt(spec: Mapping[str, Any], name: str) -> str:
    """Return a chart's text alternative: its description, else its title (both in the
    language the chart was built in)."""
    text = spec.get("description")
    return str(text) if text else chart_title(spec, name)


def chart_embed(spec_url: str, svg_url: str, alt: str, extra_class: str = "",
                first_paint: bool = False) -> Markup:
    """Return the chart container: a static SVG that our JS swaps for vega-embed.

    A chart loads as the reader nears it (`loading="lazy"`), except one that is the page's
    largest paint on a phone (`first_paint`: the home page's first card), which is asked
    for at once and first: lazily, a phone on slow 4G painted it only after every script."""
    cls = f"chronicle-chart {extra_class}".strip()
    loading = 'loading="eager" fetchpriority="high"' if first_paint else 'loading="lazy"'
    return Markup(
        f'<div class="{escape(cls)}" data-spec="{escape(spec_url)}">'
        f'<img src="{escape(svg_url)}" alt="{escape(alt)}" {loading}></div>'
    )


def spec_json(spec: Mapping[str, Any]) -> str:
    """Return a spec as the compact, sorted JSON the site serves."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)


def publish(out: MutableMapping[str, str | bytes], stem: str, spec: Mapping[str, Any],
            name: str, extra_class: str = "", url_prefix: str = "",
            first_paint: bool = False) -> Markup:
    """Write `stem`.vl.json into `out`; return the page's embed of it and its `stem`.svg.

    `url_prefix` leads from the page to the site root ("../" for a page in a folder);
    `first_paint`: see chart_embed.
    """
    out[f"{stem}{SPEC_SUFFIX}"] = spec_json(spec)
    return chart_embed(f"{url_prefix}{stem}.vl.json", f"{url_prefix}{stem}.svg",
                       chart_alt(spec, name), extra_class, first_paint)
