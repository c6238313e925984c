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

from chronicle.render.formats import fmt_num, fmt_pct
from chronicle.render.i18n import N_, Language

NO_PREDICTION = N_("No loss prediction is configured for this run.")


def prediction_verdict(p: Mapping[str, Any] | None, lang: Language,
                       configured: bool = True) -> str:
    """Return one sentence: the latest eval against the prediction and its band."""
    _ = lang.gettext
    if not configured:
        return _(NO_PREDICTION)
    if not p or p.get("residual") is None:
        return _("No eval has been compared with the prediction yet.")
    r = float(p["residual"])
    if r == 0:
        gap = _("exactly on the prediction")
    else:
        gap = (_("{gap} above the prediction ({predicted})") if r > 0 else
               _("{gap} below the prediction ({predicted})")).format(
            gap=fmt_num(abs(r), 4), predicted=fmt_num(p["predicted"], 3))
    text = _("Eval loss {actual} at {share} of the budget is {gap}").format(
        actual=fmt_num(p["actual"], 3), share=fmt_pct(p["fraction"]), gap=gap)
    if p.get("outside_band") is None:
        return text + _("; the prediction has no band here.")
    half = fmt_num((float(p["high"]) - float(p["low"])) / 2, 4)
    return text + (_(": outside the band (±{half}).") if p["outside_band"]
                   else _(": inside the band (±{half}).")).format(half=half)


def drop_rows(days: Sequence[Mapping[str, Any]],
              lang: Language) -> tuple[list[dict[str, Any]], str]:
    """Return the daily median drop fraction per regime (named in `lang`), and what a
    regime is (a msgid: "sequence length" or "phase").

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
                                 "regime": lang.gettext("{tokens} tokens").format(
                                     tokens=f"{int(length):,}")})
        elif moe.get("drop_fraction_p50") is not None:
            rows.append({"f": f, "p50": moe["drop_fraction_p50"], "date": d["date"],
                         "regime": d.get("phase") or lang.gettext("no phase")})
    return rows, N_("sequence length") if by_length else N_("phase")


def dropping_verdict(rows: Sequence[Mapping[str, Any]], kind: str,
                     alert: float | None, lang: Language) -> str:
    """Return one sentence: dropping in the latest regime against the one before it."""
    _ = lang.gettext
    if not rows:
        return _("No token dropping has been logged yet.")
    last = rows[-1]
    now = _("{share} p50 on {date}").format(share=fmt_pct(last["p50"], 2),
                                           date=lang.date(last["date"]))
    before = [r for r in rows if r["regime"] != last["regime"] and r["f"] < last["f"]]
    if before:
        prev = before[-1]["regime"]
        values = sorted(r["p50"] for r in rows if r["regime"] == prev)
        median = values[len(values) // 2]
        text = _("Token dropping at {regime}: {now}, against {median} at {previous}").format(
            regime=last["regime"], now=now, median=fmt_pct(median, 2), previous=prev)
        if median > 0:
            text += f" (×{fmt_num(last['p50'] / median, 1)})"
    else:
        text = _("Token dropping: {now}, one {kind} so far ({regime})").format(
            now=now, kind=_(kind), regime=last["regime"])
    if alert is not None:
        text += (_("; above the alert line at {line}") if last["p50"] > alert
                 else _("; below the alert line at {line}")).format(line=fmt_pct(alert))
    return text + _(".")


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


def risks_verdict(records: Sequence[Mapping[str, Any]], lang: Language) -> str:
    """Return one sentence: which risk point fired first, and where the others stand."""
    _ = lang.gettext
    if not records:
        return _("No risk points are configured for this run.")
    fired = sorted((r for r in records if r["status"] == "triggered"),
                   key=lambda r: ((r.get("evidence") or {}).get("date") or r.get("since") or "",
                                  r["id"]))
    counts = {s: sum(1 for r in records if r["status"] == s)
              for s in ("watching", "upcoming", "passed")}
    rest = _(", ").join(f"{n} {lang.term(s, 'risk status')}" for s, n in counts.items() if n)
    tail = _("; {rest}.").format(rest=rest) if rest else _(".")
    if fired:
        first = fired[0]
        when = (first.get("evidence") or {}).get("date") or first.get("since")
        text = _("{risk} fired first, on {date}").format(
            risk=first.get("title") or first["id"], date=lang.date(when))
        if len(fired) > 1:
            text += _("; {others} fired since").format(
                others=lang.plural(len(fired) - 1, "other risk point"))
        return text + tail
    if counts["passed"] == len(records):
        if len(records) == 1:
            return _("No risk point fired: the one configured passed its window.")
        return _("No risk point fired: all {n} passed their windows.").format(n=len(records))
    watching = [r for r in records if r["status"] == "watching"]
    text = _("No risk point has fired")
    if watching:
        w = watching[0]
        lo, hi = (w.get("watch") or [0, 0])[:2]
        text += _("; watching {risk} ({low}–{high} of the budget)").format(
            risk=w.get("title") or w["id"], low=fmt_pct(lo, 0), high=fmt_pct(hi, 0))
    return text + tail
