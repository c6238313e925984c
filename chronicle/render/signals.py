"""The three signals readers watch, as data for their charts and one-line verdicts
(render stage, pure).

1. Is the eval loss leaving the pre-registered prediction (the residual and its band)?
2. Does token dropping rebound when the context is extended (drop fraction per
   sequence-length regime; per phase until the day JSON records sequence lengths in
   `moe.by_sequence_length`)?
3. Which risk point fires first?

Verdicts say the figures analysis/signals.py reads from the sealed day JSON, so the home
card, the signal's page, a day's feed item and `api/signals.json` say the same thing the
same way. Sentences stay true at any point of the run, including after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.analysis.signals import (
    BASELINE_RISK,
    PREDICTION_KEYS,
    drop_regimes,
)
from chronicle.render.change_text import token_pair
from chronicle.render.formats import fmt_count, fmt_num, fmt_pct, fmt_plain, fmt_signed
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
    now = text + (_(": outside the band (±{half}).") if p["outside_band"]
                  else _(": inside the band (±{half}).")).format(half=half)
    return _then_now(_prediction_run(p.get("run"), lang), now, lang)


def _then_now(run: str, now: str, lang: Language) -> str:
    """Return what held over the run, then where the signal stands now."""
    if not run:
        return now
    return lang.join_sentences(run, lang.gettext("Now: {now}").format(now=now))


def _prediction_run(run: Mapping[str, Any] | None, lang: Language) -> str:
    _ = lang.gettext
    if not run or not run.get("evals"):
        return ""
    # One eval and several are two sentences, not one plural: a language of one plural
    # form (Chinese) would say "the first ... the furthest" of a single eval.
    if not run["outside"]:
        if run["evals"] == 1:
            return _("Over the run, the one eval compared was inside the band.")
        return _("Over the run, all {n} evals compared were inside the band.").format(
            n=fmt_count(run["evals"]))
    far = run["furthest"]
    if run["outside"] == 1:
        return _("Over the run, one eval fell outside the band (of {evals} compared), on "
                 "{first}: {residual} at step {step}.").format(
            evals=fmt_count(run["evals"]), first=lang.date(run["first"]),
            residual=fmt_signed(far["residual"], 4), step=fmt_count(far["step"]))
    return _("Over the run, {n} evals fell outside the band (of {evals} compared), the first "
             "on {first}, the furthest {residual} at step {step} on {date}.").format(
        n=fmt_count(run["outside"]), evals=fmt_count(run["evals"]),
        first=lang.date(run["first"]), residual=fmt_signed(far["residual"], 4),
        step=fmt_count(far["step"]), date=lang.date(far["date"]))


def drop_rows(days: Sequence[Mapping[str, Any]],
              lang: Language) -> tuple[list[dict[str, Any]], str]:
    """Return the daily median drop fraction per regime (named in `lang`) for the
    dropping chart, and what a regime is (a msgid: "sequence length" or "phase"); the
    regimes are analysis/signals.py's."""
    kind, regimes = drop_regimes(days)
    rows = [{"f": r["fraction"], "p50": r["p50"], "date": r["date"],
             "regime": _regime(r["regime"], kind, lang)} for r in regimes]
    return rows, N_("sequence length") if kind == "sequence_length" else N_("phase")


def _regime(value: Any, kind: str, lang: Language) -> str:
    if kind == "sequence_length":
        return lang.gettext("{tokens} tokens").format(tokens=fmt_count(value))
    return lang.said(value) if value else lang.gettext("no phase")


def dropping_verdict(f: Mapping[str, Any], lang: Language) -> str:
    """Return what held since the newest context change (the days the drop alert fired,
    the rebound risk point), then dropping in the newest regime against its one baseline
    (analysis/signals.py `dropping_facts`) and what the day's alert check said."""
    _ = lang.gettext
    if f.get("p50") is None:
        return _("No token dropping has been logged yet.")
    kind = f["regime_kind"]
    base_key = "baseline_sequence_length" if kind == "sequence_length" else "baseline_phase"
    regime = _regime(f["sequence_length" if kind == "sequence_length" else "phase"], kind, lang)
    now = _("{share} p50 on {date}").format(share=fmt_pct(f["p50"], 2),
                                           date=lang.date(f["date"]))
    if f.get("baseline_p50") is not None:
        how = (_("its p50 over the 24 h before the change") if f["baseline"] == BASELINE_RISK
               else _("its p50 on {date}, the last day of it").format(
                   date=lang.date(f["baseline_date"])))
        text = _("Token dropping at {regime}: {now}, against {median} at {previous} "
                 "({how})").format(regime=regime, now=now, median=fmt_pct(f["baseline_p50"], 2),
                                   previous=_regime(f[base_key], kind, lang), how=how)
        if f.get("ratio") is not None:
            text += _(": ×{ratio}").format(ratio=fmt_num(f["ratio"], 1))
    else:
        text = _("Token dropping: {now}, one {kind} so far ({regime})").format(
            now=now, kind=_("sequence length") if kind == "sequence_length" else _("phase"),
            regime=regime)
    alert = f.get("alert") or {}
    if alert.get("line") is not None:
        line = fmt_pct(alert["line"])
        window = alert.get("window_minutes")
        worst = fmt_pct(alert.get("value"), 2)
        if alert.get("status") in ("warn", "fail"):
            text += (_("; its alert check fired: {value} in its worst {minutes} minutes, "
                       "above the line at {line}") if window else
                     _("; its alert check fired: {value}, above the line at {line}")).format(
                value=worst, minutes=fmt_count(window), line=line)
        elif alert.get("status") == "pass":
            text += (_("; below the alert line at {line} in every {minutes} minutes "
                       "(worst {value})") if window else
                     _("; below the alert line at {line} (worst {value})")).format(
                value=worst, minutes=fmt_count(window), line=line)
        else:
            text += _("; the alert line is at {line}").format(line=line)
    return _then_now(_dropping_run(f.get("run"), lang), text + _("."), lang)


def _dropping_run(run: Mapping[str, Any] | None, lang: Language) -> str:
    _ = lang.gettext
    if not run:
        return ""
    text = _("Since the context grew from {before} to {after} tokens on {date}").format(
        before=fmt_count(run["from"]), after=fmt_count(run["to"]), date=lang.date(run["since"]))
    if run["alert_days"] == 1:  # not a plural: a language of one form would say "X to X"
        text += _(", the drop alert fired on one day ({first})").format(
            first=lang.date(run["first_alert"]))
    elif run["alert_days"]:
        text += _(", the drop alert fired on {n} days ({first} to {last})").format(
            n=fmt_count(run["alert_days"]), first=lang.date(run["first_alert"]),
            last=lang.date(run["last_alert"]))
    else:
        text += _(", the drop alert never fired")
    rebound = run.get("rebound")
    if rebound:
        window = rebound.get("window_minutes")
        text += (_("; the rebound risk point fired on {date}: its worst {minutes} minutes at "
                   "{ratio} times its baseline (the line: {threshold})") if window else
                 _("; the rebound risk point fired on {date}: {ratio} times its baseline "
                   "(the line: {threshold})")).format(
            date=lang.date(rebound["date"]), minutes=fmt_count(window),
            ratio=fmt_num(rebound["value"], 2), threshold=fmt_plain(rebound["threshold"]))
    return text + _(".")


def risk_rows(records: Sequence[Mapping[str, Any]], fraction_of: Mapping[str, float],
              history: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Return the risk timeline's rows from the newest day's risk records (`fraction_of`:
    day -> budget fraction, to place where each fired). With the days' `history` (each
    day's sealed `risks`, oldest first), each row also has its `segments`: the stretches
    of its window the run has passed, each in the status the risk had then."""
    out = []
    for r in records:
        watch = r.get("watch") or [0.0, 0.0]
        lo, hi = float(watch[0]), float(watch[1])
        at = None
        if r.get("status") == "triggered" and r.get("evidence"):
            at = fraction_of.get(r["evidence"].get("date"))
        row: dict[str, Any] = {"title": r.get("title") or r["id"], "lo": lo, "hi": hi,
                               "status": r["status"], "at": at}
        if history:
            row["segments"] = _segments(r["id"], lo, hi, fraction_of, history)
        out.append(row)
    return out


def _segments(rid: str, lo: float, hi: float, fraction_of: Mapping[str, float],
              history: Sequence[Mapping[str, Any]]) -> list[tuple[float, float, str]]:
    """Return [(from, to, status)] of a risk's window the run has passed: each day's
    status from the fraction where the day before ended to where it ended."""
    out: list[tuple[float, float, str]] = []
    before = 0.0
    for h in history:
        f = fraction_of.get(h["date"])
        rec = next((x for x in h.get("risks") or () if x.get("id") == rid), None)
        if f is None or rec is None:
            continue
        a, b = max(before, lo), min(f, hi)
        if b > a:
            if out and out[-1][2] == rec["status"] and abs(out[-1][1] - a) < 1e-12:
                out[-1] = (out[-1][0], b, rec["status"])
            else:
                out.append((a, b, rec["status"]))
        before = max(before, f)
    return out


def risks_verdict(records: Sequence[Mapping[str, Any]], lang: Language,
                  run: Mapping[str, Any] | None = None) -> str:
    """Return which risk points fired, in order, and what was decided at each (`run`:
    analysis/signals.py risks_facts), then which fired first and where the others stand."""
    _ = lang.gettext
    if not records:
        return _("No risk points are configured for this run.")
    return _then_now(_risks_run(run, lang), _risks_now(records, lang), lang)


def _risks_run(run: Mapping[str, Any] | None, lang: Language) -> str:
    _ = lang.gettext
    if not run or (len(run.get("fired") or ()) < 2 and not run.get("decisions")):
        return ""  # one risk point, or none, fired: the sentence about now says it all
    fired = _(", ").join(_("“{title}” on {date}").format(title=lang.said(p["title"] or p["id"]),
                                                          date=lang.date(p["date"]))
                         for p in run["fired"])
    text = _("Fired in order: {fired}.").format(fired=fired)
    for d in run.get("decisions") or ():
        budget = next((c for c in d.get("changes") or () if c["kind"] == "budget"), None)
        if budget is not None:
            before, after = token_pair(budget["before"], budget["after"], lang, unit=False)
            text += lang.sep + _("Decided at “{title}”: the token budget went from {before} "
                                 "to {after} on {date}.").format(
                title=lang.said(d.get("title") or d["risk"]), before=before, after=after,
                date=lang.date(d["date"]))
    return text


def _risks_now(records: Sequence[Mapping[str, Any]], lang: Language) -> str:
    _ = lang.gettext
    fired = sorted((r for r in records if r["status"] == "triggered"),
                   key=lambda r: ((r.get("evidence") or {}).get("date") or r.get("since") or "",
                                  r["id"]))
    counts = {s: sum(1 for r in records if r["status"] == s)
              for s in ("watching", "upcoming", "passed")}
    # Chinese counts take their measure word (2 个已过去).
    rest = _(", ").join((f"{n} 个{lang.term(s, 'risk status')}" if lang.zh
                         else f"{n} {lang.term(s, 'risk status')}")
                        for s, n in counts.items() if n)
    tail = _("; {rest}.").format(rest=rest) if rest else _(".")
    if fired:
        first = fired[0]
        when = (first.get("evidence") or {}).get("date") or first.get("since")
        text = _("{risk} fired first, on {date}").format(
            risk=lang.said(first.get("title") or first["id"]), date=lang.date(when))
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
            risk=lang.said(w.get("title") or w["id"]), low=fmt_pct(lo, 0), high=fmt_pct(hi, 0))
    return text + tail


def risk_point_verdict(p: Mapping[str, Any], lang: Language) -> str:
    """Return one risk point's status as a phrase: fired (when, value against threshold),
    watching, upcoming or passed (analysis/signals.py `risks_facts` points)."""
    _ = lang.gettext
    lo, hi = (p.get("watch") or [0.0, 0.0])[:2]
    window = _("{low}–{high} of the budget").format(low=fmt_pct(lo, 0), high=fmt_pct(hi, 0))
    status = p.get("status")
    if status == "triggered":
        when = lang.date(p.get("fired_on") or p.get("since"))
        if p.get("value") is not None and p.get("threshold") is not None:
            return _("fired on {date}: {value} against {threshold}").format(
                date=when, value=fmt_num(p["value"], 3), threshold=fmt_plain(p["threshold"]))
        return _("fired on {date}").format(date=when)
    if status == "watching":
        return _("watching since {date}, over {window}").format(
            date=lang.date(p.get("since")), window=window)
    if status == "passed":
        return _("passed on {date} without firing, over {window}").format(
            date=lang.date(p.get("since")), window=window)
    return _("upcoming: watched over {window}").format(window=window)


def signals_json(facts: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                 lang: Language, configured: bool = True) -> dict[str, Any]:
    """Return `api/signals.json`: each signal's figures (analysis/signals.py) with the
    verdict the home card, the signal's page and the feed item say, in `lang`."""
    pred = facts["prediction"]
    risks = facts["risks"]
    return {
        "schema": "chronicle.signals/1", "language": lang.code, "as_of": facts["as_of"],
        "prediction": {**dict.fromkeys(PREDICTION_KEYS), **(pred or {}),
                       "verdict": prediction_verdict(pred, lang, configured)},
        "dropping": {**facts["dropping"], "verdict": dropping_verdict(facts["dropping"], lang)},
        "risks": {**risks, "points": [{**p, "verdict": risk_point_verdict(p, lang)}
                                      for p in risks["points"]],
                  "verdict": risks_verdict(records, lang, risks.get("run"))},
    }


def short_verdict(day: Mapping[str, Any], drop: Mapping[str, Any], lang: Language) -> str:
    """Return a day's verdict in a few words, for its feed item's title: the run's state
    if it finished or stalled, the loss against the prediction, dropping against its
    baseline, a risk point that fired that day ("" when there is nothing to say).
    `drop`: token dropping as of the day (analysis/signals.py `dropping_facts`)."""
    _ = lang.gettext
    parts: list[str] = []
    state = (day.get("run_state") or {}).get("state")
    if state == "finished":
        parts.append(_("run finished"))
    elif state == "stalled":
        parts.append(_("stalled"))
    pred = day.get("prediction")
    if isinstance(pred, Mapping) and pred.get("outside_band") is not None:
        parts.append(_("loss off the prediction") if pred["outside_band"]
                     else _("loss on the prediction"))
    if drop.get("date") == day.get("date") and drop.get("ratio") is not None:
        parts.append(_("dropping ×{ratio}").format(ratio=fmt_num(drop["ratio"], 1)))
    fired = [r for r in day.get("risks") or ()
             if r.get("status") == "triggered"
             and (r.get("evidence") or {}).get("date") == day.get("date")]
    if len(fired) == 1:  # named: the page it links to tells which and why
        parts.append(_("risk point “{title}” fired").format(
            title=lang.said(fired[0].get("title") or fired[0]["id"])))
    elif fired:
        parts.append(lang.ngettext("{n} risk point fired", "{n} risk points fired",
                                   len(fired)).format(n=len(fired)))
    return _(", ").join(parts)
