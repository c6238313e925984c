"""The run-wide watch pages: prediction, health, risks, throughput, cost, claims (render
stage, pure).

`run_pages` works from the stitched series, the failures, the sealed days' JSON, the run
records and the config; it returns {path relative to docs/: content}.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.changes import RunChanges
from chronicle.analysis.claims import check_claims, figures
from chronicle.analysis.context_length import drop_by_length, lengths
from chronicle.analysis.cost import summarize_cost, summarize_throughput
from chronicle.analysis.health import STATUSES
from chronicle.analysis.prediction import eval_points, predict
from chronicle.analysis.series import Series
from chronicle.analysis.verdicts import watch_history
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, RunRecord
from chronicle.render import charts as ch
from chronicle.render import fmt_si, render
from chronicle.render.change_text import change_events, describe
from chronicle.render.day import chart_embed, chart_title
from chronicle.render.prose import residual_line
from chronicle.render.svg import render_svg

Artifact = tuple[str, str | None]  # (path, sha256, None if the file is missing)

MARKS = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail", "no-data": "· no data"}
SHORT = {"pass": "✓", "warn": "⚠", "fail": "✗", "no-data": "·"}


def _noon(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp() + 43200.0


def _chart(out: dict[str, str | bytes], name: str, spec: dict[str, Any], title: str) -> Any:
    out[f"watch/{name}.vl.json"] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    out[f"watch/{name}.svg"] = render_svg(spec)
    return chart_embed(f"watch/{name}.vl.json", f"watch/{name}.svg", chart_title(spec, title))


def _daily(days: Sequence[Mapping[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray] | None:
    pts = [(_noon(d["date"]), d[key]) for d in days if d.get(key) is not None]
    if not pts:
        return None
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts], dtype=float)


def _prediction_page(config: RunConfig, series: Series, history: Sequence[Mapping[str, Any]],
                     out: dict[str, str | bytes]) -> str:
    pred = config.watch.prediction
    if pred is None:
        return render("prediction.md.j2", pred=None, embed=None, rows=[], latest=None,
                      sha=None, registered=None, line=None)
    pts = eval_points(series, config, pred)
    grid = np.linspace(0.0, 1.0, 201)[1:]
    p, lo, hi = predict(pred, grid, config.run.token_budget)
    ok = np.isfinite(p)
    lines = {"predicted": (grid[ok], p[ok])}
    seen = np.isfinite(pts["fraction"])
    if seen.any():
        lines = {"eval loss (actual)": (pts["fraction"][seen], pts["actual"][seen]), **lines}
    band_ok = ok & np.isfinite(lo) & np.isfinite(hi)
    bands = {"predicted band": (grid[band_ok], lo[band_ok], hi[band_ok])} if band_ok.any() \
        else None
    spec = ch.line_chart(lines, title="Eval loss: actual vs pre-registered prediction",
                         y_title=pred.metric, x_kind="quantitative",
                         x_title="fraction of the token budget", bands=bands)
    embed = _chart(out, "prediction", spec, "prediction")
    rows = [{"step": int(pts["step"][i]), "fraction": float(pts["fraction"][i]),
             "actual": float(pts["actual"][i]),
             **{k: (float(pts[k][i]) if math.isfinite(pts[k][i]) else None)
                for k in ("predicted", "low", "high", "residual")}}
            for i in range(pts["step"].size)]
    latest = next((h["prediction"] for h in reversed(history) if h.get("prediction")), None)
    return render("prediction.md.j2", pred=pred, embed=embed, rows=rows[-60:], latest=latest,
                  sha=pred.sha256(), registered=latest["registered_sha256"] if latest else None,
                  line=residual_line(latest))


def _health_page(config: RunConfig, history: Sequence[Mapping[str, Any]]) -> str:
    checks = list(config.watch.health)
    matrix = [(h["date"], h["day"], h["health"]["status"],
               [SHORT[c["status"]] for c in h["health"]["checks"]]) for h in history]
    totals = {c.id: {s: sum(1 for h in history for r in h["health"]["checks"]
                            if r["id"] == c.id and r["status"] == s) for s in STATUSES}
              for c in checks}
    problems = [(h["date"], r) for h in history for r in h["health"]["checks"]
                if r["status"] in ("warn", "fail")]
    return render("health.md.j2", checks=checks, matrix=list(reversed(matrix)), totals=totals,
                  problems=list(reversed(problems))[:200], marks=MARKS)


def _risks_page(config: RunConfig, history: Sequence[Mapping[str, Any]]) -> str:
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
        risks.append({"risk": r, "now": now, "changes": changes})
    return render("risks.md.j2", risks=risks)


def _drop_by_length(config: RunConfig, series: Series, known: RunChanges,
                    out: dict[str, str | bytes]) -> tuple[Any, dict[str, Any]]:
    """Return the drop-vs-sequence-length chart (None without data) and its table."""
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
        lines[f"{name} tokens" if name != "unknown" else "unknown length"] = (
            series.timestamp[mask], drop[mask])
    events = [e for e in change_events(known.changes) if e.kind == "context"]
    spec = ch.line_chart(lines, title="MoE token drop fraction by sequence length",
                         y_title="fraction of tokens dropped", y_format=".1%",
                         events=events, rules=[(0.07, "alert 7%")])
    return _chart(out, "drop_by_sequence_length", spec, "drop by sequence length"), table


def _throughput_page(config: RunConfig, series: Series, days: Sequence[Mapping[str, Any]],
                     failures: Sequence[FailureRecord], runs: Sequence[RunRecord],
                     out: dict[str, str | bytes], known: RunChanges) -> str:
    th = summarize_throughput(days, failures, config)
    embeds = []
    rows = th["days"]
    rates = {k: v for k, v in (("compute-step tokens/s (p50)", _daily(rows, "compute")),
                               ("sustained tokens/s", _daily(rows, "sustained"))) if v is not None}
    if rates:
        spec = ch.line_chart(rates, title="Compute-step vs sustained throughput per day",
                             y_title="tokens/s", rules=[(2.0e6, "alert 2.0M")])
        embeds.append(("Compute-step vs sustained", _chart(out, "throughput_daily", spec,
                                                           "throughput")))
    mfu = _daily(rows, "mfu_p50")
    if mfu is not None:
        band = [(_noon(r["date"]), r["mfu_p10"], r["mfu_p90"]) for r in rows
                if r["mfu_p10"] is not None and r["mfu_p90"] is not None]
        arr = np.array(band, dtype=float).reshape(-1, 3)
        bands = {"MFU p10–p90": (arr[:, 0], arr[:, 1], arr[:, 2])}
        spec = ch.line_chart({"MFU p50": mfu}, title="MFU per day (percent of peak FLOPs)",
                             y_title="MFU (percent)", bands=bands if band else None,
                             rules=[(15.0, "alert 15%")])
        embeds.append(("MFU distribution per day", _chart(out, "mfu_daily", spec, "mfu")))
    drop = {k: v for k, v in (("drop fraction p50", _daily(rows, "drop_p50")),
                              ("drop fraction max", _daily(rows, "drop_max"))) if v is not None}
    if drop:
        spec = ch.line_chart(drop, title="MoE token drop fraction per day",
                             y_title="fraction of tokens dropped", y_format=".1%",
                             rules=[(0.07, "alert 7%")])
        embeds.append(("Token dropping", _chart(out, "drop_daily", spec, "drop")))
    by_length, drop_table = _drop_by_length(config, series, known, out)
    if by_length is not None:
        embeds.append(("Token dropping by sequence length", by_length))
    experts = num_experts(runs)
    ent = series.get("router_entropy")
    if ent is not None and np.isfinite(ent).any():
        ok = np.isfinite(ent)
        rules = [(5.92, "alert 5.92")]
        if experts:
            rules.append((math.log(experts), f"uniform bound ln {experts}"))
        spec = ch.line_chart({"router entropy": (series.timestamp[ok], ent[ok])},
                             title="Router entropy against the uniform bound",
                             y_title="entropy (nats)", rules=rules)
        embeds.append(("Router entropy", _chart(out, "router_entropy", spec, "entropy")))
    context = [c for c in known.changes if c["kind"] == "sequence_length"]
    return render("throughput.md.j2", th=th, embeds=embeds, experts=experts,
                  bound=math.log(experts) if experts else None, drop_table=drop_table,
                  context=[(c, describe(c)) for c in context])


def num_experts(runs: Sequence[RunRecord]) -> int | None:
    """Return the number of experts in the newest run config that names it."""
    for run in reversed(runs):
        model = run.config.get("model") if isinstance(run.config, dict) else None
        n = model.get("num_experts") if isinstance(model, dict) else None
        if isinstance(n, int) and n > 1:
            return n
    return None


def _fig(value: float | None) -> str:
    if value is None:
        return "not known yet"
    return fmt_si(value) if abs(value) >= 1e6 else f"{value:,.6g}"


def run_pages(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
              days: Sequence[Mapping[str, Any]], runs: Sequence[RunRecord],
              artifacts: tuple[Artifact, Artifact], snapshot: str | None,
              known: RunChanges | None = None) -> dict[str, str | bytes]:
    """Return the prediction, health, risks, throughput, cost and claims pages and charts.

    `artifacts` names (path, sha256) of chronicle.yml and the newest manifest: the claims
    cite them as the evidence a configured figure was read from. `known` are the run's
    changes (risks watched from a change, dropping by sequence length).
    """
    # Load inputs.
    known = known or RunChanges()
    history = watch_history(days, series, failures, config, known.changes)

    # Process.
    out: dict[str, str | bytes] = {}
    out["prediction.md"] = _prediction_page(config, series, history, out)
    out["health.md"] = _health_page(config, history)
    out["risks.md"] = _risks_page(config, history)
    out["throughput.md"] = _throughput_page(config, series, days, failures, runs, out, known)
    cost = summarize_cost(days, config)
    out["cost.md"] = render("cost.md.j2", cost=cost, prices=sorted(
        config.run.prices_usd_per_accelerator_hour.items()), budget=config.run.token_budget)
    figs = figures(config, cost, days, *artifacts)
    claims = [{**c, "value_text": _fig(c["value"]), "figure_text": _fig(c["figure"])}
              for c in check_claims(config, figs)]
    out["claims.md"] = render("claims.md.j2", claims=claims, snapshot=snapshot)
    return out
