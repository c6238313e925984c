"""Chart builders: numpy series -> Vega-Lite spec dicts (Altair), static SVG, offline JS.

Specs are pure functions of their inputs: same arrays, same JSON bytes. Data goes in as
`alt.Data(values=rows)` (frames go through narwhals and hit MaxRowsError at 5k rows).
Colours stay neutral and the background transparent, because the page applies its own
light/dark vega-embed theme at display time; only `render_svg` paints a white background.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, ParamSpec, TypeVar

import altair as alt
import numpy as np
from altair.utils.schemapi import debug_mode

P = ParamSpec("P")
R = TypeVar("R")

EVENT_KINDS = ("restart", "fork", "failure", "config", "phase", "gap", "context", "mixture",
               "budget")
# Mid-tone Tableau colours read on both white and slate backgrounds; series and events
# draw from disjoint sets so an orange rule is never mistaken for an orange curve.
SERIES_COLORS = ("#4c78a8", "#72b7b2", "#9d755d", "#ff9da6", "#bab0ac")
EVENT_COLORS = {
    "restart": "#f58518",
    "fork": "#b279a2",
    "failure": "#e45756",
    "config": "#54a24b",
    "phase": "#eeca3b",
    "gap": "#9d9d9d",
    "context": "#17becf",
    "mixture": "#bcbd22",
    "budget": "#ce6dbd",
}
NEUTRAL = "#888888"
SVG_WIDTH = 720
Y_DIGITS = 6  # significant digits kept for y: far below a pixel, and it halves the spec
X_DIGITS = 10
HOVER_LAYER = "chronicle-hover"  # invisible tooltip targets; dropped from static renders
MIN_SERIES_POINTS = 400
TIME_UNIT: Final = "utcyearmonthdatehoursminutes"


@dataclass(frozen=True)
class Event:
    """A mark drawn on the curves at `x` (same units as the series: epoch seconds or step)."""

    x: float
    kind: str  # one of EVENT_KINDS
    label: str

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"event kind {self.kind!r} is not one of {', '.join(EVENT_KINDS)}")


def downsample_minmax(
    x: np.ndarray, y: np.ndarray, target: int = 2000
) -> tuple[np.ndarray, np.ndarray]:
    """Return at most `target` finite points, x ascending, keeping endpoints and bucket extremes."""
    xs = np.asarray(x, dtype=float).ravel()
    ys = np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} != {ys.size}")
    if target < 2:
        raise ValueError(f"target must be at least 2, got {target}")
    ok = np.isfinite(xs) & np.isfinite(ys)
    order = np.argsort(xs[ok], kind="stable")
    xs, ys = xs[ok][order], ys[ok][order]
    if xs.size:
        # A restart re-logs steps: for a repeated x the value given last wins (stable sort).
        last = np.ones(xs.size, dtype=bool)
        last[:-1] = xs[1:] != xs[:-1]
        xs, ys = xs[last], ys[last]
    n = xs.size
    if n <= target:
        return xs, ys
    buckets = (target - 2) // 2
    if buckets < 1:
        return xs[[0, -1]], ys[[0, -1]]
    # Buckets split the x range (not the index range) so they match screen columns and a
    # gap in logging stays a gap instead of being stretched over many buckets.
    inner_x, inner_y = xs[1:-1], ys[1:-1]
    span = xs[-1] - xs[0]
    b = np.minimum(((inner_x - xs[0]) / span * buckets).astype(np.int64), buckets - 1)
    by_bucket_then_y = np.lexsort((inner_y, b))
    sorted_b = b[by_bucket_then_y]
    starts = np.flatnonzero(np.r_[True, sorted_b[1:] != sorted_b[:-1]])
    ends = np.r_[starts[1:], sorted_b.size] - 1
    keep = np.unique(np.r_[0, by_bucket_then_y[starts] + 1, by_bucket_then_y[ends] + 1, n - 1])
    return xs[keep], ys[keep]


def _num(value: float, digits: int) -> float | int:
    rounded = float(f"{value:.{digits}g}")
    if rounded.is_integer() and abs(rounded) < 2**53:
        return int(rounded)
    return rounded


def _x(value: float, time: bool) -> float | int:
    # Epoch milliseconds: Vega reads numbers on a temporal field as ms since the epoch.
    return round(value * 1000.0) if time else _num(value, X_DIGITS)


def _thin(n: int, target: int) -> np.ndarray:
    if n <= target:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, target).round().astype(np.int64))


def _band_rows(
    name: str, band: tuple[np.ndarray, np.ndarray, np.ndarray], target: int, time: bool, log: bool
) -> list[dict[str, Any]]:
    bx, lo, hi = (np.asarray(a, dtype=float).ravel() for a in band)
    if not bx.size == lo.size == hi.size:
        raise ValueError(f"band {name!r}: x, low and high differ in length")
    ok = np.isfinite(bx) & np.isfinite(lo) & np.isfinite(hi)
    if log:
        ok &= (lo > 0) & (hi > 0)
    order = np.argsort(bx[ok], kind="stable")
    bx, lo, hi = bx[ok][order], lo[ok][order], hi[ok][order]
    # Bands are smooth forecasts: an even stride keeps them faithful.
    idx = _thin(bx.size, target)
    return [
        {"s": name, "x": _x(bx[i], time), "lo": _num(lo[i], Y_DIGITS), "hi": _num(hi[i], Y_DIGITS)}
        for i in idx
    ]


def _series_rows(
    series: dict[str, tuple[np.ndarray, np.ndarray]], per_series: int, time: bool, log: bool
) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]]]:
    rows: list[dict[str, Any]] = []
    meta: dict[str, dict[str, int]] = {}
    for name, (sx, sy) in series.items():
        xa, ya = np.asarray(sx, dtype=float).ravel(), np.asarray(sy, dtype=float).ravel()
        if log:
            # Log scales cannot place y <= 0; dropping them beats an invalid spec.
            with np.errstate(invalid="ignore"):
                ya = np.where(ya > 0, ya, np.nan)
        dx, dy = downsample_minmax(xa, ya, per_series)
        rows.extend(
            {"s": name, "x": _x(a, time), "y": _num(b, Y_DIGITS)}
            for a, b in zip(dx.tolist(), dy.tolist(), strict=True)
        )
        meta[name] = {"points_in": int(ya.size), "points_out": int(dx.size)}
    return rows, meta


def _x_encoding(time: bool, title: str) -> alt.X:
    if time:
        return alt.X("x:T", title=title or None, scale=alt.Scale(type="utc"))
    return alt.X("x:Q", title=title or None, scale=alt.Scale(zero=False))


def _x_tooltip(time: bool, title: str) -> alt.Tooltip:
    if time:
        return alt.Tooltip("x:T", timeUnit=TIME_UNIT, title="time (UTC)")
    return alt.Tooltip("x:Q", title=title or "x", format=",")


def _without_debug_validation(func: Callable[P, R]) -> Callable[P, R]:
    """Build charts with Altair's debug mode off: it validates every schema object as it
    is constructed (a quarter of a chart's build time), and the spec is the same without."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with debug_mode(False):
            return func(*args, **kwargs)

    return wrapper


@_without_debug_validation
def line_chart(
    series: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    y_title: str,
    x_kind: str = "time",
    x_title: str = "",
    events: Sequence[Event] = (),
    highlight: tuple[float, float] | None = None,
    bands: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    log_y: bool = False,
    y_format: str | None = None,
    rules: Sequence[tuple[float, str]] = (),
    target: int = 2000,
    width: int | str = "container",
    height: int = 260,
) -> dict[str, Any]:
    """Return a Vega-Lite spec: downsampled lines plus events, highlight, bands and rules."""
    if x_kind not in ("time", "quantitative"):
        raise ValueError(f"x_kind must be 'time' or 'quantitative', got {x_kind!r}")
    time = x_kind == "time"
    # `target` is the whole chart's budget, shared by its lines and bands, so a chart with
    # several series stays as light as one with a single series.
    shares = max(len(series) + len(bands or {}), 1)
    per_line = max(target // shares, min(target, MIN_SERIES_POINTS))
    rows, meta = _series_rows(series, per_line, time, log_y)
    band_rows = [
        r for name, b in (bands or {}).items() for r in _band_rows(name, b, per_line, time, log_y)
    ]
    usermeta = {"chronicle": {"x_kind": x_kind, "series": meta}}
    size: dict[str, Any] = {"width": width, "height": height}
    head = alt.TitleParams(title, anchor="start")
    if not rows and not band_rows:
        empty = (
            alt.Chart(alt.Data(values=[{"t": "no data"}]))
            .mark_text(color=NEUTRAL, fontSize=14)
            .encode(text="t:N")
        )
        return _finish(empty, {"title": head, **size, "usermeta": usermeta})

    xs = [r["x"] for r in rows + band_rows]
    lo_x, hi_x = min(xs), max(xs)
    names = list(dict.fromkeys([r["s"] for r in rows] + [r["s"] for r in band_rows]))
    # Rows carry the series' index, not its name (a W&B key repeated 2,000 times is a
    # third of the spec); each layer maps the index back with a calculate transform.
    index = {name: i for i, name in enumerate(names)}
    for r in rows + band_rows:
        r["i"] = index[r.pop("s")]
    name_expr = f"{json.dumps(names)}[datum.i]"
    color = alt.Color(
        "s:N",
        title=None,
        scale=alt.Scale(domain=names, range=list(SERIES_COLORS)),
        # Opaque stroke symbols: the band layers would otherwise fade the legend.
        legend=alt.Legend(orient="top", symbolType="stroke", symbolOpacity=1, symbolStrokeWidth=2)
        if len(names) > 1
        else None,
    )
    x_enc = _x_encoding(time, x_title)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    y_axis = alt.Axis(format=y_format) if y_format else alt.Axis()
    layers: list[alt.Chart] = []

    # Layers are drawn bottom-up: the shaded day, bands, lines, thresholds, events, hover.
    if highlight is not None:
        a, b = sorted(_x(v, time) for v in highlight)
        a, b = max(a, lo_x), min(b, hi_x)
        if a < b:
            layers.append(
                alt.Chart(alt.Data(values=[{"x": a, "x2": b}]))
                .mark_rect(color=NEUTRAL, opacity=0.15)
                .encode(x=x_enc, x2="x2")
            )
    if band_rows:
        layers.append(
            alt.Chart(alt.Data(name="bands"))
            .transform_calculate(s=name_expr)
            .mark_area(opacity=0.2)
            .encode(x=x_enc, y=alt.Y("lo:Q", scale=y_scale), y2="hi", color=color)
        )
    if rows:
        tooltip = [alt.Tooltip("s:N", title="series"), _x_tooltip(time, x_title)]
        tooltip.append(alt.Tooltip("y:Q", title=y_title, format=y_format or ".4~g"))
        line_y = alt.Y("y:Q", title=y_title, scale=y_scale, axis=y_axis)
        base = alt.Chart(alt.Data(name="series")).transform_calculate(s=name_expr)
        layers.append(base.mark_line(strokeWidth=1.5).encode(x=x_enc, y=line_y, color=color))
        hover = base.mark_circle(size=40, opacity=0).encode(x=x_enc, y=line_y, tooltip=tooltip)
        layers.append(hover.properties(name=HOVER_LAYER))
    rule_rows = [
        {"y": _num(v, Y_DIGITS), "label": lab}
        for v, lab in rules
        if np.isfinite(v) and (v > 0 or not log_y)
    ]
    if rule_rows:
        rule_base = alt.Chart(alt.Data(values=rule_rows))
        layers.append(
            rule_base.mark_rule(color=NEUTRAL, strokeDash=[6, 4]).encode(
                y=alt.Y("y:Q", scale=y_scale), tooltip=[alt.Tooltip("label:N", title="threshold")]
            )
        )
        layers.append(
            rule_base.mark_text(color=NEUTRAL, align="right", baseline="bottom", dy=-2).encode(
                y=alt.Y("y:Q", scale=y_scale), x=alt.XValue("width"), text="label:N"
            )
        )
    event_rows = [
        {"x": _x(e.x, time), "kind": e.kind, "label": e.label}
        for e in sorted(events, key=lambda e: (e.x, e.kind, e.label))
        if np.isfinite(e.x)
    ]
    # Events outside the plotted data would stretch the axis (a run-wide list on a day chart).
    event_rows = [r for r in event_rows if lo_x <= r["x"] <= hi_x]
    if event_rows:
        kinds = [k for k in EVENT_KINDS if any(r["kind"] == k for r in event_rows)]
        layers.append(
            alt.Chart(alt.Data(values=event_rows))
            .mark_rule(strokeWidth=1.5, opacity=0.8)
            .encode(
                x=x_enc,
                stroke=alt.Stroke(
                    "kind:N",
                    title="events",
                    scale=alt.Scale(domain=kinds, range=[EVENT_COLORS[k] for k in kinds]),
                    legend=alt.Legend(orient="top"),
                ),
                tooltip=[
                    alt.Tooltip("kind:N", title="event"),
                    alt.Tooltip("label:N", title="what"),
                    _x_tooltip(time, x_title),
                ],
            )
        )
    # Events use the stroke channel so their scale and legend stay apart from the series'.
    layered = alt.layer(*layers)
    datasets = {"series": rows, "bands": band_rows}
    return _finish(layered, {"title": head, **size, "usermeta": usermeta}, datasets)


def _finish(
    chart: alt.TopLevelMixin,
    props: dict[str, Any],
    datasets: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    # One properties() call: each one deep-copies every layer (Altair's main cost here).
    spec: dict[str, Any] = chart.properties(background="transparent", **props).to_dict(
        validate=False
    )
    # The big tables join after to_dict: Altair walks every row it is given (~0.2 ms per
    # row), and named datasets let the line and its hover layer share one copy.
    used = {name: values for name, values in (datasets or {}).items() if values}
    if used:
        spec["datasets"] = used
    return spec
