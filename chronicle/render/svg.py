"""Static renders of chart specs (SVG, PNG) and the offline vega bundle (render stage).

vl-convert draws each Vega-Lite spec as an SVG that shows without JavaScript (print,
no-JS readers), a PNG of it for feed readers that show no SVG, and bundles vega +
vega-lite + vega-embed for the site, so no chart needs a CDN. Pure: the same spec gives
the same bytes.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future
from typing import Any

from chronicle import draw
from chronicle.atomic import write_atomic
from chronicle.executor import ChildGone, Executor
from chronicle.render.vega import HOVER_LAYER, NARROW_WIDTH, SVG_WIDTH, VEGA_LITE


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


def _sealing_workers(executor: Executor | None) -> int:
    """Return how many render workers seal days: one per core, at most two (0: draw in
    this process)."""
    if executor is None or not executor.uses("sealing-workers"):
        return 0
    return min(2, executor.cores or 1)


def warm_up(executor: Executor | None) -> None:
    """Start the sealing render workers now (a process start and vl-convert's JavaScript
    runtime, ~1 s) so a snapshot's fetch and analysis hide it; returns at once."""
    if executor is None or not executor.uses("warm-up"):
        return
    pool = executor.render_pool(_sealing_workers(executor))
    if pool is not None:
        for _ in range(pool.size):
            pool.submit(draw.svg, _WARM_SPEC, _vl_version())


Statics = tuple[dict[str, str], dict[str, bytes]]


def render_statics(charts: dict[str, dict[str, Any]], png: Collection[str] = (),
                   executor: Executor | None = None) -> Statics:
    """Return the static SVG of each chart and a PNG of those named in `png`."""
    return start_statics(charts, png, executor)()


def start_statics(charts: dict[str, dict[str, Any]], png: Collection[str] = (),
                  executor: Executor | None = None) -> Callable[[], Statics]:
    """Start drawing the static SVG of each chart (and a PNG of those named in `png`);
    return a function that waits for them: ({name: SVG}, {name: PNG}).

    vl-convert holds the GIL, so with an `executor` the charts render in its render
    workers (one per core, started once per command) while the caller goes on (sealing a
    day computes its figures and verdicts meanwhile); the output is the same bytes as a
    serial render in this process, which is what happens without workers.
    """
    names = list(charts)
    pool = (executor.render_pool(_sealing_workers(executor))
            if executor is not None and len(charts) >= 2 else None)
    futures: dict[str, Future[tuple[str, bytes | None]]] = {}
    if pool is not None:
        # The costliest first (a PNG is a second render), so the last to finish is small.
        for name in sorted(names, key=lambda n: n not in png):
            futures[name] = pool.submit(draw.svg_and_png, static_spec(charts[name]),
                                        _vl_version(), name in png)

    def wait() -> Statics:
        done: dict[str, tuple[str, bytes | None]] = {}
        with contextlib.suppress(ChildGone):  # a worker killed: draw them here
            done = {n: futures[n].result() for n in names} if futures else {}
        if not done:
            done = {n: draw.svg_and_png(static_spec(charts[n]), _vl_version(), n in png)
                    for n in names}
        svgs = {n: done[n][0] for n in names}
        pngs = {n: image for n in names if (image := done[n][1]) is not None}
        return svgs, pngs

    return wait


def render_svgs(charts: dict[str, dict[str, Any]],
                executor: Executor | None = None) -> dict[str, str]:
    """Return the static SVG of each chart, keyed like `charts`."""
    return render_statics(charts, executor=executor)[0]


def start_svgs(charts: Mapping[str, dict[str, Any]],
               executor: Executor | None = None) -> Callable[[], dict[str, str]]:
    """Start drawing the static SVG of each chart in the background; return a function
    that waits for them (keyed like `charts`).

    The executor's render workers draw them (started here with one worker per core but
    one, which is left to the caller: a build converting Markdown meanwhile; a command
    that sealed days draws with its sealing workers); the bytes are those of `render_svg`,
    which draws them when the wait comes without workers.
    """
    if not charts:
        return dict
    names = list(charts)
    pool = None
    if executor is not None and executor.uses("background-svgs"):
        pool = executor.running_pool() or executor.render_pool(max(1, (executor.cores or 1) - 1))
    if pool is None:
        return lambda: {n: render_svg(charts[n]) for n in names}
    vl = _vl_version()
    futures = [pool.submit(draw.svg, static_spec(charts[n]), vl) for n in names]

    def wait() -> dict[str, str]:
        try:
            return {n: f.result() for n, f in zip(names, futures, strict=True)}
        except ChildGone:  # a worker killed: draw them here
            return {n: render_svg(charts[n]) for n in names}

    return wait
