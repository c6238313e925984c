"""The static SVG of every chart a build publishes (site stage).

Pages publish chart specs only (render/embed.py). The plugin starts drawing their SVGs in
worker processes when it adds the generated files and writes them into the site after
mkdocs has built the pages: the drawing runs beside the Markdown conversion instead of
before it. The SVGs are referenced from raw HTML (`<img src>`), which mkdocs neither
validates nor rewrites, so they need not be mkdocs files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chronicle.render.embed import SPEC_SUFFIX
from chronicle.render.svg import render_statics, start_svgs


def chart_specs(files: Mapping[str, str | bytes]) -> dict[str, dict[str, Any]]:
    """Return {path of the static SVG: spec} for every chart spec among `files`."""
    return {path[: -len(SPEC_SUFFIX)] + ".svg": json.loads(content)
            for path, content in files.items()
            if path.endswith(SPEC_SUFFIX) and isinstance(content, str)}


def with_svgs(files: Mapping[str, str | bytes]) -> dict[str, str | bytes]:
    """Return `files` plus the static SVG of each chart spec (drawn now, in parallel)."""
    return {**files, **render_statics(chart_specs(files))[0]}


class Drawing:
    """The SVGs of one build, drawn in the background and written after the pages."""

    def __init__(self, files: Mapping[str, str | bytes]) -> None:
        self._wait: Callable[[], dict[str, str]] = start_svgs(chart_specs(files))
        self._svgs: dict[str, str] | None = None

    def svgs(self) -> dict[str, str]:
        """Wait for the drawings; return {path of the SVG: its text}."""
        if self._svgs is None:
            self._svgs = self._wait()
        return self._svgs

    def write(self, site_dir: Path) -> int:
        """Wait for the drawings, write them under `site_dir`; return how many."""
        svgs = self.svgs()
        for path, svg in svgs.items():
            target = site_dir / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(svg, encoding="utf-8")
        return len(svgs)
