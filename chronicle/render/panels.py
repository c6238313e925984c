"""The charts of the three signals readers watch, and the Health heatmap (render stage,
pure).

Every signal chart shares one x axis, the fraction of the token budget (0 to 100%), so the
home page's three panels line up: the prediction residual with its band around zero,
token dropping per sequence-length regime (per phase until sequence lengths are
recorded), and the risk points' watch windows with their status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np

from chronicle.render import vega as v
from chronicle.render.formats import vega_format
from chronicle.render.i18n import N_, Language

FRACTION_TITLE = N_("fraction of the token budget")
# Status colours that also differ in lightness (a reader who cannot tell red from green
# still sees pass lightest, then warn, no data, fail darkest).
HEALTH_COLORS = {"pass": "#d9f0d3", "warn": "#f5a742", "no-data": "#8a8a8a", "fail": "#8e0a12"}
RISK_COLORS = {"upcoming": "#c6dbef", "watching": "#f5a742", "triggered": "#8e0a12",
               "passed": "#7fbf7b"}


def _frac_x(lang: Language, **extra: Any) -> dict[str, Any]:
    axis = {"title": lang.gettext(FRACTION_TITLE), "format": ".0%", "tickCount": 5}
    return {"field": "f", "type": "quantitative", "scale": {"domain": [0, 1], "nice": False},
            "axis": axis, **extra}


def residual_chart(points: Sequence[tuple[float, float]], band: Sequence[tuple[float, float,
                   float]], *, title: str, description: str, lang: Language,
                   height: int = 220) -> dict[str, Any]:
    """Return eval loss minus prediction per eval against the budget fraction, the band
    (low − predicted, high − predicted) shaded around zero."""
    _ = lang.gettext
    if not points and not band:
        return v.no_data(title, description, lang, height)
    spec = v.frame(title, description, lang, height=height)
    resid = [{"f": v.num(f, 6), "r": v.num(r)} for f, r in points]
    area = [{"f": v.num(f, 6), "lo": v.num(lo), "hi": v.num(hi)} for f, lo, hi in band]
    tips = [{"field": "f", "type": "quantitative", "title": _("budget fraction"),
             "format": ".1%"},
            {"field": "r_text", "type": "nominal", "title": _("residual")}]
    y = {"field": "r", "type": "quantitative", "title": _("eval − predicted"),
         "axis": {"labelExpr": "datum.value > 0 ? '+' + format(datum.value, '.3~f') : "
                  "datum.value < 0 ? format(datum.value, '.3~f') : '0'"}}
    layers: list[dict[str, Any]] = []
    if area:
        layers.append({"data": {"values": area}, "mark": {"type": "area", "opacity": 0.3,
                                                          "color": v.SERIES_COLORS[1]},
                       "encoding": {"x": _frac_x(lang),
                                    "y": {"field": "lo", "type": "quantitative"},
                                    "y2": {"field": "hi"}}})
    layers.append({"data": {"values": [{"r": 0}]},
                   "mark": {"type": "rule", "color": v.NEUTRAL, "strokeDash": [4, 3]},
                   "encoding": {"y": {"field": "r", "type": "quantitative"}}})
    if resid:
        calc = {"calculate": "format(datum.r, '+.4f')", "as": "r_text"}
        layers.append({"data": {"values": resid}, "transform": [calc],
                       "mark": {"type": "line", "point": {"size": 18},
                                "color": v.SERIES_COLORS[0], "strokeWidth": 1.5},
                       "encoding": {"x": _frac_x(lang), "y": y, "tooltip": tips}})
    spec["layer"] = layers
    return spec


def regime_chart(rows: Sequence[Mapping[str, Any]], regime_title: str,
                 rules: Sequence[tuple[float, str]], *, title: str, description: str,
                 lang: Language, height: int = 220) -> dict[str, Any]:
    """Return the daily median token drop fraction per regime against the budget fraction.

    `rows`: {"f": budget fraction, "p50": drop fraction, "regime": label, "date": day}.
    """
    _ = lang.gettext
    if not rows:
        return v.no_data(title, description, lang, height)
    spec = v.frame(title, description, lang, height=height)
    regimes = list(dict.fromkeys(str(r["regime"]) for r in rows))
    colours = [v.SERIES_COLORS[i % len(v.SERIES_COLORS)] for i in range(len(regimes))]
    color = {"field": "regime", "type": "nominal", "title": regime_title,
             "scale": v.color_scale(regimes, colours),
             "legend": {"orient": "top", "symbolType": "stroke", "symbolStrokeWidth": 3,
                        "labelLimit": 200}}
    values = [{"f": v.num(r["f"], 6), "p50": v.num(r["p50"]), "regime": str(r["regime"]),
               "date": r["date"]} for r in rows]
    tips = [{"field": "date", "type": "nominal", "title": _("day")},
            {"field": "regime", "type": "nominal", "title": regime_title},
            {"field": "p50_text", "type": "nominal", "title": _("drop fraction p50")}]
    layers: list[dict[str, Any]] = [{
        "data": {"values": values},
        "transform": [{"calculate": vega_format("fraction", "datum.p50"), "as": "p50_text"}],
        "mark": {"type": "line", "point": {"size": 14}, "strokeWidth": 1.5},
        "encoding": {"x": _frac_x(lang), "color": color, "tooltip": tips,
                     "y": {"field": "p50", "type": "quantitative",
                           "title": _("tokens dropped (p50)"), "axis": {"format": ".1%"}}}}]
    alert = [{"y": v.num(val), "label": lab} for val, lab in rules]
    if alert:
        enc = {"y": {"field": "y", "type": "quantitative"}}
        layers.append({"data": {"values": alert},
                       "mark": {"type": "rule", "color": v.NEUTRAL, "strokeDash": [6, 4]},
                       "encoding": enc})
        layers.append({"data": {"values": alert},
                       "mark": {"type": "text", "color": v.NEUTRAL, "align": "right",
                                "baseline": "bottom", "dy": -2, "x": "width"},
                       "encoding": {**enc, "text": {"field": "label"}}})
    spec["layer"] = layers
    return spec


def risk_timeline(risks: Sequence[Mapping[str, Any]], now: float | None, *, title: str,
                  description: str, lang: Language, height: int | None = None
                  ) -> dict[str, Any]:
    """Return one row per risk over the budget fraction: its watch window coloured by
    status, the point where it triggered, and a rule where the run is now.

    `risks`: {"title", "lo", "hi", "status", "at" (fraction it triggered at, or None)}.
    """
    _ = lang.gettext
    if not risks:
        return v.no_data(title, description, lang, height or 120)
    spec = v.frame(title, description, lang, height=height or max(90, 38 * len(risks)))
    statuses = [s for s in RISK_COLORS if any(r["status"] == s for r in risks)]
    # A status is a keyword of the record; the chart says its word (the legend too).
    color = {"field": "status", "type": "nominal",
             "scale": v.color_scale([lang.term(s, "risk status") for s in statuses],
                                    [RISK_COLORS[s] for s in statuses]),
             "legend": {"orient": "top", "title": None, "symbolType": "square"}}
    rows = [{"risk": r["title"], "f": v.num(r["lo"], 6), "f2": v.num(r["hi"], 6),
             "status": lang.term(r["status"], "risk status"),
             "window": f"{r['lo']:.0%}–{r['hi']:.0%}",
             "label": _("{risk}: {status}").format(
                 risk=r["title"], status=lang.term(r["status"], "risk status"))}
            for r in risks]
    # Titles are written above their bars across the whole width: a y axis would cut them.
    y = {"field": "risk", "type": "nominal", "title": None, "sort": None,
         "scale": {"paddingInner": 0.15}, "axis": None}
    tips = [{"field": "risk", "type": "nominal", "title": _("risk")},
            {"field": "status", "type": "nominal", "title": _("status")},
            {"field": "window", "type": "nominal", "title": _("watched")}]
    layers: list[dict[str, Any]] = [{
        "data": {"values": rows},
        "mark": {"type": "bar", "cornerRadius": 2, "height": {"band": 0.45}, "yOffset": 6,
                 "stroke": v.NEUTRAL, "strokeWidth": 0.5},
        "encoding": {"x": _frac_x(lang), "x2": {"field": "f2"}, "y": y, "color": color,
                     "tooltip": tips}},
        {"data": {"values": rows},
         "mark": {"type": "text", "align": "left", "baseline": "top", "x": 0, "yOffset": -13,
                  "fontSize": 11, "limit": 400},
         "encoding": {"y": y, "text": {"field": "label"}}}]
    fired = [{"risk": r["title"], "f": v.num(r["at"], 6)} for r in risks
             if r.get("at") is not None]
    if fired:
        layers.append({"data": {"values": fired},
                       "mark": {"type": "point", "shape": "triangle-down", "filled": True,
                                "size": 90, "color": "#d62728", "yOffset": 6},
                       "encoding": {"x": _frac_x(lang), "y": y}})
    if now is not None:
        layers.append({"data": {"values": [{"f": v.num(now, 6), "t": _("now")}]},
                       "mark": {"type": "rule", "color": v.NEUTRAL, "strokeWidth": 2},
                       "encoding": {"x": _frac_x(lang)}})
    spec["layer"] = layers
    return spec


def health_heatmap(days: Sequence[Mapping[str, Any]], checks: Sequence[str], *, title: str,
                   description: str, lang: Language, link: str = "days/") -> dict[str, Any]:
    """Return the days × checks matrix as a heatmap; each cell links its day's page.

    `days`: {"date", "day", "checks": [{"id", "status", "value", "rule"}]} oldest first.
    """
    cells = []
    for d in days:
        start = date.fromisoformat(d["date"])
        end = (start + timedelta(days=1)).isoformat()
        for c in d["checks"]:
            if c["id"] not in checks:
                continue
            cells.append({"d": d["date"], "e": end, "n": d["day"], "c": c["id"],
                          "s": lang.term(c["status"], "health status"), "v": c["value_text"],
                          "r": c["rule"], "u": f"{link}{d['date']}.html"})
    _ = lang.gettext
    if not cells:
        return v.no_data(title, description, lang, 120)
    spec = v.frame(title, description, lang, height=max(120, 18 * len(checks)))
    words = {lang.term(s, "health status"): s for s in HEALTH_COLORS}
    statuses = [w for w in words if any(c["s"] == w for c in cells)]
    x = {"field": "d", "type": "temporal", "scale": {"type": "utc"},
         "axis": {"title": None, "format": "%-m月%-d日" if lang.zh else "%b %-d",
                  "labelOverlap": "greedy", "grid": False}}
    spec["data"] = {"values": cells}
    spec["mark"] = {"type": "rect", "stroke": "#ffffff", "strokeWidth": 0.5, "cursor": "pointer"}
    spec["encoding"] = {
        "x": x, "x2": {"field": "e"},
        "y": {"field": "c", "type": "nominal", "title": None, "sort": list(checks),
              "axis": {"labelLimit": 140}},
        "color": {"field": "s", "type": "nominal", "title": None,
                  "scale": v.color_scale(statuses, [HEALTH_COLORS[words[s]] for s in statuses]),
                  "legend": {"orient": "top", "symbolType": "square",
                             "symbolStrokeColor": v.NEUTRAL, "symbolStrokeWidth": 0.5}},
        "href": {"field": "u"},
        "tooltip": [{"field": "d", "type": "nominal", "title": _("day")},
                    {"field": "c", "type": "nominal", "title": _("check")},
                    {"field": "s", "type": "nominal", "title": _("status")},
                    {"field": "v", "type": "nominal", "title": _("value")},
                    {"field": "r", "type": "nominal", "title": _("rule")}],
    }
    return spec


def band_rows(fractions: np.ndarray, predicted: np.ndarray, low: np.ndarray,
              high: np.ndarray) -> list[tuple[float, float, float]]:
    """Return (fraction, low − predicted, high − predicted) where all three are known."""
    ok = np.isfinite(predicted) & np.isfinite(low) & np.isfinite(high)
    return [(float(f), float(lo - p), float(hi - p))
            for f, p, lo, hi in zip(fractions[ok], predicted[ok], low[ok], high[ok],
                                    strict=True)]
