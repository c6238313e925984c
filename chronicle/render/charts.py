"""Line charts by the field's conventions: numpy series -> an Altair layer chart -> its
Vega-Lite spec (render stage, pure).

Lines are downsampled (min/max, spikes survive) and broken where logging stopped;
downtime is shaded spans, events (forks, restarts, phase, context or mixture switches,
config changes) are labelled markers, alert lines come from the caller (the configured
health checks), and one legend explains series, markers and spans once. Axes and
tooltips use the site's number formats (2.5M tok/s, 3.69T tokens, UTC times). A noisy
series can carry a smoothed (EMA) line over its raw data, as W&B draws it. Every spec has
a `description`: what it shows and the latest value, the chart's text alternative.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import altair as alt
import numpy as np

from chronicle.render import vega as v
from chronicle.render.i18n import N_, Language
from chronicle.render.marks import (
    Axis,
    Event,
    Options,
    Span,
    background_layers,
    event_layers,
    rule_layers,
)
from chronicle.render.vega import HOVER_LAYER, SERIES_COLORS, SVG_WIDTH, downsample_minmax

__all__ = ["HOVER_LAYER", "SERIES_COLORS", "SVG_WIDTH", "Axis", "Event", "Options", "Span",
           "downsample_minmax", "line_chart", "smoothed"]
MIN_SERIES_POINTS = 400
SMOOTHED = N_("{series} (smoothed)")
# At most this many axis labels (Vega would put one every 40 px: 17 on a 720 px static
# SVG, which a phone shows shrunk to 390 px, and every label is a measured text to draw).
X_TICKS, Y_TICKS = 8, 6
# The raw data under its smoothed line: faint, yet a spike in it (a grad norm of 3.4 where
# the run sits at 0.3, drawn across a failure's rule) still reads as data: 2:1 on white,
# 1.8:1 on slate (at 0.3, 1.5:1, and it went unseen).
RAW_UNDER_SMOOTHED = 0.5


def smoothed(name: str, lang: Language) -> str:
    """Return the name of a series' smoothed (EMA) line ("train loss (smoothed)")."""
    return lang.gettext(SMOOTHED).format(series=name)


def _series_rows(series: Mapping[str, tuple[np.ndarray, np.ndarray]], per_series: int,
                 x: Axis, y: Axis, opts: Options, names: list[str],
                 lang: Language) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, (sx, sy) in series.items():
        xa, ya = np.asarray(sx, dtype=float).ravel(), np.asarray(sy, dtype=float).ravel()
        with np.errstate(invalid="ignore"):
            if y.log:
                ya = np.where(ya > 0, ya, np.nan)  # a log scale cannot place y <= 0
            if y.domain:
                # Outside a fitted domain is not drawn (vl-convert numbers clip paths per
                # render, so clipping would make a chart's SVG depend on what came before).
                ya = np.where((ya >= y.domain[0]) & (ya <= y.domain[1]), ya, np.nan)
        share = per_series // 2 if name in opts.smooth else per_series
        # Every row logged, once per x: where logging stopped is read from these, never
        # from the rows drawn (downsampled rows are further apart than any gap).
        fx, fy = downsample_minmax(xa, ya, len(xa) + 2)
        if not fx.size:
            continue
        resumed = _resumed(fx, opts.gap_seconds)
        dx, dy = downsample_minmax(fx, fy, max(share, 2))
        names.append(name)
        rows.extend(_with_breaks(names.index(name), dx, dy, resumed, x))
        if name in opts.smooth:
            window = max(2.0, fx.size / 200.0)  # ~0.5% of the span, like W&B at one zoom
            sm = v.ema(fx, fy, 1.0 - 1.0 / window)
            idx = v.thin(fx.size, max(share, 2))
            label = smoothed(name, lang)
            names.append(label)
            rows.extend(_with_breaks(names.index(label), fx[idx], sm[idx], resumed, x))
    return rows


def _resumed(xs: np.ndarray, gap: float | None) -> np.ndarray:
    """Return the x of each logged row that follows a stop in logging (`xs`: ascending,
    every row of one series).

    A stop is a wait longer than `gap` and than the series' own cadence (1.5 times its
    median step): a daily figure, one row a day, is not broken at every row, and is broken
    where a day is missing.
    """
    if not gap or xs.size < 2:
        return np.empty(0)
    steps = np.diff(xs)
    limit = max(gap, 1.5 * float(np.median(steps)))
    return xs[1:][steps > limit]


def _with_breaks(i: int, dx: np.ndarray, dy: np.ndarray, resumed: np.ndarray,
                 x: Axis) -> list[dict[str, Any]]:
    """Return the rows of one line, a null between two rows drawn that have a stop in
    logging (`resumed`) between them: Vega breaks the line there, so no straight segment
    crosses downtime."""
    # How many stops end at or before each row: a row after more of them than the row
    # before it follows a stop.
    after = np.searchsorted(resumed, dx, side="right").tolist()
    out: list[dict[str, Any]] = []
    prev: float | None = None
    for k, (a, b) in enumerate(zip(dx.tolist(), dy.tolist(), strict=True)):
        if prev is not None and after[k] > after[k - 1]:
            out.append({"i": i, "x": v.x_value((a + prev) / 2, x.time), "y": None})
        out.append({"i": i, "x": v.x_value(a, x.time), "y": v.num(b)})
        prev = a
    return out


def _band_rows(bands: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]], target: int,
               x: Axis, y: Axis, names: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, band in bands.items():
        bx, lo, hi = (np.asarray(a, dtype=float).ravel() for a in band)
        if not bx.size == lo.size == hi.size:
            raise ValueError(f"band {name!r}: x, low and high differ in length")
        ok = np.isfinite(bx) & np.isfinite(lo) & np.isfinite(hi)
        if y.log:
            ok &= (lo > 0) & (hi > 0)
        order = np.argsort(bx[ok], kind="stable")
        bx, lo, hi = bx[ok][order], lo[ok][order], hi[ok][order]
        if y.domain:
            lo, hi = np.clip(lo, *y.domain), np.clip(hi, *y.domain)
        if not bx.size:
            continue
        if name not in names:
            names.append(name)
        i = names.index(name)
        rows.extend({"i": i, "x": v.x_value(bx[k], x.time), "lo": v.num(lo[k]),
                     "hi": v.num(hi[k])} for k in v.thin(bx.size, target))  # smooth: a stride
    return rows


def _x_enc(x: Axis, span: float, lang: Language) -> alt.X:
    if x.time:
        return alt.X("x:T", scale=alt.Scale(type="utc"),
                     axis=v.time_axis(x.title, span / 1000.0, lang))
    return alt.X("x:Q", scale=alt.Scale(zero=False, nice=False),
                 axis=v.axis(x.kind, x.title, lang, tickCount=X_TICKS))


def _y_scale(y: Axis) -> alt.Scale:
    if y.log:
        return alt.Scale(type="log")
    if y.domain:
        return alt.Scale(zero=False, domain=[v.num(y.domain[0]), v.num(y.domain[1])])
    return alt.Scale(zero=False)


def _tooltip(x: Axis, y: Axis, lang: Language) -> tuple[dict[str, str], list[alt.Tooltip]]:
    _ = lang.gettext
    calc = v.label_calc(y.kind, "y", lang, y.unit)
    tips = [alt.Tooltip("k:N", title=_("series"))]
    if x.time:
        tips.append(alt.Tooltip("x:T", timeUnit="utcyearmonthdatehoursminutes",
                                title=_("time (UTC)")))
    else:
        calc |= v.label_calc(x.kind, "x", lang, x.unit)
        tips.append(alt.Tooltip("x_text:N", title=x.title or "x"))
    tips.append(alt.Tooltip("y_text:N", title=y.title or _("value")))
    return calc, tips


def _color(names: list[str], opts: Options, spans: Sequence[Span], x: Axis, lo_x: float,
           hi_x: float, lang: Language) -> alt.Color:
    """Return the colour encoding every layer shares: one scale, so one legend explains the
    series, the shaded day, downtime and each kind of marker once."""
    _ = lang.gettext
    extra: list[tuple[str, str]] = []
    if opts.highlight is not None:
        extra.append((_(v.HIGHLIGHT[0]), v.HIGHLIGHT[1]))
    if spans:
        extra.append((_(v.DOWNTIME[0]), v.DOWNTIME[1]))
    for e in opts.events:
        label, colour, _labelled = v.event_style(e.kind)
        label = _(label)
        if label not in [n for n, _c in extra] and np.isfinite(e.x) \
                and lo_x <= v.x_value(e.x, x.time) <= hi_x:
            extra.append((label, colour))
    domain = names + [n for n, _c in extra]
    raw_of = {smoothed(n, lang): n for n in opts.smooth}
    raw_names = [n for n in names if n not in raw_of]
    # A smoothed line takes its raw series' colour; the legend names the series once.
    colours = [SERIES_COLORS[raw_names.index(raw_of.get(n, n)) % len(SERIES_COLORS)]
               for n in names]
    shown = raw_names + [n for n, _c in extra]
    legend = v.legend(len(shown))
    if legend is not None and len(shown) < len(domain):
        legend["values"] = shown
    return alt.Color("k:N", scale=v.color_scale(domain, colours + [c for _n, c in extra]),
                     legend=legend)


@v.unchecked
def line_chart(series: Mapping[str, tuple[np.ndarray, np.ndarray] | None], *, title: str,
               description: str, x: Axis, y: Axis, lang: Language,
               options: Options | None = None, subtitle: str | None = None,
               target: int = 2000, height: int = 260) -> dict[str, Any]:
    """Return a Vega-Lite spec (an Altair layer chart): downsampled lines plus spans,
    highlight, bands, rules, events; its own words (legend, tooltips, the smoothing
    switch) in `lang`."""
    opts = options or Options()
    present = {k: xy for k, xy in series.items() if xy is not None}
    shares = max(len(present) + len(opts.bands), 1)
    # `target` is the whole chart's budget, shared by its lines and bands.
    per_line = max(target // shares, min(target, MIN_SERIES_POINTS))
    names: list[str] = []
    rows = _series_rows(present, per_line, x, y, opts, names, lang)
    band_rows = _band_rows(opts.bands, per_line, x, y, names)
    meta = {"chronicle": {"x_kind": "time" if x.time else "quantitative",
                          "series": {k: {"points_in": int(np.asarray(xy[0]).size),
                                         "points_out": sum(1 for r in rows if r["y"] is not None
                                                           and names[r["i"]] == k)}
                                     for k, xy in present.items()}}}
    if not rows and not band_rows:
        spec = v.no_data(title, description, lang, height)
        spec["usermeta"] = meta
        return spec
    xs = [r["x"] for r in rows + band_rows]
    lo_x, hi_x = min(xs), max(xs)
    spans = [s for s in opts.spans if s.x1 > s.x0]
    color = _color(names, opts, spans, x, lo_x, hi_x, lang)
    x_enc = _x_enc(x, hi_x - lo_x, lang)
    data = v.Datasets()
    layers = background_layers(opts, spans, x, lo_x, hi_x, color, x_enc, data, lang)
    # Where an alert line's name is written (the chart's last quarter), which side of it
    # the data runs on.
    turn = (lo_x + 0.75 * (hi_x - lo_x)) / (1000.0 if x.time else 1.0)
    tail = [np.asarray(sy, dtype=float)[np.asarray(sx, dtype=float) >= turn]
            for sx, sy in present.values()] if opts.rules else []
    drawn = [r["y"] for r in rows if r["y"] is not None]
    alerts = rule_layers(opts.rules, y, data, lang, tail, min(drawn) if drawn else None)
    events = event_layers(opts, x, lo_x, hi_x, color, x_enc, data, lang)
    # Markers and alert lines under the data, their names over it: a spike at a failure's
    # step stays in sight instead of under the failure's rule.
    layers += events.under + alerts.under
    # Rows carry a series' index, not its name: a 2,000-point spec stays small.
    name_of = {"k": f"{json.dumps(names)}[datum.i]"}
    if band_rows:
        layers.append(alt.Chart(data.add("bands", band_rows)).transform_calculate(
            **name_of).mark_area(opacity=0.2).encode(
            x=x_enc, y=alt.Y("lo:Q", scale=_y_scale(y)), y2="hi", color=color))
    if rows:
        layers += _line_layers(names, opts, x, y, x_enc, color, name_of,
                               data.add("series", rows), lang)
    layers += alerts.over + events.over
    # A checkbox under the chart switches the smoothed lines (`smoothed` in the layers'
    # conditions): a parameter of the whole chart.
    params = [alt.VariableParameter(name="smoothed", value=True, bind=alt.BindCheckbox(
        input="checkbox", name=lang.gettext("Smoothed (EMA) ")))
              ] if any(smoothed(n, lang) in names for n in opts.smooth) else []
    chart = v.layered(layers, title, description, lang, subtitle, height, usermeta=meta,
                      params=params or alt.Undefined)
    return v.to_spec(chart, data)


def _line_layers(names: list[str], opts: Options, x: Axis, y: Axis, x_enc: alt.X,
                 color: alt.Color, name_of: dict[str, str], series: alt.NamedData,
                 lang: Language) -> list[alt.Chart]:
    y_enc = alt.Y("y:Q", scale=_y_scale(y), axis=v.axis(y.kind, y.title, lang,
                                                        tickCount=Y_TICKS))
    base = alt.Chart(series).transform_calculate(**name_of)
    # A null y breaks the line (no segment over downtime).
    gaps: Final = "break-paths-show-domains"
    pairs = [(n, smoothed(n, lang)) for n in opts.smooth if smoothed(n, lang) in names]
    smooth_lines, has_smooth = [s for _n, s in pairs], [n for n, _s in pairs]
    if not smooth_lines:
        layers = [base.mark_line(strokeWidth=1.5, invalid=gaps).encode(x=x_enc, y=y_enc,
                                                                        color=color)]
    else:
        # Raw data stays drawn, faint under its smoothed line while smoothing is on.
        is_smooth = f"indexof({json.dumps(smooth_lines)}, datum.k) >= 0"
        faint = f"smoothed && indexof({json.dumps(has_smooth)}, datum.k) >= 0"
        layers = [
            base.transform_filter(f"!({is_smooth})").mark_line(
                strokeWidth=1.5, invalid=gaps).encode(
                x=x_enc, y=y_enc, color=color,
                opacity=alt.OpacityValue(1, condition={"test": faint,
                                                       "value": RAW_UNDER_SMOOTHED})),
            base.transform_filter(is_smooth).mark_line(strokeWidth=2, invalid=gaps).encode(
                x=x_enc, y=y_enc, color=color,
                opacity=alt.OpacityValue(0, condition={"test": "smoothed", "value": 1})),
        ]
    calc, tips = _tooltip(x, y, lang)
    layers.append(base.transform_filter("isValid(datum.y)").transform_calculate(**calc)
                  .mark_circle(size=40, opacity=0).encode(x=x_enc, y=alt.Y("y:Q"),
                                                          tooltip=tips)
                  .properties(name=HOVER_LAYER))
    return layers
