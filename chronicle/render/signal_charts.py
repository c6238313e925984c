"""The three signals as charts with their verdicts, for the home page's panels and the
Prediction, Throughput and Risks pages (render stage, pure).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np
from markupsafe import Markup

from chronicle.analysis.prediction import eval_points, predict
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.render.embed import publish
from chronicle.render.formats import fmt_num, fmt_pct
from chronicle.render.i18n import DEFAULT, use_language
from chronicle.render.i18n import gettext as _
from chronicle.render.metrics import alert_rules
from chronicle.render.panels import band_rows, regime_chart, residual_chart, risk_timeline
from chronicle.render.signals import (
    drop_rows,
    dropping_verdict,
    prediction_verdict,
    risk_rows,
    risks_verdict,
)

Out = MutableMapping[str, str | bytes]
# The static SVG of a home panel is drawn at about the width its card has, on a laptop
# (three cards side by side) and on a phone (one card a row), so its labels keep their size.
PANEL_WIDTH = 360


def _latest(history: Sequence[Mapping[str, Any]], key: str) -> Any:
    return next((h[key] for h in reversed(history) if h.get(key)), None)


def prediction_signal(config: RunConfig, series: Series, history: Sequence[Mapping[str, Any]],
                      height: int, title: str = "Eval loss − prediction",
                      ) -> tuple[dict[str, Any], str]:
    """Return the residual chart and the prediction's verdict (the chart in English:
    another language translates it whole, render/translate.py; the verdict in the page's
    language)."""
    pred = config.watch.prediction
    latest = _latest(history, "prediction")
    with use_language(DEFAULT):
        spec = _prediction_chart(config, series, latest, height, title)
    return spec, prediction_verdict(latest, configured=pred is not None)


def _prediction_chart(config: RunConfig, series: Series, latest: Mapping[str, Any] | None,
                      height: int, title: str) -> dict[str, Any]:
    pred = config.watch.prediction
    sentence = prediction_verdict(latest, configured=pred is not None)
    points: list[tuple[float, float]] = []
    band: list[tuple[float, float, float]] = []
    if pred is not None:
        pts = eval_points(series, config, pred)
        ok = np.isfinite(pts["fraction"]) & np.isfinite(pts["residual"])
        points = list(zip(pts["fraction"][ok].tolist(), pts["residual"][ok].tolist(),
                          strict=True))
        grid = np.linspace(0.0, 1.0, 201)
        band = band_rows(grid, *predict(pred, grid, config.run.token_budget))
    what = ("Eval loss minus the pre-registered prediction at each eval, against the fraction "
            "of the token budget, with the prediction band shaded around zero")
    latest_text = "No eval yet."
    if points:
        f, r = points[-1]
        latest_text = f"Latest residual {fmt_num(r, 4)} at {fmt_pct(f)} of the budget."
    return residual_chart(points, band, title=title,
                          description=f"{what}. {latest_text} {sentence}", height=height)


def dropping_signal(config: RunConfig, days: Sequence[Mapping[str, Any]],
                    height: int, title: str | None = None) -> tuple[dict[str, Any], str]:
    """Return the drop-fraction-per-regime chart (English) and its verdict."""
    rows, kind = drop_rows(days)
    with use_language(DEFAULT):
        title = f"Token dropping per {kind}" if title is None else title
        rules = alert_rules(config, "drop_fraction")
        sentence = dropping_verdict(rows, kind, rules[0][0] if rules else None)
        what = (f"Daily median fraction of tokens dropped by the MoE router, per {kind}, "
                "against the fraction of the token budget")
        spec = regime_chart(rows, kind, rules, title=title or "",
                            description=f"{what}. {sentence}", height=height)
    return spec, dropping_verdict(rows, kind, rules[0][0] if rules else None)


def risks_signal(config: RunConfig, days: Sequence[Mapping[str, Any]],
                 history: Sequence[Mapping[str, Any]], height: int | None,
                 title: str = "Risk points") -> tuple[dict[str, Any], str]:
    """Return the risk timeline and which risk point fired first."""
    records = history[-1]["risks"] if history else [
        {"id": r.id, "title": r.title, "watch": list(r.watch), "status": "upcoming"}
        for r in config.watch.risks]
    fraction_of = {d["date"]: d["tokens"]["budget_fraction"] for d in days
                   if d["tokens"].get("budget_fraction") is not None}
    now = days[-1]["tokens"].get("budget_fraction") if days else None
    with use_language(DEFAULT):
        sentence = risks_verdict(records)
        what = ("Timeline of the run's risk points over the token budget: each one's watch "
                "window, coloured by status, a triangle where it fired and a line where the "
                "run is now")
        spec = risk_timeline(risk_rows(records, fraction_of), now, title=title,
                             description=f"{what}. {sentence}", height=height)
    return spec, risks_verdict(records)


def signal_panels(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                  history: Sequence[Mapping[str, Any]], out: Out,
                  prefix: str = "home/") -> list[dict[str, Any]]:
    """Return the home page's three panels: heading, chart embed, verdict, link."""
    height = 130
    built = [
        # The panel's heading titles its chart (no second title inside it).
        (_("Loss against the prediction"),
         prediction_signal(config, series, history, height, ""), "prediction.md",
         _("Prediction")),
        (_("Token dropping"), dropping_signal(config, days, height, ""),
         "throughput.md#token-dropping", _("Throughput")),
        (_("Which risk point fires first"), risks_signal(config, days, history, None, ""),
         "risks.md", _("Risks")),
    ]
    names = ("prediction", "dropping", "risks")
    panels = []
    for name, (heading, (spec, sentence), link, page) in zip(names, built, strict=True):
        meta = spec.setdefault("usermeta", {}).setdefault("chronicle", {})
        meta["static_width"] = PANEL_WIDTH
        embed: Markup = publish(out, f"{prefix}{name}", spec, name, "chronicle-chart--small")
        panels.append({"heading": heading, "embed": embed, "sentence": sentence,
                       "link": link, "page": page})
    return panels
