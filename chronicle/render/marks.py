"""What a line chart draws besides its lines: the chart's axes and options, shaded spans
(downtime, the day), alert lines and event markers (render stage, pure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import altair as alt
import numpy as np

from chronicle.render import vega as v
from chronicle.render.i18n import N_, Language

MAX_LABELLED = 6  # more labelled markers than this would overlap: tooltips only
LABEL_ROWS, LABEL_STEP = 3, 12
LABEL_PX = 130  # a marker's name is cut to this width (its tooltip has it whole)
# Markers' names show on a chart at least this wide: on a phone (~300 px of plot) three
# rows of 130 px names overwrite each other; the legend and tooltips still name them.
NAMES_SHOWN = "width >= 480 ? 1 : 0"


@dataclass(frozen=True)
class Event:
    """A marker at `x` (same units as the series: epoch seconds, step or tokens)."""

    x: float
    kind: str  # vega.EVENT_STYLES; unknown kinds are drawn neutral
    label: str


@dataclass(frozen=True)
class Span:
    """A shaded span [x0, x1] (downtime): drawn as one band, never one rule per gap."""

    x0: float
    x1: float
    label: str = ""  # what the span was (a failure's text, in the chart's language)


@dataclass(frozen=True)
class Axis:
    """How an axis shows values: title, display kind (si, fraction, percent, number, sci)."""

    title: str | None
    kind: str = "number"
    unit: str = ""
    time: bool = False
    domain: tuple[float, float] | None = None  # fitted domain (values outside are not drawn)
    log: bool = False


class Layers(NamedTuple):
    """What a chart draws of its markers or alert lines: the marks, drawn under the data,
    and their names, drawn over everything.

    A data line drawn under a marker's rule was hidden by it exactly where it mattered: a
    failure's rule stands at the step the loss or the gradient norm spiked.
    """

    under: list[alt.Chart]
    over: list[alt.Chart]


@dataclass(frozen=True)
class Options:
    """Everything a line chart draws besides its lines."""

    events: Sequence[Event] = ()
    spans: Sequence[Span] = ()
    highlight: tuple[float, float] | None = None
    bands: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    rules: Sequence[tuple[float, str]] = ()
    smooth: Sequence[str] = ()  # series drawn raw + EMA
    gap_seconds: float | None = None  # break lines where logging stopped longer (time axes)


def background_layers(opts: Options, spans: Sequence[Span], x: Axis, lo: float, hi: float,
                      color: alt.Color, x_enc: alt.X, data: v.Datasets,
                      lang: Language) -> list[alt.Chart]:
    """Return the shaded spans behind the lines: the day and the downtime (one band each)."""
    _ = lang.gettext
    rects = []
    this_day = _(v.HIGHLIGHT[0])
    if opts.highlight is not None:
        a, b = sorted(v.x_value(t, x.time) for t in opts.highlight)
        if max(a, lo) < min(b, hi):
            rects.append({"x": max(a, lo), "x2": min(b, hi), "k": this_day, "what": ""})
    for s in merged(spans, lang):
        a, b = v.x_value(s.x0, x.time), v.x_value(s.x1, x.time)
        if max(a, lo) < min(b, hi):
            rects.append({"x": max(a, lo), "x2": min(b, hi), "k": _(v.DOWNTIME[0]),
                          "what": s.label})
    if not rects:
        return []
    # The day's tint is lighter than downtime's grey: both read in dark mode too.
    opacity = alt.OpacityValue(0.3, condition={"test": f"datum.k == '{this_day}'",
                                                "value": 0.15})
    # The channel given as an object: a shorthand string is turned into one through
    # Altair's `from_dict`, which hashes the schema of every channel class on each call.
    return [alt.Chart(data.add("spans", rects)).mark_rect().encode(
        x=x_enc, x2=alt.X2("x2"), color=color, opacity=opacity,
        tooltip=[alt.Tooltip("k:N", title=_("span")), alt.Tooltip("what:N", title=_("what"))],
    )]


SEVERAL_GAPS = N_("several gaps in telemetry")


def merged(spans: Sequence[Span], lang: Language) -> list[Span]:
    """Return overlapping or touching spans merged into one."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.x0, s.x1)):
        if out and s.x0 <= out[-1].x1:
            last = out[-1]
            out[-1] = Span(last.x0, max(last.x1, s.x1), lang.gettext(SEVERAL_GAPS))
        else:
            out.append(s)
    return out


def event_layers(opts: Options, x: Axis, lo: float, hi: float, color: alt.Color,
                 x_enc: alt.X, data: v.Datasets, lang: Language) -> Layers:
    """Return the event markers: a dashed rule each, the labelled kinds named on the chart."""
    _ = lang.gettext
    rows: list[dict[str, Any]] = [
        {"x": at, "kind": e.kind, "k": _(v.event_style(e.kind)[0]), "what": e.label,
         "tag": v.fit_label(e.label, LABEL_PX, 10) if v.event_style(e.kind)[2] else ""}
        for e in sorted(opts.events, key=lambda e: (e.x, e.kind, e.label))
        if np.isfinite(e.x) and lo <= (at := v.x_value(e.x, x.time)) <= hi
    ]  # events outside the data are dropped: a run-wide list on a day chart
    if not rows:
        return Layers([], [])
    tips = [alt.Tooltip("k:N", title=_("event")), alt.Tooltip("what:N", title=_("what"))]
    if x.time:
        tips.append(alt.Tooltip("x:T", timeUnit="utcyearmonthdatehoursminutes",
                                title=_("time (UTC)")))
    rules = [alt.Chart(data.add("events", rows)).mark_rule(
        strokeWidth=1.5, strokeDash=[5, 3], opacity=0.9).encode(
        x=x_enc, color=color, tooltip=tips)]
    names: list[alt.Chart] = []
    tagged = [{**r, "row": 2 + LABEL_STEP * (i % LABEL_ROWS)}
              for i, r in enumerate(r for r in rows if r["tag"])]
    if tagged and len(tagged) <= MAX_LABELLED:
        # Labels step down in three rows, so markers close together do not overwrite
        # each other's names (y in pixels from the top: no scale); in the chart's last
        # quarter they read leftwards, so they are not cut at its edge.
        turn = lo + 0.75 * (hi - lo)
        sides: tuple[tuple[Literal["left", "right"], int, list[dict[str, Any]]], ...] = (
            ("left", 3, [r for r in tagged if r["x"] <= turn]),
            ("right", -3, [r for r in tagged if r["x"] > turn]))
        for side, dx, part in sides:
            if part:
                # Names in the text colour (a kind's mid-tone keeps 3:1, not text's 4.5:1);
                # the marker's rule carries its kind's colour.
                words = alt.Chart(data.add(f"event-names-{side}", part)).encode(
                    x=x_enc, y=alt.Y("row:Q", scale=None), text=alt.Text("tag:N"))
                names += v.halo(words, align=side, baseline="top", dx=dx, fontSize=10,
                                color=v.TEXT, opacity=alt.expr(NAMES_SHOWN))
    return Layers(rules, names)


def rule_layers(rules: Sequence[tuple[float, str]], y: Axis, data: v.Datasets,
                lang: Language, tail: Sequence[np.ndarray] = (),
                floor: float | None = None) -> Layers:
    """Return the alert lines (dashed, named at the right end) inside the y domain.

    `tail`: the values each line has in the chart's last quarter, where a name is
    written; it goes on the side of its line that fewer of them are on (see
    `alert_layers`)."""
    if y.domain is not None:
        floor = y.domain[0]
    return alert_layers([(val, lab) for val, lab in rules
                         if np.isfinite(val) and (val > 0 or not y.log)
                         and (y.domain is None or y.domain[0] <= val <= y.domain[1])],
                        data, lang, tail, floor)


def alert_layers(rules: Sequence[tuple[float, str]], data: v.Datasets, lang: Language,
                 tail: Sequence[np.ndarray] = (), floor: float | None = None
                 ) -> Layers:
    """Return alert lines: a dashed rule each, its name at the right end above the line, or
    below it where the data there runs above it (a name written over the data was hard
    to read, outline or not) and the chart goes on below the line (`floor`, the lowest
    value drawn: a line at the bottom of the chart has the axis under it)."""
    values = np.concatenate([np.asarray(t, dtype=float).ravel() for t in tail]) \
        if tail else np.empty(0)
    values = values[np.isfinite(values)]
    rows = [{"y": v.num(val), "label": lab,
             "below": bool((values > val).sum() > (values < val).sum()
                           and floor is not None and floor < val)}
            for val, lab in rules]
    if not rows:
        return Layers([], [])
    base = alt.Chart(data.add("alerts", rows)).encode(y=alt.Y("y:Q"))
    lines = [base.mark_rule(color=v.NEUTRAL, strokeDash=[6, 4]).encode(
        tooltip=[alt.Tooltip("label:N", title=lang.gettext("alert"))])]
    names: list[alt.Chart] = []
    for below in (False, True):
        part = [r for r in rows if r["below"] == below]
        if part:
            words = alt.Chart(data.add("alert-names-below" if below else "alert-names",
                                       part)).encode(y=alt.Y("y:Q"), text=alt.Text("label:N"))
            names += v.halo(words, color=v.TEXT, align="right",
                            baseline="top" if below else "bottom", dy=3 if below else -3,
                            x="width")
    return Layers(lines, names)
