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
from chronicle.analysis.signals import dropping_facts, prediction_facts
from chronicle.config import RunConfig
from chronicle.render.embed import publish
from chronicle.render.formats import fmt_num, fmt_pct
from chronicle.render.i18n import N_, Language
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


RESIDUAL_TITLE = N_("Eval loss − prediction")
RISKS_TITLE = N_("Risk points")


def prediction_signal(config: RunConfig, series: Series, history: Sequence[Mapping[str, Any]],
                      height: int, lang: Language, title: str = RESIDUAL_TITLE,
                      ) -> tuple[dict[str, Any], str]:
    """Return the residual chart and the prediction's verdict, in `lang`."""
    pred = config.watch.prediction
    latest = prediction_facts(history)
    sentence = prediction_verdict(latest, lang, configured=pred is not None)
    return _prediction_chart(config, series, height, title, sentence, lang), sentence


def _prediction_chart(config: RunConfig, series: Series, height: int, title: str,
                      sentence: str, lang: Language) -> dict[str, Any]:
    _ = lang.gettext
    pred = config.watch.prediction
    points: list[tuple[float, float]] = []
    band: list[tuple[float, float, float]] = []
    if pred is not None:
        pts = eval_points(series, config, pred)
        ok = np.isfinite(pts["fraction"]) & np.isfinite(pts["residual"])
        points = list(zip(pts["fraction"][ok].tolist(), pts["residual"][ok].tolist(),
                          strict=True))
        grid = np.linspace(0.0, 1.0, 201)
        band = band_rows(grid, *predict(pred, grid, config.run.token_budget))
    what = _("Eval loss minus the pre-registered prediction at each eval, against the "
             "fraction of the token budget, with the prediction band shaded around zero")
    latest_text = _("No eval yet.")
    if points:
        f, r = points[-1]
        latest_text = _("Latest residual {residual} at {share} of the budget.").format(
            residual=fmt_num(r, 4), share=fmt_pct(f))
    return residual_chart(points, band, title=_(title) if title else "",
                          description=_("{what}. {latest} {verdict}").format(
                              what=what, latest=latest_text, verdict=sentence),
                          lang=lang, height=height)


def dropping_signal(config: RunConfig, days: Sequence[Mapping[str, Any]], height: int,
                    lang: Language, title: str | None = None) -> tuple[dict[str, Any], str]:
    """Return the drop-fraction-per-regime chart and its verdict, in `lang`."""
    _ = lang.gettext
    rows, kind = drop_rows(days, lang)
    regime = _(kind)
    title = _("Token dropping per {kind}").format(kind=regime) if title is None else title
    rules = alert_rules(config, "drop_fraction", lang)
    sentence = dropping_verdict(dropping_facts(days), lang)
    what = _("Daily median fraction of tokens dropped by the MoE router, per {kind}, against "
             "the fraction of the token budget").format(kind=regime)
    spec = regime_chart(rows, regime, rules, title=title or "",
                        description=_("{what}. {verdict}").format(what=what, verdict=sentence),
                        lang=lang, height=height)
    return spec, sentence


def risks_signal(config: RunConfig, days: Sequence[Mapping[str, Any]],
                 history: Sequence[Mapping[str, Any]], height: int | None, lang: Language,
                 title: str = RISKS_TITLE) -> tuple[dict[str, Any], str]:
    """Return the risk timeline and which risk point fired first, in `lang`."""
    _ = lang.gettext
    records = history[-1]["risks"] if history else [
        {"id": r.id, "title": r.title, "watch": list(r.watch), "status": "upcoming"}
        for r in config.watch.risks]
    fraction_of = {d["date"]: d["tokens"]["budget_fraction"] for d in days
                   if d["tokens"].get("budget_fraction") is not None}
    now = days[-1]["tokens"].get("budget_fraction") if days else None
    sentence = risks_verdict(records, lang)
    what = _("Timeline of the run's risk points over the token budget: each one's watch "
             "window, coloured by status, a triangle where it fired and a line where the "
             "run is now")
    spec = risk_timeline(risk_rows(records, fraction_of, history), now,
                         title=_(title) if title else "",
                         description=_("{what}. {verdict}").format(what=what,
                                                                   verdict=sentence),
                         lang=lang, height=height)
    return spec, sentence


def signal_panels(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                  history: Sequence[Mapping[str, Any]], out: Out, lang: Language,
                  prefix: str = "home/") -> list[dict[str, Any]]:
    """Return the home page's three panels: heading, chart embed, verdict, link."""
    _ = lang.gettext
    height = 130
    built = [
        # The panel's heading titles its chart (no second title inside it).
        (_("Loss against the prediction"),
         prediction_signal(config, series, history, height, lang, ""), "prediction.md",
         _("Prediction")),
        (_("Token dropping"), dropping_signal(config, days, height, lang, ""),
         "throughput.md#token-dropping", _("Throughput")),
        (_("Which risk point fires first"), risks_signal(config, days, history, None, lang, ""),
         "risks.md", _("Risks")),
    ]
    names = ("prediction", "dropping", "risks")
    panels = []
    for name, (heading, (spec, sentence), link, page) in zip(names, built, strict=True):
        meta = spec.setdefault("usermeta", {}).setdefault("chronicle", {})
        meta["static_width"] = PANEL_WIDTH
        embed: Markup = publish(out, f"{prefix}{name}", spec, name,
                                "chronicle-chart--small")
        panels.append({"heading": heading, "embed": embed, "sentence": sentence,
                       "link": link, "page": page})
    return panels
