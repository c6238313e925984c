"""The run-wide watch pages: prediction, health, risks, throughput, cost, claims (render
stage, pure).

`run_pages` works from the stitched series, the failures, the sealed days' JSON, the run
records, the config and the watchers' verdicts per day; it returns {path relative to
docs/: content}. Alert lines on its charts come from the configured health checks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.claims import check_claims, figures
from chronicle.analysis.context_length import drop_by_length, lengths
from chronicle.analysis.cost import summarize_cost, summarize_throughput
from chronicle.analysis.health import STATUSES
from chronicle.analysis.ledger import Ledger, LedgerInputs, build_ledger
from chronicle.analysis.prediction import eval_points, predict
from chronicle.analysis.run_state import RunState
from chronicle.analysis.series import Series
from chronicle.analysis.signals import Events, dropping_facts, risks_facts
from chronicle.analysis.verdicts import watch_history
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, RunRecord
from chronicle.render import render
from chronicle.render.change_text import change_events, describe
from chronicle.render.charts import Axis, Options, line_chart
from chronicle.render.charts_page import daily
from chronicle.render.day_charts import fitted_domain, run_marks, time_axis
from chronicle.render.embed import publish
from chronicle.render.formats import exact_digits, fmt_num, fmt_pct, fmt_plain, fmt_si
from chronicle.render.i18n import N_, Language
from chronicle.render.ledger_text import decision_text
from chronicle.render.metrics import (
    BUDGET_FRACTION,
    alert_rules,
    axis_for,
    check_value,
    display,
    show,
)
from chronicle.render.panels import health_heatmap
from chronicle.render.prose import residual_line
from chronicle.render.signal_charts import dropping_signal, prediction_signal, risks_signal
from chronicle.render.signals import (
    drop_rows,
    dropping_verdict,
    prediction_verdict,
    risk_point_verdict,
)

Artifact = tuple[str, str | None]  # (path, sha256, None if the file is missing)


def _prediction_page(config: RunConfig, series: Series, history: Sequence[Mapping[str, Any]],
                     failures: Sequence[FailureRecord], out: dict[str, str | bytes],
                     lang: Language, events: Events = ()) -> str:
    _ = lang.gettext
    pred = config.watch.prediction
    if pred is None:
        return render("prediction.md.j2", lang, pred=None, embeds=[], rows=[], latest=None,
                      sha=None, registered=None, line=None,
                      verdict=prediction_verdict(None, lang, configured=False))
    residual, verdict = prediction_signal(config, series, history, failures, 260, lang,
                                          events=events)
    pts = eval_points(series, config, pred)
    grid = np.linspace(0.0, 1.0, 201)[1:]
    p, lo, hi = predict(pred, grid, config.run.token_budget)
    ok = np.isfinite(p)
    seen = np.isfinite(pts["fraction"])
    # The prediction first, so the actual evals are drawn over it.
    predicted = _("predicted")
    lines = {predicted: (grid[ok], p[ok]) if ok.any() else None,
             _("eval loss (actual)"): (pts["fraction"][seen], pts["actual"][seen])
             if seen.any() else None}
    band_ok = ok & np.isfinite(lo) & np.isfinite(hi)
    bands = {predicted: (grid[band_ok], lo[band_ok], hi[band_ok])} if band_ok.any() else {}
    present = [xy for xy in lines.values() if xy is not None]
    domain, _peak = fitted_domain(present, 0.05) if present else (None, None)
    latest = next((h["prediction"] for h in reversed(history) if h.get("prediction")), None)
    decisions = [{"text": decision_text(e["facts"], lang), "date": e["days"][0],
                  "risk": e["facts"]["risk"]} for e in events if e["kind"] == "decision"]
    actual = line_chart(
        lines, title=_("Eval loss: actual and pre-registered prediction"),
        description=_("Line chart of the eval loss and the pre-registered prediction with "
                      "its band, against the fraction of the token budget. {verdict}").format(
            verdict=prediction_verdict(latest, lang)),
        subtitle=_("y axis fitted after the first 5% of the budget") if domain else None,
        x=Axis(_(BUDGET_FRACTION.axis), "fraction"),
        y=axis_for("eval_loss", config, lang, domain=domain), lang=lang,
        options=Options(bands=bands))
    embeds = [publish(out, "watch/prediction_residual", residual, "residual"),
              publish(out, "watch/prediction", actual, "prediction")]
    rows = [{"step": int(pts["step"][i]), "fraction": float(pts["fraction"][i]),
             "actual": float(pts["actual"][i]),
             **{k: (float(pts[k][i]) if math.isfinite(pts[k][i]) else None)
                for k in ("predicted", "low", "high", "residual")}}
            for i in range(pts["step"].size)]
    return render("prediction.md.j2", lang, pred=pred, embeds=embeds, rows=rows[-60:],
                  latest=latest, sha=pred.sha256(), decisions=decisions,
                  registered=latest["registered_sha256"] if latest else None,
                  line=residual_line(latest, lang), verdict=verdict)


def _health_page(config: RunConfig, history: Sequence[Mapping[str, Any]],
                 out: dict[str, str | bytes], lang: Language) -> str:
    _ = lang.gettext
    checks = list(config.watch.health)
    days = [{"date": h["date"], "day": h["day"], "checks": [
        {**r, "value_text": check_value(r, config, lang)} for r in h["health"]["checks"]]}
        for h in history]
    counts = {s: sum(1 for h in history for r in h["health"]["checks"] if r["status"] == s)
              for s in STATUSES}
    summary = _health_summary(history, len(checks), counts, lang)
    spec = health_heatmap(days, [c.id for c in checks], title=_("Days × checks"),
                          description=_("Heatmap of every sealed day (columns) against every "
                                        "health check (rows), coloured by status. {summary}")
                          .format(summary=summary), lang=lang)
    embed = publish(out, "watch/health", spec, "health", "chronicle-chart--heatmap")
    totals = {c.id: {s: sum(1 for h in history for r in h["health"]["checks"]
                            if r["id"] == c.id and r["status"] == s) for s in STATUSES}
              for c in checks}
    problems = [(h["date"], {**r, "value_text": check_value(r, config, lang)})
                for h in history for r in h["health"]["checks"] if r["status"] in ("warn", "fail")]
    return render("health.md.j2", lang, checks=checks, embed=embed, summary=summary,
                  totals=totals, problems=list(reversed(problems))[:200])


def _health_summary(history: Sequence[Mapping[str, Any]], n_checks: int,
                    counts: Mapping[str, int], lang: Language) -> str:
    _ = lang.gettext
    text = _("{days} days × {checks} checks: {ok} pass, {warn} warn, {fail} fail, {none} "
             "without data.").format(days=len(history), checks=n_checks, ok=counts["pass"],
                                     warn=counts["warn"], fail=counts["fail"],
                                     none=counts["no-data"])
    if history:
        latest = history[-1]
        text += _(" Latest day {date}: {status}.").format(
            date=lang.date(latest["date"]), status=lang.term(latest["health"]["status"],
                                                            "health status"))
    return text


def _risks_page(config: RunConfig, days: Sequence[Mapping[str, Any]],
                history: Sequence[Mapping[str, Any]], out: dict[str, str | bytes],
                lang: Language, events: Events = ()) -> str:
    spec, verdict = risks_signal(config, days, history, None, lang, events=events)
    embed = publish(out, "watch/risks", spec, "risks") if config.watch.risks else None
    # Each point's verdict as api/signals.json says it (analysis/signals.py).
    points = {p["id"]: p for p in risks_facts(history)["points"]}
    risks = []
    for r in config.watch.risks:
        changes, last = [], None
        for h in history:
            rec = next((x for x in h["risks"] if x["id"] == r.id), None)
            if rec and rec["status"] != last:
                changes.append((h["date"], rec["status"]))
                last = rec["status"]
        now = next((x for x in history[-1]["risks"] if x["id"] == r.id), None) if history \
            else None
        point = points.get(r.id)
        decided = next((e for e in events if e["kind"] == "decision"
                        and e["facts"]["risk"] == r.id), None)
        risks.append({"risk": r, "now": now, "changes": changes,
                      "verdict": risk_point_verdict(point, lang) if point else "",
                      "decision": None if decided is None else {
                          "text": decision_text(decided["facts"], lang),
                          "date": decided["days"][0],
                          "changes": [c["id"] for c in decided["facts"]["changes"]]}})
    return render("risks.md.j2", lang, risks=risks, embed=embed, verdict=verdict)


def _drop_by_length(config: RunConfig, series: Series, known: RunChanges,
                    out: dict[str, str | bytes], lang: Language) -> tuple[Any, dict[str, Any]]:
    """Return the drop-vs-sequence-length chart (None without data) and its table."""
    _ = lang.gettext
    fallback = config.run.sequence_length
    table = drop_by_length(series, known.sequence_lengths, fallback)
    drop = series.get("drop_fraction")
    if drop is None or not table:
        return None, table
    seq = lengths(series, known.sequence_lengths, fallback)
    lines = {}
    for name in table:
        mask = np.isfinite(drop) & ((seq == float(name)) if name != "unknown"
                                    else ~np.isfinite(seq))
        lines[_("{tokens} tokens").format(tokens=f"{int(name):,}") if name != "unknown"
              else _("unknown length")] = (series.timestamp[mask], drop[mask])
    summary = _("; ").join(_("{series}: p50 {value}").format(
        series=label, value=fmt_pct(table[name]["p50"], 2))
        for label, name in zip(lines, table, strict=True))
    spec = line_chart(
        lines, title=_("MoE token drop fraction by sequence length"),
        description=_("Line chart of the fraction of tokens the MoE router dropped over time, "
                      "one line per sequence length, context-length changes marked. "
                      "{summary}.").format(summary=summary),
        x=time_axis(lang), y=axis_for("drop_fraction", config, lang), lang=lang,
        options=Options(events=[e for e in change_events(known.changes, lang)
                                if e.kind == "context"],
                        rules=alert_rules(config, "drop_fraction", lang),
                        gap_seconds=config.failures.gap_minutes * 60))
    return publish(out, "watch/drop_by_sequence_length", spec, "drop by sequence length"), table


def _throughput_page(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                     failures: Sequence[FailureRecord], runs: Sequence[RunRecord],
                     out: dict[str, str | bytes], known: RunChanges, ledger: Ledger,
                     lang: Language) -> str:
    _ = lang.gettext
    events = [e.to_json() for e in ledger.events]
    th = summarize_throughput(days, ledger, config)
    experts = num_experts(runs)
    specs = _throughput_specs(config, series, days, failures, th, experts, lang, events)
    embeds = [(key, _(key), publish(out, stem, spec, name))
              for key, stem, name, spec in specs]
    by_length, drop_table = _drop_by_length(config, series, known, out, lang)
    if by_length is not None:
        at = next((i for i, e in enumerate(embeds) if e[0] == "Token dropping"), len(embeds))
        embeds.insert(at + 1, ("Token dropping by sequence length",
                               _("Token dropping by sequence length"), by_length))
    context = [c for c in known.changes if c["kind"] == "sequence_length"]
    return render("throughput.md.j2", lang, th=th, embeds=embeds, experts=experts,
                  dropping=dropping_verdict(dropping_facts(days, events), lang),
                  bound=math.log(experts) if experts else None,
                  by_length=drop_rows(days, lang)[1] == "sequence length",
                  drop_table=drop_table, sections=THROUGHPUT_SECTIONS,
                  context=[(c, describe(c, lang)) for c in context])


# The throughput page's charts: (heading, the anchor of its section). Headings are keys
# of the template too; a translated page shows each in its language, same anchor.
THROUGHPUT_SECTIONS = {
    N_("Compute-step and sustained"): "compute-step-and-sustained",
    N_("MFU distribution per day"): "mfu-distribution-per-day",
    N_("Token dropping"): "token-dropping",
    N_("Token dropping by sequence length"): "token-dropping-by-sequence-length",
    N_("Router entropy"): "router-entropy",
}


def _throughput_specs(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                      failures: Sequence[FailureRecord], th: Mapping[str, Any],
                      experts: int | None, lang: Language, events: Events = (),
                      ) -> list[tuple[str, str, str, dict[str, Any]]]:
    """Return (heading msgid, file stem, name, spec) of the throughput page's charts."""
    _ = lang.gettext
    marks = run_marks(series, failures, config, lang)
    day_axis = Axis(_("day (UTC)"), time=True)
    tok_s = _(" tok/s")
    rates = {_("compute-step tokens/s (p50)"): daily(days, "throughput",
                                                     "compute_tokens_per_second_p50"),
             _("sustained tokens/s"): daily(days, "throughput", "sustained_tokens_per_second")}
    out = [("Compute-step and sustained", "watch/throughput_daily", "throughput", line_chart(
        rates, title=_("Compute-step and sustained throughput per day"),
        description=_("Line chart of each day's median compute-step throughput and its "
                      "sustained throughput, tokens per second. Overall: compute-step "
                      "{compute}, sustained {sustained}, goodput {goodput}.").format(
            compute=lang.si(th["overall"]["compute_p50"], tok_s),
            sustained=lang.si(th["overall"]["sustained"], tok_s),
            goodput=fmt_pct(th["overall"]["goodput"])),
        x=day_axis, y=axis_for("tokens_per_second", config, lang), lang=lang,
        options=Options(spans=marks.spans,
                        rules=alert_rules(config, "tokens_per_second", lang))))]
    mfu = daily(days, "throughput", "mfu_p50")
    lo, hi = daily(days, "throughput", "mfu_p10"), daily(days, "throughput", "mfu_p90")
    p50 = _("MFU p50")
    bands = {p50: (lo[0], lo[1], hi[1])} if lo is not None and hi is not None and \
        lo[0].size == hi[0].size else {}
    out.append(("MFU distribution per day", "watch/mfu_daily", "mfu", line_chart(
        {p50: mfu}, title=_("MFU per day: median and p10–p90"),
        description=_("Line chart of each day's median model FLOPs utilisation with its p10 "
                      "to p90 band. Latest median: {value}.").format(
            value=show("mfu", mfu[1][-1] if mfu else None, config, lang)),
        x=day_axis, y=axis_for("mfu", config, lang), lang=lang,
        options=Options(bands=bands, rules=alert_rules(config, "mfu", lang)))))
    drop, _sentence = dropping_signal(config, days, 260, lang, events=events)
    out.append(("Token dropping", "watch/drop_regimes", "drop", drop))
    ent = series.finite("router_entropy")
    if ent is not None:
        rules = alert_rules(config, "router_entropy", lang)
        if experts:
            rules.append((math.log(experts), _("uniform bound ln {experts}").format(
                experts=experts)))
        out.append(("Router entropy", "watch/router_entropy", "entropy", line_chart(
            {display("router_entropy", config, lang).label: ent},
            title=_("Router entropy against the uniform bound"),
            description=_("Line chart of the router's mean routing entropy over time. "
                          "Latest: {value}.").format(
                value=show("router_entropy", ent[1][-1], config, lang)),
            x=time_axis(lang), y=axis_for("router_entropy", config, lang), lang=lang,
            options=Options(rules=rules, spans=marks.spans,
                            gap_seconds=config.failures.gap_minutes * 60))))
    return out


def num_experts(runs: Sequence[RunRecord]) -> int | None:
    """Return the number of experts in the newest run config that names it."""
    for run in reversed(runs):
        model = run.config.get("model") if isinstance(run.config, dict) else None
        n = model.get("num_experts") if isinstance(model, dict) else None
        if isinstance(n, int) and n > 1:
            return n
    return None


def _fig(value: float | None, lang: Language, claimed: float | None = None,
         unit: str | None = None) -> str:
    """Return a claim's number, or the figure it is set against, with as many digits as
    the claim was made with (`claimed`; a claim of 18.75T is not shown as the site's
    18.8T, nor the figure it is tested against with fewer digits than the claim), with
    its `unit` (a percentage as every page writes one: 21.2%)."""
    if value is None:
        return lang.gettext("not known yet")
    if unit in ("percent", "%"):
        return fmt_num(value, 1, "%")
    if unit:
        return f"{_fig(value, lang, claimed)} {unit}"
    if abs(value) >= 1e6:
        basis = claimed if claimed is not None and math.isfinite(claimed) else value
        return fmt_si(value, zh=lang.zh, digits=exact_digits(basis))
    return fmt_plain(value)


def _claimed(statement: str, value: float, lang: Language) -> str:
    """Return the claimed value to show beside a claim's statement, in `lang` and with as
    many digits as it was claimed with; "" when the statement itself writes it (792 in
    "The run uses 792 GPUs", 18.75T in "18.75T tokens"): a claim is said once."""
    exact = fmt_si(value, zh=False, digits=exact_digits(value)) if abs(value) >= 1e6 else (
        f"{value:,.0f}" if float(value).is_integer() else f"{value:,}")
    forms = {exact, exact.replace(",", ""), fmt_plain(value), f"{value:g}"}
    if any(re.search(rf"(?<![\d.,]){re.escape(f)}(?![\d])", statement) for f in forms):
        return ""
    return fmt_si(value, zh=True, digits=exact_digits(value)) if lang.zh and abs(value) >= 1e6 \
        else exact


def run_pages(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
              days: Sequence[Mapping[str, Any]], runs: Sequence[RunRecord],
              artifacts: tuple[Artifact, Artifact], snapshot: str | None,
              lang: Language, known: RunChanges | None = None,
              history: Sequence[Mapping[str, Any]] | None = None,
              state: RunState | None = None, ledger: Ledger | None = None
              ) -> dict[str, str | bytes]:
    """Return the prediction, health, risks, throughput, cost and claims pages and charts.

    `artifacts` names (path, sha256) of chronicle.yml and the newest manifest: the claims
    cite them as the evidence a configured figure was read from. `known` are the run's
    changes (risks watched from a change, dropping by sequence length); `history` is the
    watchers' verdicts per sealed day (recomputed when not given); `state` the run's state
    as of the newest snapshot (a finished run has no projection); `ledger` every event of
    the run (analysis/ledger.py; built from the same inputs when not given).
    """
    # Load inputs.
    known = known or RunChanges()
    if history is None:
        history = watch_history(days, series, failures, config, known.changes)
    if ledger is None:
        ledger = build_ledger(LedgerInputs(config, days, series, failures, known.changes,
                                           state.finish if state is not None else None))

    # Process.
    out: dict[str, str | bytes] = {}
    events = [e.to_json() for e in ledger.events]
    out["prediction.md"] = _prediction_page(config, series, history, failures, out, lang,
                                            events)
    out["health.md"] = _health_page(config, history, out, lang)
    out["risks.md"] = _risks_page(config, days, history, out, lang, events)
    out["throughput.md"] = _throughput_page(config, series, days, failures, runs, out, known,
                                            ledger, lang)
    cost = summarize_cost(days, config, state)
    out["cost.md"] = render("cost.md.j2", lang, cost=cost, prices=sorted(
        config.run.prices_usd_per_accelerator_hour.items()), budget=config.run.token_budget)
    figs = figures(config, cost, days, *artifacts, restarts=ledger.totals()["restarts"])
    claims = [{**c, "claimed": _claimed(c["statement"], c["value"], lang),
               "figure_text": _fig(c["figure"], lang, claimed=c["value"], unit=c["unit"])}
              for c in check_claims(config, figs)]
    out["claims.md"] = render("claims.md.j2", lang, claims=claims, snapshot=snapshot)
    return out
