"""Static SVG renders of chart specs and the offline vega bundle (render stage).

vl-convert draws each Vega-Lite spec as an SVG that shows without JavaScript (feed readers,
print, no-JS readers) and bundles vega + vega-lite + vega-embed for the site, so no chart
needs a CDN. Pure: the same spec gives the same bytes.
"""

from __future__ import annotations

import atexit
import copy
import importlib.metadata
import multiprocessing
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import altair as alt

from chronicle.render.charts import HOVER_LAYER, SVG_WIDTH

_pool: ProcessPoolExecutor | None = None


def _vl_version() -> str | None:
    import vl_convert as vlc

    # Render with the Vega-Lite release Altair wrote the spec for ("v6.4.1" -> "6.4").
    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return wanted if wanted in vlc.get_vegalite_versions() else None


def render_svg(spec: dict[str, Any]) -> str:
    """Return a static SVG of `spec` at a fixed width on white, with no network access."""
    import vl_convert as vlc

    static = copy.deepcopy(spec)
    # vl-convert has no container to measure, and feed readers show the image on white.
    if not isinstance(static.get("width"), int | float):
        static["width"] = SVG_WIDTH
    static["background"] = "white"
    if "layer" in static:
        static["layer"] = [lay for lay in static["layer"] if lay.get("name") != HOVER_LAYER]
    svg: str = vlc.vegalite_to_svg(static, vl_version=_vl_version(), allowed_base_urls=[])
    return svg


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chronicle"


def javascript_bundle() -> str:
    """Return the offline vega + vega-lite + vega-embed bundle (sets window.vegaEmbed)."""
    import vl_convert as vlc

    version = importlib.metadata.version("vl-convert-python")
    path = _cache_dir() / f"vega-bundle-{version}-vl{_vl_version() or 'latest'}.js"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        if "vegaEmbed" in text:
            return text
    # None selects the default snippet (window.vegaEmbed etc.); the stub marks it required.
    text = vlc.javascript_bundle(None, vl_version=_vl_version())  # type: ignore[arg-type]
    if "vegaEmbed" not in text:
        raise RuntimeError(f"vl-convert {version} returned a bundle without vegaEmbed")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a concurrent or interrupted build never reads half a bundle.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is public data
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return text


def render_svgs(charts: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Return the static SVG of each chart, keyed like `charts`.

    vl-convert holds the GIL, so a day's charts render in worker processes (one per
    core, started once per process); the output is the same bytes as a serial render.
    """
    global _pool
    workers = min(2, os.cpu_count() or 1)
    if len(charts) < 2 or workers < 2:
        return {name: render_svg(spec) for name, spec in charts.items()}
    if _pool is None:
        # spawn, not fork: vl-convert's JavaScript runtime runs threads of its own.
        _pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        atexit.register(_pool.shutdown)
    names = list(charts)
    try:
        return dict(zip(names, _pool.map(render_svg, [charts[n] for n in names]), strict=True))
    except BrokenProcessPool:
        _pool = None
        return {name: render_svg(spec) for name, spec in charts.items()}
