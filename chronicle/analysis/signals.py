"""The three signals readers watch, as figures computed once (analysis stage, pure).

1. `prediction`: is the eval loss leaving the pre-registered prediction?
2. `dropping`: does token dropping rebound when the context is extended?
3. `risks`: which risk point fires first?

Every figure is read from the sealed day JSON (its `prediction`, `moe`, `health` and
`risks`), never recomputed from the rows: the home card, the signal's own page, the
feed item of each day and `api/signals.json` say the same numbers, and a sealed day's
verdict stays what it was sealed with. The sentences saying them are render/signals.py's.

Token dropping has one baseline: when a risk point watches the drop fraction's rebound
after a sequence-length change, its own baseline (the p50 over the 24 hours before the
change, analysis/risks.py); otherwise the p50 of the last sealed day at the previous
length. Its alert is the day's `drop_fraction` health check (worst window against its
line), so the card never says "below the line" on a day the check warned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# How the dropping baseline was taken (`dropping.baseline`).
BASELINE_RISK = "p50 over the 24 h before the change (the risk point's baseline)"
BASELINE_LAST_DAY = "p50 of the last day at the previous sequence length"
BASELINE_REGIME = "p50 of the last day of the previous phase"
DROP = "drop_fraction"
PREDICTION_KEYS = ("date", "fraction", "actual", "predicted", "low", "high", "residual",
                   "outside_band", "step")


Events = Sequence[Mapping[str, Any]]  # the ledger's (analysis/ledger.py Event.to_json)


def signals(days: Sequence[Mapping[str, Any]], events: Events = ()) -> dict[str, Any]:
    """Return {"as_of", "prediction", "dropping", "risks"}: each signal's figures as of the
    newest sealed day of `days` (oldest first); with the ledger's `events`, each also says
    what held over the whole run so far (`run`)."""
    return {"as_of": days[-1]["date"] if days else None,
            "prediction": prediction_facts(days, events),
            "dropping": dropping_facts(days, events), "risks": risks_facts(days, events)}


def until(events: Events, day: str | None) -> list[Mapping[str, Any]]:
    """Return the events that began by the end of `day` (all of them for None)."""
    return [e for e in events if day is None or str(e["days"][0]) <= day]


def prediction_facts(days: Sequence[Mapping[str, Any]],
                     events: Events = ()) -> dict[str, Any] | None:
    """Return the newest sealed comparison of an eval with the prediction, or None when
    no day compared one (or no prediction is configured); with `events`, `run`: how many
    evals the days compared, how many of every eval fell outside the band, the first and
    the furthest of those."""
    for d in reversed(days):
        p = d.get("prediction")
        if isinstance(p, Mapping) and p.get("residual") is not None:
            out = {"date": d["date"], **{k: p.get(k) for k in PREDICTION_KEYS[1:]}}
            out["run"] = _prediction_run(days, until(events, d["date"])) if events else None
            return out
    return None


def _prediction_run(days: Sequence[Mapping[str, Any]], events: Events) -> dict[str, Any]:
    evals = sum(int((d.get("prediction") or {}).get("evals_this_day") or 0) for d in days)
    outside = [e for e in events if e["kind"] == "eval_outside_band"]
    out: dict[str, Any] = {"evals": evals, "outside": len(outside), "first": None,
                           "furthest": None}
    if outside:
        far = max(outside, key=lambda e: abs(float(e["facts"]["residual"] or 0.0)))
        out["first"] = outside[0]["days"][0]
        out["furthest"] = {"date": far["days"][0], "step": far["facts"]["step"],
                           "residual": far["facts"]["residual"],
                           "fraction": far["facts"]["fraction"]}
    return out


def drop_regimes(days: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Return what a regime is ("sequence_length" when the days record
    `moe.by_sequence_length`, else "phase") and each sealed day's p50 per regime, oldest
    first: {"date", "fraction", "regime" (a length as int, or a phase name), "p50"}."""
    by_length = any((d.get("moe") or {}).get("by_sequence_length") for d in days)
    rows: list[dict[str, Any]] = []
    for d in days:
        f = (d.get("tokens") or {}).get("budget_fraction")
        moe = d.get("moe") or {}
        if f is None:
            continue
        if by_length:
            for length, stats in sorted((moe.get("by_sequence_length") or {}).items(),
                                        key=lambda kv: _length(kv[0])):
                if stats.get("p50") is not None and _length(length) > 0:
                    rows.append({"date": d["date"], "fraction": f,
                                 "regime": _length(length), "p50": stats["p50"]})
        elif moe.get("drop_fraction_p50") is not None:
            rows.append({"date": d["date"], "fraction": f, "regime": d.get("phase"),
                         "p50": moe["drop_fraction_p50"]})
    return ("sequence_length" if by_length else "phase"), rows


def dropping_facts(days: Sequence[Mapping[str, Any]], events: Events = ()) -> dict[str, Any]:
    """Return token dropping in the newest regime against the one before it; with the
    ledger's `events`, `run`: since the newest sequence-length change, on how many days
    the drop alert fired, and when the rebound risk point fired (its worst window
    against its baseline)."""
    kind, rows = drop_regimes(days)
    out: dict[str, Any] = {"regime_kind": kind, "date": None, "sequence_length": None,
                           "phase": None, "p50": None, "baseline_sequence_length": None,
                           "baseline_phase": None, "baseline_p50": None, "baseline": None,
                           "baseline_date": None, "ratio": None, "alert": None}
    if not rows:
        return out
    last = rows[-1]
    key, base_key = (("sequence_length", "baseline_sequence_length") if kind == "sequence_length"
                     else ("phase", "baseline_phase"))
    out.update({"date": last["date"], key: last["regime"], "p50": last["p50"]})
    before = [r for r in rows if r["regime"] != last["regime"] and r["fraction"] < last["fraction"]]
    if before:
        prev = before[-1]
        out[base_key] = prev["regime"]
        out.update({"baseline_p50": prev["p50"], "baseline_date": prev["date"],
                    "baseline": BASELINE_LAST_DAY if kind == "sequence_length"
                    else BASELINE_REGIME})
        risk = _rebound_risk(days[-1]) if kind == "sequence_length" else None
        if risk is not None:
            out.update({"baseline_p50": risk["baseline"], "baseline_date": None,
                        "baseline": BASELINE_RISK, "risk": risk["id"]})
        if out["baseline_p50"]:
            out["ratio"] = last["p50"] / out["baseline_p50"]
    out["alert"] = _alert(days, last["date"])
    out["run"] = _dropping_run(until(events, last["date"])) if events else None
    return out


def _dropping_run(events: Events) -> dict[str, Any] | None:
    changes = [e for e in events if e["kind"] == "change"
               and e["facts"]["change"]["kind"] == "sequence_length"]
    if not changes:
        return None
    change = changes[-1]
    since = str(change["days"][0])
    alerts = sorted({str(e["days"][0]) for e in events if e["kind"] == "alert"
                     and _drops(e["facts"]["check"].get("metric")) and e["days"][0] >= since})
    rebound = next((e for e in events if e["kind"] == "risk_fired"
                    and e["facts"].get("after") == "sequence_length"
                    and _drops(e["facts"].get("metric"))), None)
    return {"since": since, "from": change["facts"]["change"].get("before"),
            "to": change["facts"]["change"].get("after"), "alert_days": len(alerts),
            "first_alert": alerts[0] if alerts else None,
            "last_alert": alerts[-1] if alerts else None,
            "rebound": None if rebound is None else {
                "date": rebound["days"][0], "title": rebound["facts"].get("title"),
                "value": rebound["facts"].get("value"),
                "threshold": rebound["facts"].get("threshold"),
                "window_minutes": rebound["facts"].get("window_minutes")}}


def _drops(metric: Any) -> bool:
    return any(str(m).endswith(DROP) for m in metric or ())


def risks_facts(days: Sequence[Mapping[str, Any]], events: Events = ()) -> dict[str, Any]:
    """Return each risk point as the newest sealed day records it, and which fired first;
    with the ledger's `events`, `run`: every risk point that fired, in order, and the
    decision taken at each (analysis/ledger.py)."""
    records: Sequence[Mapping[str, Any]] = next(
        (d["risks"] for d in reversed(days) if isinstance(d.get("risks"), list)), [])
    points = []
    for r in records:
        evidence = r.get("evidence") or {}
        fired = r.get("status") == "triggered"
        points.append({
            "id": r["id"], "title": r.get("title") or r["id"], "status": r.get("status"),
            "since": r.get("since"), "watch": list(r.get("watch") or [0.0, 0.0]),
            "rule": r.get("rule"),
            "value": evidence.get("value") if fired else r.get("value"),
            "threshold": evidence.get("threshold") if fired else None,
            "fired_on": evidence.get("date") if fired else None,
        })
    fired = sorted((p for p in points if p["fired_on"] or p["status"] == "triggered"),
                   key=lambda p: (p["fired_on"] or p["since"] or "", p["id"]))
    first = fired[0] if fired else None
    seen = until(events, days[-1]["date"] if days else None)
    return {"date": days[-1]["date"] if days else None,
            "first_fired": {"id": first["id"], "date": first["fired_on"] or first["since"]}
            if first else None,
            "points": points,
            "run": {"fired": [{"id": e["facts"]["risk"], "title": e["facts"].get("title"),
                               "date": e["days"][0]} for e in seen if e["kind"] == "risk_fired"],
                    "decisions": [dict(e["facts"], date=e["days"][0]) for e in seen
                                  if e["kind"] == "decision"]} if events else None}


def _length(text: Any) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return 0  # "unknown": not a regime a reader can compare


def _rebound_risk(day: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return the day's risk record watching the drop fraction's rebound after a sequence
    length change, once it has a baseline."""
    for r in day.get("risks") or ():
        metric = [str(m) for m in r.get("metric") or ()]
        if (r.get("after") == "sequence_length" and r.get("baseline")
                and any(m.endswith(DROP) for m in metric)):
            return dict(r)
    return None


def _alert(days: Sequence[Mapping[str, Any]], date: str) -> dict[str, Any] | None:
    """Return the `drop_fraction` health check of `date` (its line, worst value, status)."""
    day = next((d for d in reversed(days) if d["date"] == date), None)
    for check in ((day or {}).get("health") or {}).get("checks") or ():
        if any(str(m).endswith(DROP) for m in check.get("metric") or ()):
            return {"check": check.get("id"), "line": check.get("threshold"),
                    "rule": check.get("rule"), "value": check.get("value"),
                    "status": check.get("status"),
                    "window_minutes": check.get("window_minutes")}
    return None
