"""The three signals readers watch, as data for their charts and one-line verdicts
(render stage, pure).

1. Is the eval loss leaving the pre-registered prediction (the residual and its band)?
2. Does token dropping rebound when the context is extended (drop fraction per
   sequence-length regime; per phase until the day JSON records sequence lengths in
   `moe.by_sequence_length`)?
3. Which risk point fires first?

Verdicts work from day-JSON shaped records (`prediction`, `risks`, `moe`), so the home
page (verdicts recomputed at build time) and a feed item (verdicts as sealed) say the
same thing the same way. Sentences stay true at any point of the run, including after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.render.formats import fmt_num, fmt_pct, plural

NO_PREDICTION = "No loss prediction is configured for this run."


def prediction_verdict(p: Mapping[str, Any] | None, configured: bool = True) -> str:
    """Return one sentence: the latest eval against the prediction and its band."""
    if not configured:
        return NO_PREDICTION
    if not p or p.get("residual") is None:
        return "No eval has been compared with the prediction yet."
    r = float(p["residual"])
    side = "above" if r > 0 else "below" if r < 0 else "on"
    gap = "exactly on the prediction" if side == "on" else \
        f"{fmt_num(abs(r), 4)} {side} the prediction ({fmt_num(p['predicted'], 3)})"
    text = (f"Eval loss {fmt_num(p['actual'], 3)} at {fmt_pct(p['fraction'])} of the budget is "
            f"{gap}")
    if p.get("outside_band") is None:
        return text + "; the prediction has no band here."
    half = (float(p["high"]) - float(p["low"])) / 2
    where = "outside" if p["outside_band"] else "inside"
    return text + f": {where} the band (±{fmt_num(half, 4)})."


def drop_rows(days: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Return the daily median drop fraction per regime, and what a regime is.

    A regime is a sequence length when the days record `moe.by_sequence_length`
    (`{"4096": {"p50", "max", "rows"}}`), else a phase of the run.
    """
    by_length = any((d.get("moe") or {}).get("by_sequence_length") for d in days)
    rows = []
    for d in days:
        f = (d.get("tokens") or {}).get("budget_fraction")
        moe = d.get("moe") or {}
        if f is None:
            continue
        if by_length:
            for length, stats in sorted((moe.get("by_sequence_length") or {}).items(),
                                        key=lambda kv: int(kv[0])):
                if stats.get("p50") is not None:
                    rows.append({"f": f, "p50": stats["p50"], "date": d["date"],
                                 "regime": f"{int(length):,} tokens"})
        elif moe.get("drop_fraction_p50") is not None:
            rows.append({"f": f, "p50": moe["drop_fraction_p50"], "date": d["date"],
                         "regime": d.get("phase") or "no phase"})
    return rows, "sequence length" if by_length else "phase"


def dropping_verdict(rows: Sequence[Mapping[str, Any]], kind: str,
                     alert: float | None) -> str:
    """Return one sentence: dropping in the latest regime against the one before it."""
    if not rows:
        return "No token dropping has been logged yet."
    last = rows[-1]
    now = f"{fmt_pct(last['p50'], 2)} p50 on {last['date']}"
    before = [r for r in rows if r["regime"] != last["regime"] and r["f"] < last["f"]]
    if before:
        prev = before[-1]["regime"]
        values = sorted(r["p50"] for r in rows if r["regime"] == prev)
        median = values[len(values) // 2]
        text = (f"Token dropping at {last['regime']}: {now}, against {fmt_pct(median, 2)} at "
                f"{prev}")
        if median > 0:
            text += f" (×{fmt_num(last['p50'] / median, 1)})"
    else:
        text = f"Token dropping: {now}, one {kind} so far ({last['regime']})"
    if alert is not None:
        over = last["p50"] > alert
        text += f"; {'above' if over else 'below'} the alert line at {fmt_pct(alert)}"
    return text + "."


def risk_rows(records: Sequence[Mapping[str, Any]],
              fraction_of: Mapping[str, float]) -> list[dict[str, Any]]:
    """Return the risk timeline's rows from a day's risk records (`fraction_of`: day ->
    budget fraction, to place where each triggered)."""
    out = []
    for r in records:
        watch = r.get("watch") or [0.0, 0.0]
        at = None
        if r.get("status") == "triggered" and r.get("evidence"):
            at = fraction_of.get(r["evidence"].get("date"))
        out.append({"title": r.get("title") or r["id"], "lo": float(watch[0]),
                    "hi": float(watch[1]), "status": r["status"], "at": at})
    return out


def risks_verdict(records: Sequence[Mapping[str, Any]]) -> str:
    """Return one sentence: which risk point fired first, and where the others stand."""
    if not records:
        return "No risk points are configured for this run."
    fired = sorted((r for r in records if r["status"] == "triggered"),
                   key=lambda r: ((r.get("evidence") or {}).get("date") or r.get("since") or "",
                                  r["id"]))
    counts = {s: sum(1 for r in records if r["status"] == s)
              for s in ("watching", "upcoming", "passed")}
    rest = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    if fired:
        first = fired[0]
        when = (first.get("evidence") or {}).get("date") or first.get("since")
        text = f"{first.get('title') or first['id']} fired first, on {when}"
        if len(fired) > 1:
            text += f"; {plural(len(fired) - 1, 'other risk point')} fired since"
        return text + (f"; {rest}." if rest else ".")
    if counts["passed"] == len(records):
        if len(records) == 1:
            return "No risk point fired: the one configured passed its window."
        return f"No risk point fired: all {len(records)} passed their windows."
    watching = [r for r in records if r["status"] == "watching"]
    text = "No risk point has fired"
    if watching:
        w = watching[0]
        lo, hi = (w.get("watch") or [0, 0])[:2]
        text += (f"; watching {w.get('title') or w['id']} ({fmt_pct(lo, 0)}–{fmt_pct(hi, 0)} "
                 "of the budget)")
    return text + (f"; {rest}." if rest else ".")
