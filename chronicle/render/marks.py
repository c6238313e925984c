"""What a line chart draws besides its lines: the chart's axes and options, shaded spans
(downtime, the day), alert lines and event markers (render stage, pure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True)
class Options:
    """Everything a line chart draws besides its lines."""

    events: Sequence[Event] = ()
    spans: Sequence[Span] = ()
    highlight: tuple[float, float] | None = None
    bands: Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    rules: Sequence[tuple[float, str]] = ()
    smooth: Sequence[str] = ()  # series drawn raw + EMA
    gap_seconds: float | None = None  # break lines where rows are further apart (time axes)


def background_layers(opts: Options, spans: Sequence[Span], x: Axis, lo: float, hi: float,
                      color: dict[str, Any], x_enc: dict[str, Any],
                      lang: Language) -> list[dict[str, Any]]:
    _ = lang.gettext
    layers: list[dict[str, Any]] = []
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
    # The day's tint is lighter than downtime's grey: both read in dark mode too.
    day = {"test": f"datum.k == '{this_day}'", "value": 0.15}
    if rects:
        layers.append({"data": {"values": rects}, "mark": {"type": "rect"},
                       "encoding": {"x": x_enc, "x2": {"field": "x2"}, "color": color,
                                    "opacity": {"condition": day, "value": 0.3},
                                    "tooltip": [{"field": "k", "type": "nominal",
                                                 "title": _("span")},
                                                {"field": "what", "type": "nominal",
                                                 "title": _("what")}]}})
    return layers


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


def event_layers(opts: Options, x: Axis, lo: float, hi: float, color: dict[str, Any],
                 x_enc: dict[str, Any], lang: Language) -> list[dict[str, Any]]:
    _ = lang.gettext
    rows: list[dict[str, Any]] = [
        {"x": at, "kind": e.kind, "k": _(v.event_style(e.kind)[0]), "what": e.label,
         "tag": v.fit_label(e.label, LABEL_PX, 10) if v.event_style(e.kind)[2] else ""}
        for e in sorted(opts.events, key=lambda e: (e.x, e.kind, e.label))
        if np.isfinite(e.x) and lo <= (at := v.x_value(e.x, x.time)) <= hi
    ]  # events outside the data are dropped: a run-wide list on a day chart
    if not rows:
        return []
    tips = [{"field": "k", "type": "nominal", "title": _("event")},
            {"field": "what", "type": "nominal", "title": _("what")}]
    if x.time:
        tips.append({"field": "x", "type": "temporal", "timeUnit": "utcyearmonthdatehoursminutes",
                     "title": _("time (UTC)")})
    layers: list[dict[str, Any]] = [{
        "data": {"values": rows},
        "mark": {"type": "rule", "strokeWidth": 1.5, "strokeDash": [5, 3], "opacity": 0.9},
        "encoding": {"x": x_enc, "color": color, "tooltip": tips},
    }]
    tagged = [{**r, "row": 2 + LABEL_STEP * (i % LABEL_ROWS)}
              for i, r in enumerate(r for r in rows if r["tag"])]
    if tagged and len(tagged) <= MAX_LABELLED:
        # Labels step down in three rows, so markers close together do not overwrite
        # each other's names (y in pixels from the top: no scale); in the chart's last
        # quarter they read leftwards, so they are not cut at its edge.
        turn = lo + 0.75 * (hi - lo)
        for side, dx, part in (("left", 3, [r for r in tagged if r["x"] <= turn]),
                               ("right", -3, [r for r in tagged if r["x"] > turn])):
            if part:
                layers.append({
                    "data": {"values": part},
                    "mark": {"type": "text", "align": side, "baseline": "top", "dx": dx,
                             "fontSize": 10, "opacity": {"expr": NAMES_SHOWN}},
                    "encoding": {"x": x_enc, "y": {"field": "row", "type": "quantitative",
                                                   "scale": None},
                                 "text": {"field": "tag"}, "color": color},
                })
    return layers


def rule_layers(rules: Sequence[tuple[float, str]], y: Axis,
                lang: Language) -> list[dict[str, Any]]:
    rows = [{"y": v.num(val), "label": lab} for val, lab in rules
            if np.isfinite(val) and (val > 0 or not y.log)
            and (y.domain is None or y.domain[0] <= val <= y.domain[1])]
    if not rows:
        return []
    enc = {"y": {"field": "y", "type": "quantitative"}}
    return [
        {"data": {"values": rows}, "mark": {"type": "rule", "color": v.NEUTRAL,
                                            "strokeDash": [6, 4]},
         "encoding": {**enc, "tooltip": [{"field": "label", "type": "nominal",
                                          "title": lang.gettext("alert")}]}},
        {"data": {"values": rows}, "mark": {"type": "text", "color": v.NEUTRAL, "align": "right",
                                            "baseline": "bottom", "dy": -2, "x": "width"},
         "encoding": {**enc, "text": {"field": "label"}}},
    ]
