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
from chronicle.analysis.signals import Events, dropping_facts, prediction_facts, risks_facts
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render.embed import publish
from chronicle.render.formats import fmt_num, fmt_pct
from chronicle.render.i18n import N_, Language
from chronicle.render.metrics import alert_rules
from chronicle.render.panels import band_rows, regime_chart, residual_chart, risk_timeline
from chronicle.render.record_text import failure_text
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
                      failures: Sequence[FailureRecord], height: int, lang: Language,
                      title: str = RESIDUAL_TITLE, events: Events = ()
                      ) -> tuple[dict[str, Any], str]:
    """Return the residual chart and the prediction's verdict, in `lang` (with the
    ledger's `events`: the run's, then now)."""
    pred = config.watch.prediction
    latest = prediction_facts(history, events)
    sentence = prediction_verdict(latest, lang, configured=pred is not None)
    return _prediction_chart(config, series, failures, height, title, sentence,
                             lang), sentence


def after_spikes(times: np.ndarray, failures: Sequence[FailureRecord]) -> list[int | None]:
    """Return, for each eval (times ascending), the index in `failures` of the loss spike
    it is the first eval after (None for the others).

    An eval logged while the weights still carry a spike lands far off the prediction;
    marked, the residual's jump is explained on the chart instead of looking like the
    prediction failing."""
    spikes = [(f.start.timestamp(), i) for i, f in enumerate(failures)
              if f.kind == "loss_spike"]
    out: list[int | None] = [None] * len(times)
    for at, i in spikes:
        k = int(np.searchsorted(times, at, side="left"))
        if k < len(times):
            out[k] = i
    return out


def _prediction_chart(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
                      height: int, title: str, sentence: str,
                      lang: Language) -> dict[str, Any]:
    _ = lang.gettext
    pred = config.watch.prediction
    points: list[tuple[float, float, str]] = []
    band: list[tuple[float, float, float]] = []
    if pred is not None:
        pts = eval_points(series, config, pred)
        ok = np.flatnonzero(np.isfinite(pts["fraction"]) & np.isfinite(pts["residual"]))
        order = ok[np.argsort(pts["time"][ok], kind="stable")]
        spikes = after_spikes(pts["time"][order], failures)
        points = sorted(((float(pts["fraction"][k]), float(pts["residual"][k]),
                          "" if i is None else failure_text(failures[i], lang))
                         for k, i in zip(order.tolist(), spikes, strict=True)),
                        key=lambda p: p[0])
        grid = np.linspace(0.0, 1.0, 201)
        band = band_rows(grid, *predict(pred, grid, config.run.token_budget))
    what = _("Eval loss minus the pre-registered prediction at each eval, against the "
             "fraction of the token budget, with the prediction band shaded around zero")
    latest_text = _("No eval yet.")
    if points:
        f, r, _spike = points[-1]
        latest_text = _("Latest residual {residual} at {share} of the budget.").format(
            residual=fmt_num(r, 4), share=fmt_pct(f))
    marked = [p for p in points if p[2]]
    if marked:
        latest_text += lang.sep + lang.ngettext(
            "{n} eval, marked, was the first after a loss spike ({shares}).",
            "{n} evals, marked, were the first after a loss spike ({shares}).",
            len(marked)).format(n=len(marked),
                                shares=lang.gettext(", ").join(
                                    fmt_pct(f) for f, _r, _w in marked))
    return residual_chart(points, band, title=_(title) if title else "",
                          description=_("{what}. {latest} {verdict}").format(
                              what=what, latest=latest_text, verdict=sentence),
                          lang=lang, height=height)


def dropping_signal(config: RunConfig, days: Sequence[Mapping[str, Any]], height: int,
                    lang: Language, title: str | None = None, events: Events = ()
                    ) -> tuple[dict[str, Any], str]:
    """Return the drop-fraction-per-regime chart and its verdict, in `lang`."""
    _ = lang.gettext
    rows, kind = drop_rows(days, lang)
    regime = _(kind)
    title = _("Token dropping per {kind}").format(kind=regime) if title is None else title
    rules = alert_rules(config, "drop_fraction", lang)
    sentence = dropping_verdict(dropping_facts(days, events), lang)
    what = _("Daily median fraction of tokens dropped by the MoE router, per {kind}, against "
             "the fraction of the token budget").format(kind=regime)
    spec = regime_chart(rows, regime, rules, title=title or "",
                        description=_("{what}. {verdict}").format(what=what, verdict=sentence),
                        lang=lang, height=height)
    return spec, sentence


def risks_signal(config: RunConfig, days: Sequence[Mapping[str, Any]],
                 history: Sequence[Mapping[str, Any]], height: int | None, lang: Language,
                 title: str = RISKS_TITLE, events: Events = ()) -> tuple[dict[str, Any], str]:
    """Return the risk timeline and which risk point fired first, in `lang`."""
    _ = lang.gettext
    records = history[-1]["risks"] if history else [
        {"id": r.id, "title": r.title, "watch": list(r.watch), "status": "upcoming"}
        for r in config.watch.risks]
    fraction_of = {d["date"]: d["tokens"]["budget_fraction"] for d in days
                   if d["tokens"].get("budget_fraction") is not None}
    now = days[-1]["tokens"].get("budget_fraction") if days else None
    sentence = risks_verdict(records, lang, risks_facts(history, events)["run"])
    what = _("Timeline of the run's risk points over the token budget: each one's watch "
             "window, coloured by status, a triangle where it fired and a line where the "
             "run is now")
    rows = [{**r, "title": lang.said(r["title"])} for r in risk_rows(records, fraction_of,
                                                                     history)]
    spec = risk_timeline(rows, now,
                         title=_(title) if title else "",
                         description=_("{what}. {verdict}").format(what=what,
                                                                   verdict=sentence),
                         lang=lang, height=height)
    return spec, sentence


def signal_panels(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                  history: Sequence[Mapping[str, Any]], failures: Sequence[FailureRecord],
                  out: Out, lang: Language,
                  prefix: str = "home/", events: Events = ()) -> list[dict[str, Any]]:
    """Return the home page's three panels: heading, chart embed, verdict, link."""
    _ = lang.gettext
    height = 130
    built = [
        # The panel's heading titles its chart (no second title inside it).
        (_("Loss against the prediction"),
         prediction_signal(config, series, history, failures, height, lang, "", events),
         "prediction.md",
         _("Prediction")),
        (_("Token dropping"), dropping_signal(config, days, height, lang, "", events),
         "throughput.md#token-dropping", _("Throughput")),
        (_("Which risk point fires first"),
         risks_signal(config, days, history, None, lang, "", events),
         "risks.md", _("Risks")),
    ]
    names = ("prediction", "dropping", "risks")
    panels: list[dict[str, Any]] = []
    for i, (name, (heading, (spec, sentence), link, page)) in enumerate(
            zip(names, built, strict=True)):
        meta = spec.setdefault("usermeta", {}).setdefault("chronicle", {})
        meta["static_width"] = PANEL_WIDTH
        # The first card is the home page's largest paint on a phone: fetched at once.
        embed: Markup = publish(out, f"{prefix}{name}", spec, name,
                                "chronicle-chart--small", first_paint=i == 0)
        panels.append({"heading": heading, "embed": embed, "sentence": sentence,
                       "link": link, "page": page})
    return panels
