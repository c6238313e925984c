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
from collections.abc import Collection, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from chronicle.cachekey import cache_secret, sign, signed
from chronicle.errors import ChronicleError
from chronicle.executor import ChildGone, Executor
from chronicle.files.atomic import write_atomic
from chronicle.render.vega import HOVER_LAYER, SVG_WIDTH, VEGA_LITE
from chronicle.workers import draw


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


BUNDLE_KIND = "vega-bundle"  # what a signature of the bundle is a signature of


def javascript_bundle() -> str:
    """Return the offline vega + vega-lite + vega-embed bundle (sets window.vegaEmbed).

    vl-convert makes it (a few seconds); it is kept in the per-user cache folder, signed
    like every cache entry (chronicle/cachekey.py): the script every published page
    loads is read back only under this user's key, never because of what it says, and
    made again otherwise (a forged, damaged or foreign copy, or no key to check it with).
    """
    import vl_convert as vlc

    version = importlib.metadata.version("vl-convert-python")
    # Not `.js`: an older chronicle on the same machine takes any `vega-bundle-*.js` there
    # that says vegaEmbed, and would serve this one, signature line and all, as a script.
    path = draw.cache_dir() / f"vega-bundle-{version}-vl{_vl_version() or 'latest'}.signed"
    secret, _ = cache_secret()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if secret is not None and not path.is_symlink() and path.is_file():
            mac, _, body = path.read_bytes().partition(b"\n")
            if signed(secret, BUNDLE_KIND, body, mac.decode("ascii", "replace")):
                return body.decode("utf-8")
    # None selects the default snippet (window.vegaEmbed etc.); the stub marks it required.
    text = vlc.javascript_bundle(None, vl_version=_vl_version())  # type: ignore[arg-type]
    if "vegaEmbed" not in text:
        raise RuntimeError(f"vl-convert {version} returned a bundle without vegaEmbed")
    if secret is not None:
        body = text.encode("utf-8")
        with contextlib.suppress(OSError):  # not kept: made again next time
            path.parent.mkdir(parents=True, exist_ok=True)
            # Whole or not at all: a concurrent build never reads half of it.
            write_atomic(path, sign(secret, BUNDLE_KIND, body).encode() + b"\n" + body)
    return text


def build_workers(executor: Executor | None) -> int:
    """Return how many render workers a build draws with (0 without an executor: in this
    process): one per core but one, which the build beside it or mkdocs keeps, and at
    least one, even on one core. A worker gives vl-convert's JavaScript runtime (~190 MB)
    back when the build stops it after its drawings (`Executor.stop_render_workers`);
    drawn in the build's process, the runtime would stay to the build's end, its peak."""
    return 0 if executor is None else max(1, (executor.cores or 1) - 1)


def seal_workers(executor: Executor | None) -> int:
    """Return how many render workers the demo's nights draw their sealed charts with (0:
    in the sealing process): one per core (`seal-workers`). The nights' process has only
    a day's figures and pages to make beside the drawings, and vl-convert's calls are
    most of a night (a Chinese chart's text measured through its Han font most of all)."""
    if executor is None or not executor.uses("seal-workers"):
        return 0
    return executor.cores or 1


Statics = tuple[dict[str, str], dict[str, bytes]]


def render_statics(charts: dict[str, dict[str, Any]], png: Collection[str] = (),
                   executor: Executor | None = None, workers: int | None = None) -> Statics:
    """Return the static SVG of each chart and a PNG of those named in `png`."""
    return start_statics(charts, png, executor, workers).result()


@dataclass
class Pending:
    """Static renders started by `start_statics`: in render workers (`futures`), or
    drawn in this process when `result` is first asked for (no futures)."""

    charts: Mapping[str, dict[str, Any]]
    png: Collection[str]
    futures: dict[str, Future[tuple[str, bytes | None]]]

    def result(self) -> Statics:
        """Wait for the drawings; return ({name: SVG}, {name: PNG}), keyed like the charts."""
        names = list(self.charts)
        done: dict[str, tuple[str, bytes | None]] = {}
        with contextlib.suppress(ChildGone):  # a worker killed: draw them here
            done = {n: self.futures[n].result() for n in names} if self.futures else {}
        if not done:
            done = {n: draw.svg_and_png(static_spec(self.charts[n]), _vl_version(),
                                        n in self.png) for n in names}
        svgs = {n: done[n][0] for n in names}
        pngs = {n: image for n in names if (image := done[n][1]) is not None}
        return svgs, pngs


def start_statics(charts: Mapping[str, dict[str, Any]], png: Collection[str] = (),
                  executor: Executor | None = None, workers: int | None = None) -> Pending:
    """Start drawing the static SVG of each chart (and a PNG of those named in `png`);
    `result` waits for them.

    vl-convert holds the GIL, so with an `executor` and `workers` the charts render in
    that many of its render workers while the caller goes on; the output is the same
    bytes as a serial render in this process, which is what happens without them (a
    snapshot seals its days' charts so: two workers drawing them while the day's figures
    were computed fell under the 10% a process must earn; documentation/pages/benchmarks.md).
    """
    names = list(charts)
    pool = (executor.render_pool(workers) if executor is not None and workers and names
            else None)
    futures: dict[str, Future[tuple[str, bytes | None]]] = {}
    if pool is not None:
        # The costliest first (a PNG is a second render), so the last to finish is small.
        for name in sorted(names, key=lambda n: n not in png):
            futures[name] = pool.submit(draw.svg_and_png, static_spec(charts[name]),
                                        _vl_version(), name in png)
    return Pending(charts, png, futures)


def render_svgs(charts: dict[str, dict[str, Any]], executor: Executor | None = None,
                workers: int | None = None) -> dict[str, str]:
    """Return the static SVG of each chart, keyed like `charts`."""
    return render_statics(charts, executor=executor, workers=workers)[0]


def require_han_font(languages: Collection[str], what: str) -> None:
    """Stop (ChronicleError, exit 2) before `what` draws a Chinese chart on a machine with
    no Han font: vl-convert would draw every Chinese character as an empty box, silently,
    into files that may be sealed. `languages`: the site's (chronicle.yml site.languages)."""
    if "zh" not in languages or draw.han_fonts():
        return
    where = ", ".join(str(p) for p in draw.font_roots()) or "none"
    raise ChronicleError(
        f"chronicle.yml: site.languages has zh, but this machine has no Chinese font (Noto "
        f"Sans CJK, looked for in: {where}), so {what} would draw every Chinese character of "
        f"its charts as an empty box. Install Debian's {draw.HAN_PACKAGE} (`sudo apt-get "
        f"install {draw.HAN_PACKAGE}`: the Makefile and the nightly action do), or set "
        f"{draw.FONT_DIRS} to a folder holding NotoSansCJK-Regular.ttc; or build English "
        "only (site.languages: [en])")
