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

import altair as alt
import numpy as np

from chronicle.render import vega as v
from chronicle.render.formats import vega_format
from chronicle.render.i18n import N_, Language
from chronicle.render.marks import alert_layers

FRACTION_TITLE = N_("fraction of the token budget")
# Status colours that also differ in lightness (a reader who cannot tell red from green
# still sees pass lightest, then warn, no data, fail darkest).
HEALTH_COLORS = {"pass": "#d9f0d3", "warn": "#f5a742", "no-data": "#8a8a8a", "fail": "#8e0a12"}
RISK_COLORS = {"upcoming": "#c6dbef", "watching": "#f5a742", "triggered": "#8e0a12",
               "passed": "#7fbf7b"}


def _frac_x(lang: Language) -> alt.X:
    return alt.X("f:Q", scale=alt.Scale(domain=[0, 1], nice=False),
                 axis=alt.Axis(title=lang.gettext(FRACTION_TITLE), format=".0%", tickCount=5))


SPIKE_COLOR = v.EVENT_STYLES["failure"][1]


@v.unchecked
def residual_chart(points: Sequence[tuple[float, float, str]],
                   band: Sequence[tuple[float, float, float]], *, title: str,
                   description: str, lang: Language, height: int = 220) -> dict[str, Any]:
    """Return eval loss minus prediction per eval against the budget fraction, the band
    (low − predicted, high − predicted) shaded around zero.

    `points`: (fraction, residual, spike) per eval; `spike` names the loss spike the eval
    is the first after ("" for the others): such an eval is marked, and the legend and
    its tooltip say why it jumps."""
    _ = lang.gettext
    if not points and not band:
        return v.no_data(title, description, lang, height)
    data = v.Datasets()
    resid = [{"f": v.num(f, 6), "r": v.num(r)} for f, r, _w in points]
    area = [{"f": v.num(f, 6), "lo": v.num(lo), "hi": v.num(hi)} for f, lo, hi in band]
    layers: list[alt.Chart] = []
    if area:
        layers += v.band_layers(alt.Chart(data.add("band", area)), _frac_x(lang),
                                v.SERIES_COLORS[1])
    layers.append(alt.Chart(data.add("zero", [{"r": 0}])).mark_rule(
        color=v.NEUTRAL, strokeDash=[4, 3]).encode(y=alt.Y("r:Q")))
    if resid:
        y = alt.Y("r:Q", title=_("eval − predicted"), axis=alt.Axis(
            labelExpr="datum.value > 0 ? '+' + format(datum.value, '.3~f') : "
                      "datum.value < 0 ? format(datum.value, '.3~f') : '0'"))
        layers.append(alt.Chart(data.add("residuals", resid)).transform_calculate(
            r_text="format(datum.r, '+.4f')").mark_line(
            point=alt.OverlayMarkDef(size=18), color=v.SERIES_COLORS[0],
            strokeWidth=1.5).encode(
            x=_frac_x(lang), y=y,
            tooltip=[alt.Tooltip("f:Q", title=_("budget fraction"), format=".1%"),
                     alt.Tooltip("r_text:N", title=_("residual"))]))
    after = _("first eval after a loss spike")
    spiked = [{"f": v.num(f, 6), "r": v.num(r), "k": after, "what": what}
              for f, r, what in points if what]
    if spiked:
        layers.append(alt.Chart(data.add("after-spikes", spiked)).transform_calculate(
            r_text="format(datum.r, '+.4f')").mark_point(
            filled=True, size=70, stroke="white", strokeWidth=1, opacity=1).encode(
            x=_frac_x(lang), y=alt.Y("r:Q"),
            color=alt.Color("k:N", scale=alt.Scale(domain=[after], range=[SPIKE_COLOR]),
                            legend=alt.Legend(orient="top", title=None, symbolType="circle")),
            tooltip=[alt.Tooltip("f:Q", title=_("budget fraction"), format=".1%"),
                     alt.Tooltip("r_text:N", title=_("residual")),
                     alt.Tooltip("what:N", title=_("loss spike"))]))
    return v.to_spec(v.layered(layers, title, description, lang, height=height), data)


@v.unchecked
def regime_chart(rows: Sequence[Mapping[str, Any]], regime_title: str,
                 rules: Sequence[tuple[float, str]], *, title: str, description: str,
                 lang: Language, height: int = 220) -> dict[str, Any]:
    """Return the daily median token drop fraction per regime against the budget fraction.

    `rows`: {"f": budget fraction, "p50": drop fraction, "regime": label, "date": day}.
    """
    _ = lang.gettext
    if not rows:
        return v.no_data(title, description, lang, height)
    data = v.Datasets()
    regimes = list(dict.fromkeys(str(r["regime"]) for r in rows))
    colours = [v.SERIES_COLORS[i % len(v.SERIES_COLORS)] for i in range(len(regimes))]
    values = [{"f": v.num(r["f"], 6), "p50": v.num(r["p50"]), "regime": str(r["regime"]),
               "date": r["date"]} for r in rows]
    line = alt.Chart(data.add("regimes", values)).transform_calculate(
        p50_text=vega_format("fraction", "datum.p50")).mark_line(
        point=alt.OverlayMarkDef(size=14), strokeWidth=1.5).encode(
        x=_frac_x(lang),
        y=alt.Y("p50:Q", title=_("tokens dropped (p50)"), axis=alt.Axis(format=".1%")),
        color=alt.Color("regime:N", title=regime_title,
                        scale=v.color_scale(regimes, colours),
                        legend=alt.Legend(orient="top", symbolType="stroke",
                                          symbolStrokeWidth=3, labelLimit=200)),
        tooltip=[alt.Tooltip("date:N", title=_("day")),
                 alt.Tooltip("regime:N", title=regime_title),
                 alt.Tooltip("p50_text:N", title=_("drop fraction p50"))])
    tail = np.asarray([r["p50"] for r in values if r["f"] >= 0.75], dtype=float)
    alerts = alert_layers(rules, data, lang, [tail], min(float(r["p50"]) for r in values))
    # The alert line under the data, its name over it (render/marks.py `Layers`).
    return v.to_spec(v.layered([*alerts.under, line, *alerts.over], title, description,
                               lang, height=height), data)


@v.unchecked
def risk_timeline(risks: Sequence[Mapping[str, Any]], now: float | None, *, title: str,
                  description: str, lang: Language, height: int | None = None
                  ) -> dict[str, Any]:
    """Return one row per risk over the budget fraction: its watch window outlined, each
    stretch of the run so far filled with the status the risk had then (a risk upcoming
    until 82% is not drawn as triggered from 0%), a triangle where it fired (in the
    legend) and a labelled rule where the run is now.

    `risks`: {"title", "lo", "hi", "status", "at" (fraction it fired at, or None),
    "segments": [(from, to, status)] (the run so far; none: the window in its status)}.
    """
    _ = lang.gettext
    if not risks:
        return v.no_data(title, description, lang, height or 120)
    data = v.Datasets()
    stretches = []
    for r in risks:
        segments = r.get("segments")
        if segments is None:  # no history: the window in the status it has
            segments = [(r["lo"], r["hi"], r["status"])]
        for lo, hi, status in segments:
            stretches.append({"risk": r["title"], "f": v.num(lo, 6), "f2": v.num(hi, 6),
                              "status": lang.term(status, "risk status"),
                              "window": f"{r['lo']:.0%}–{r['hi']:.0%}"})
    statuses = [s for s in RISK_COLORS
                if any(lang.term(s, "risk status") == x["status"] for x in stretches)]
    rows = [{"risk": r["title"], "f": v.num(r["lo"], 6), "f2": v.num(r["hi"], 6),
             "label": _("{risk}: {status}").format(
                 risk=r["title"], status=lang.term(r["status"], "risk status"))}
            for r in risks]
    # Titles are written above their bars across the whole width: a y axis would cut them.
    y = alt.Y("risk:N", title=None, sort=None, scale=alt.Scale(paddingInner=0.15),
              axis=None)
    band: dict[str, Any] = {"cornerRadius": 2, "height": alt.RelativeBandSize(band=0.45),
                            "yOffset": 6}
    windows = alt.Chart(data.add("risks", rows))
    layers = [
        # The whole window, outlined: what is not filled the run has not reached yet.
        windows.mark_bar(**band, fill=None, stroke=v.NEUTRAL, strokeWidth=1).encode(
            x=_frac_x(lang), x2="f2", y=y),
        alt.Chart(data.add("stretches", stretches)).mark_bar(**band).encode(
            x=_frac_x(lang), x2="f2", y=y,
            # A status is a keyword of the record; the chart says its word (the legend too).
            color=alt.Color("status:N", scale=v.color_scale(
                [lang.term(s, "risk status") for s in statuses],
                [RISK_COLORS[s] for s in statuses]),
                legend=alt.Legend(orient="top", title=None, symbolType="square")),
            tooltip=[alt.Tooltip("risk:N", title=_("risk")),
                     alt.Tooltip("status:N", title=_("status")),
                     alt.Tooltip("window:N", title=_("watched"))]),
        # A risk's name is cut at the chart's edge (its tooltip has it whole).
        windows.mark_text(align="left", baseline="top", x=0, yOffset=-13, fontSize=11,
                          limit=alt.ExprRef("width"), color=v.TEXT).encode(
            y=y, text=alt.Text("label:N")),
    ]
    fired_word = _("fired here")
    fired = [{"risk": r["title"], "f": v.num(r["at"], 6), "mark": fired_word} for r in risks
             if r.get("at") is not None]
    if fired:
        # White-edged, so it shows on the dark red of a triggered stretch; named in the legend.
        layers.append(alt.Chart(data.add("fired", fired)).mark_point(
            filled=True, size=110, color="#d62728", stroke="white", strokeWidth=1.2,
            yOffset=6, opacity=1).encode(
            x=_frac_x(lang), y=y,
            shape=alt.Shape("mark:N", scale=alt.Scale(domain=[fired_word],
                                                      range=["triangle-down"]),
                            legend=alt.Legend(orient="top", title=None))))
    if now is not None:
        here = alt.Chart(data.add("now", [{"f": v.num(now, 6), "t": _("now")}]))
        layers += [here.mark_rule(color=v.NEUTRAL, strokeWidth=2).encode(x=_frac_x(lang)),
                   here.mark_text(color=v.TEXT, align="center", baseline="bottom", y=0,
                                  dy=-2, fontSize=10).encode(x=_frac_x(lang),
                                                             text=alt.Text("t:N"))]
    return v.to_spec(v.layered(layers, title, description, lang,
                               height=height or max(90, 38 * len(risks))), data)


@v.unchecked
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
    data = v.Datasets()
    words = {lang.term(s, "health status"): s for s in HEALTH_COLORS}
    statuses = [w for w in words if any(c["s"] == w for c in cells)]
    chart = alt.Chart(data.add("cells", cells)).mark_rect(
        stroke="#ffffff", strokeWidth=0.5, cursor="pointer").encode(
        x=alt.X("d:T", scale=alt.Scale(type="utc"), axis=alt.Axis(
            title=None, format="%-m月%-d日" if lang.zh else "%b %-d", labelOverlap="greedy",
            grid=False)),
        x2="e",
        y=alt.Y("c:N", title=None, sort=list(checks), axis=alt.Axis(labelLimit=140)),
        color=alt.Color("s:N", title=None, scale=v.color_scale(
            statuses, [HEALTH_COLORS[words[s]] for s in statuses]),
            legend=alt.Legend(orient="top", symbolType="square", symbolStrokeColor=v.NEUTRAL,
                              symbolStrokeWidth=0.5)),
        href=alt.Href("u:N"),
        tooltip=[alt.Tooltip("d:N", title=_("day")), alt.Tooltip("c:N", title=_("check")),
                 alt.Tooltip("s:N", title=_("status")), alt.Tooltip("v:N", title=_("value")),
                 alt.Tooltip("r:N", title=_("rule"))])
    return v.to_spec(v.framed(chart, title, description, lang,
                              height=max(120, 18 * len(checks))), data)


def band_rows(fractions: np.ndarray, predicted: np.ndarray, low: np.ndarray,
              high: np.ndarray) -> list[tuple[float, float, float]]:
    """Return (fraction, low − predicted, high − predicted) where all three are known."""
    ok = np.isfinite(predicted) & np.isfinite(low) & np.isfinite(high)
    return [(float(f), float(lo - p), float(hi - p))
            for f, p, lo, hi in zip(fractions[ok], predicted[ok], low[ok], high[ok],
                                    strict=True)]
