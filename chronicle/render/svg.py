"""Static renders of chart specs (SVG, PNG) and the offline vega bundle (render stage).

vl-convert draws each Vega-Lite spec as an SVG that shows without JavaScript (print,
no-JS readers), a PNG of it for feed readers that show no SVG, and bundles vega +
vega-lite + vega-embed for the site, so no chart needs a CDN. Pure: the same spec gives
the same bytes.
"""

from __future__ import annotations

import atexit
import functools
import importlib.metadata
import multiprocessing
import os
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from chronicle import draw
from chronicle.atomic import write_atomic
from chronicle.render.vega import HOVER_LAYER, NARROW_WIDTH, SVG_WIDTH, VEGA_LITE

_pool: ProcessPoolExecutor | None = None
_background: ProcessPoolExecutor | None = None


@functools.cache
def _vl_version() -> str | None:
    import vl_convert as vlc

    # Render with the Vega-Lite release the specs are written for.
    return VEGA_LITE if VEGA_LITE in vlc.get_vegalite_versions() else None


def static_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Return `spec` as drawn statically: a fixed width, on white, no hover layer.

    A new top level over the same nested values (nothing below it is changed): a deep
    copy of a day's four specs took ~7% of a demo night.
    """
    static = dict(spec)
    # vl-convert has no container to measure, and feed readers show the image on white.
    # A chart drawn for a narrow box names its width (usermeta.chronicle.static_width):
    # scaled down from 720 px its labels would be too small to read.
    if not isinstance(static.get("width"), int | float):
        static["width"] = static_width(spec)
        if static["width"] < NARROW_WIDTH:
            config = dict(static.get("config") or {})
            config["legend"] = {**(config.get("legend") or {}), "columns": 2}
            static["config"] = config
    static["background"] = "white"
    if "layer" in static:
        static["layer"] = [lay for lay in static["layer"] if lay.get("name") != HOVER_LAYER]
    return static


def static_width(spec: Mapping[str, Any]) -> int:
    """Return the width a chart's static SVG is drawn at (px)."""
    meta = spec.get("usermeta")
    ours = meta.get("chronicle") if isinstance(meta, Mapping) else None
    width = ours.get("static_width") if isinstance(ours, Mapping) else None
    return width if isinstance(width, int) and width > 0 else SVG_WIDTH


def render_svg(spec: dict[str, Any]) -> str:
    """Return a static SVG of `spec` at a fixed width on white, with no network access."""
    return draw.svg(static_spec(spec), _vl_version())


def render_png(svg: str) -> bytes:
    """Return a PNG of a static SVG (for feed readers that show no SVG), compressed."""
    return draw.png(svg)


def javascript_bundle() -> str:
    """Return the offline vega + vega-lite + vega-embed bundle (sets window.vegaEmbed)."""
    import vl_convert as vlc

    version = importlib.metadata.version("vl-convert-python")
    path = draw.cache_dir() / f"vega-bundle-{version}-vl{_vl_version() or 'latest'}.js"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        if "vegaEmbed" in text:
            return text
    # None selects the default snippet (window.vegaEmbed etc.); the stub marks it required.
    text = vlc.javascript_bundle(None, vl_version=_vl_version())  # type: ignore[arg-type]
    if "vegaEmbed" not in text:
        raise RuntimeError(f"vl-convert {version} returned a bundle without vegaEmbed")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))  # a concurrent build never reads half of it
    return text


_WARM_SPEC: dict[str, Any] = {"mark": "point", "data": {"values": [{"x": 0}]},
                              "encoding": {"x": {"field": "x", "type": "quantitative"}}}


def _pool_workers() -> int:
    return min(2, os.cpu_count() or 1)


def _statics_pool() -> ProcessPoolExecutor | None:
    """Return the worker pool for a day's static renders (None on one core)."""
    global _pool
    if _pool is None and _pool_workers() >= 2:
        # spawn, not fork: vl-convert's JavaScript runtime runs threads of its own.
        _pool = ProcessPoolExecutor(_pool_workers(),
                                    mp_context=multiprocessing.get_context("spawn"))
        atexit.register(_pool.shutdown)
    return _pool


def stop_sealing_workers() -> None:
    """Stop the workers that draw sealed days' charts (each holds vl-convert's JavaScript
    runtime, ~190 MB) when this process seals no more days; a later drawing starts its own."""
    global _pool
    if _pool is not None:
        _pool.shutdown()
        _pool = None


def stop_workers() -> None:
    """Stop every render worker this process started. A multiprocessing child must call
    it before it returns: its atexit hooks never run, and multiprocessing joins its
    children first, so idle workers would keep it alive forever."""
    global _background
    stop_sealing_workers()
    if _background is not None:
        _background.shutdown()
        _background = None


def warm_up() -> None:
    """Start the render workers now (a process start and vl-convert's JavaScript runtime,
    ~1 s) so a snapshot's fetch and analysis hide it; returns at once."""
    pool = _statics_pool()
    if pool is not None:
        for _ in range(_pool_workers()):
            pool.submit(draw.svg, _WARM_SPEC, _vl_version())


def render_statics(charts: dict[str, dict[str, Any]], png: Collection[str] = (),
                   ) -> tuple[dict[str, str], dict[str, bytes]]:
    """Return the static SVG of each chart and a PNG of those named in `png`."""
    return start_statics(charts, png)()


Statics = tuple[dict[str, str], dict[str, bytes]]


def start_statics(charts: dict[str, dict[str, Any]], png: Collection[str] = (),
                  ) -> Callable[[], Statics]:
    """Start drawing the static SVG of each chart (and a PNG of those named in `png`);
    return a function that waits for them: ({name: SVG}, {name: PNG}).

    vl-convert holds the GIL, so the charts render in worker processes (one per core,
    started once per process) while the caller goes on (sealing a day computes its
    figures and verdicts meanwhile); the output is the same bytes as a serial render.
    """
    global _pool
    names = list(charts)
    pool = _statics_pool() if len(charts) >= 2 else None
    futures: dict[str, Future[tuple[str, bytes | None]]] = {}
    if pool is not None:
        try:
            # The costliest first (a PNG is a second render), so the last to finish is small.
            for name in sorted(names, key=lambda n: n not in png):
                futures[name] = pool.submit(draw.svg_and_png, static_spec(charts[name]),
                                            _vl_version(), name in png)
        except BrokenProcessPool:
            _pool, futures = None, {}

    def wait() -> Statics:
        global _pool
        done: dict[str, tuple[str, bytes | None]] = {}
        try:
            done = {n: futures[n].result() for n in names} if futures else {}
        except BrokenProcessPool:
            _pool = None
        if not done:
            done = {n: draw.svg_and_png(static_spec(charts[n]), _vl_version(), n in png)
                    for n in names}
        svgs = {n: done[n][0] for n in names}
        pngs = {n: image for n in names if (image := done[n][1]) is not None}
        return svgs, pngs

    return wait


def render_svgs(charts: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Return the static SVG of each chart, keyed like `charts`."""
    return render_statics(charts)[0]


def start_svgs(charts: Mapping[str, dict[str, Any]]) -> Callable[[], dict[str, str]]:
    """Start drawing the static SVG of each chart in the background; return a function
    that waits for them (keyed like `charts`).

    The workers leave one core to the caller (a build converting Markdown meanwhile);
    the bytes are those of `render_svg`.
    """
    global _background
    if not charts:
        return dict
    if _pool is None and _background is None:
        workers = max(1, (os.cpu_count() or 1) - 1)
        _background = ProcessPoolExecutor(workers,
                                          mp_context=multiprocessing.get_context("spawn"))
        atexit.register(_background.shutdown)
    # A process that sealed days has warm sealing workers: no new ones start (the demo
    # stops them before its build, `stop_sealing_workers`, to give their memory back).
    pool = _pool or _background
    assert pool is not None
    names = list(charts)
    vl = _vl_version()
    futures = [pool.submit(draw.svg, static_spec(charts[n]), vl) for n in names]

    def wait() -> dict[str, str]:
        global _pool, _background
        try:
            return {n: f.result() for n, f in zip(names, futures, strict=True)}
        except BrokenProcessPool:
            _pool = _background = None
            return {n: render_svg(charts[n]) for n in names}

    return wait
