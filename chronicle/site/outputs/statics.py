"""The static SVG of every chart a build publishes (site stage).

Pages publish chart specs only (render/embed.py). Either engine's adapter has their SVGs
drawn by the build's render workers (chronicle/executor.py) when the build first needs them
(mkdocs: before it converts the pages; Zensical: while it builds in its own process), stops
the workers as soon as they are drawn (their memory goes back before the build's peak), and
writes the SVGs into the site after the engine has built the pages
(documentation/pages/how-it-works.md). The SVGs are referenced from raw HTML (`<img src>`),
which mkdocs neither validates nor rewrites, so they need not be mkdocs files.

An SVG is a pure function of its spec, the chronicle code (render/svg.py's width,
background and hover-layer strip), vl-convert and the Vega-Lite release it draws with, so
each is kept in `.cache/chronicle/svgs/` (site/build_cache.py) under the sha256 of those:
a build whose specs an earlier build drew starts no worker process at all. That cache is
the executor's `svg-cache` speed-up (bench/speedups.py times the row without it). vl-convert
measures Latin text with the Liberation Sans it ships and Chinese with the machine's Noto
CJK faces alone (chronicle/workers/draw.py), so an SVG is the same bytes on any machine
that has fonts-noto-cjk; the fonts are not in the key (hashing ~100 MB of fonts would cost
more than most builds save).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from chronicle.executor import Executor
from chronicle.render.embed import SPEC_SUFFIX
from chronicle.render.svg import build_workers, render_svgs
from chronicle.render.vega import VEGA_LITE
from chronicle.site.build_cache import FORMAT, BuildCache, code_fingerprint, entry_key


def _spec_texts(files: Mapping[str, object]) -> dict[str, str]:
    """Return {path of the static SVG: spec JSON} for every chart spec among `files`."""
    return {path[: -len(SPEC_SUFFIX)] + ".svg": content for path, content in files.items()
            if path.endswith(SPEC_SUFFIX) and isinstance(content, str)}


def chart_specs(files: Mapping[str, str | bytes]) -> dict[str, dict[str, Any]]:
    """Return {path of the static SVG: spec} for every chart spec among `files`."""
    return {path: json.loads(text) for path, text in _spec_texts(files).items()}


def with_svgs(files: Mapping[str, str | bytes], executor: Executor | None = None
              ) -> dict[str, str | bytes]:
    """Return `files` plus the static SVG of each chart spec (drawn now, in the
    `executor`'s render workers if one is given)."""
    return {**files, **render_svgs(chart_specs(files), executor, build_workers(executor))}


@cache
def _svg_prefix() -> str:
    """Return what every SVG depends on beyond its spec (once per process)."""
    return "\n".join([f"format={FORMAT}", "kind=svg", f"code={code_fingerprint()}",
                      f"vl-convert={metadata.version('vl-convert-python')}",
                      f"vega-lite={VEGA_LITE}"])


def svg_key(spec_text: str) -> str:
    """Return the cache key of the SVG of a published spec (its canonical JSON,
    render/embed.py `spec_json`: the bytes the SVG is drawn from)."""
    return entry_key(_svg_prefix(), files={"spec": spec_text.encode()})


class Drawing:
    """The SVGs of one build's charts, drawn when first asked for, written after the pages.

    With a `cache`, the SVGs an earlier build drew from the same specs are read instead,
    and only the others are drawn (`drawn` says how many: 0 starts no worker), by the
    `executor`'s render workers (`build_workers`; in this process without an executor),
    which the caller stops once they are drawn: vl-convert's runtime (~190 MB a worker)
    goes back before the build's memory peaks. Not beside the build's own work: drawing
    them in the background while mkdocs converted the pages (`background-svgs`) fell under
    the 10% a process must earn (documentation/pages/how-it-works.md).
    """

    def __init__(self, files: Mapping[str, object], cache: BuildCache | None = None,
                 executor: Executor | None = None) -> None:
        texts = _spec_texts(files)
        if executor is not None and not executor.uses("svg-cache"):
            cache = None  # the bench's row without it
        self._order, self._cache = list(texts), cache
        self._keys: dict[str, str] = {}
        self._kept: dict[str, str] = {}
        if cache is not None:
            for path, text in texts.items():
                self._keys[path] = key = svg_key(text)
                kept = cache.get_text(key)
                if kept is not None:
                    self._kept[path] = kept
        self._todo = {p: json.loads(t) for p, t in texts.items() if p not in self._kept}
        self.drawn = len(self._todo)
        self._executor = executor
        self._svgs: dict[str, str] | None = None

    def svgs(self) -> dict[str, str]:
        """Draw what was not kept (the first time); return {path of the SVG: its text}."""
        if self._svgs is None:
            drawn = (render_svgs(self._todo, self._executor, build_workers(self._executor))
                     if self._todo else {})
            if self._cache is not None:
                for path, svg in drawn.items():
                    self._cache.put_text(self._keys[path], svg)
            both = {**self._kept, **drawn}
            self._svgs = {path: both[path] for path in self._order}
        return self._svgs

    def write(self, site_dir: Path) -> int:
        """Write the SVGs under `site_dir` (drawn now if they were not); return how many."""
        svgs = self.svgs()
        for path, svg in svgs.items():
            target = site_dir / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(svg, encoding="utf-8")
        return len(svgs)
