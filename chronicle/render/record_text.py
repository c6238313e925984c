"""The sentences the analysis writes into the record, said in any language (render stage,
pure).

A sealed day JSON and the store keep some generated sentences in English: a day's title,
the prediction's inference, what a detected failure was and its evidence, why a
correction was made, the default health checks' reasons. The English text is the record
and is shown as written in English. Every other language says the same thing from the
record's *facts* (the fields beside the sentence: a failure's `detail`, the prediction's
figures, a correction's `late_rows`), through the same messages: nothing is matched
against the English text. A record sealed before it carried those facts is shown as
written.

A detected failure is the exception: English says it from its facts too, because the
sentences the detectors store keep the bytes they were first stored with (a step as
"7220", a duration as "5.6 h"), while every page writes a step "7,220" and a duration
"5 h 36 min". The stored sentences stay the record; their facts say the same thing.

Each message below mirrors the English the analysis writes (tests/test_i18n.py writes
every one through the real analysis code and checks the two state the same facts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronicle.config.default_checks import DEFAULT_CHECKS
from chronicle.models import FailureRecord
from chronicle.render.formats import fmt_num
from chronicle.render.i18n import N_, Language

# The English shapes of the sentences, as msgids (each `{name}` is filled from the facts).
TITLE = N_("Day {day} · {date}")
ON_TRACK = N_("on track: the eval loss is inside the pre-registered band")
AHEAD = N_("ahead of prediction: eval loss below the band")
BEHIND = N_("behind prediction: eval loss above the band")
BASIS = N_("one eval ({metric}) at step {step} against the prediction registered {date}")
FALSIFIED_INSIDE = N_("a later eval outside the band at its own budget fraction")
FALSIFIED_AHEAD = N_("a later eval at or above the band's lower edge ({value} here)")
FALSIFIED_BEHIND = N_("a later eval at or below the band's upper edge ({value} here)")
GAP = N_("no metrics for {duration} after step {step}")
GAP_OPEN = N_("no metrics since step {step} ({duration} so far as of {time})")
SPIKE = N_("loss spike to {value} at step {step} over a trailing-hour baseline of "
           "{baseline} (sigma {sigma}); steps {first}–{last}")
NAN_ONE = N_("loss was NaN or inf on one logged row, at step {step}")
FORK = N_("W&B run {run} forked from {parent} at step {step}; no metrics for {duration}")
FORK_REDONE = N_("W&B run {run} forked from {parent} at step {step} (resumed from "
                 "checkpoint; steps {step}–{redone} re-done); no metrics for {duration}")
# A detected failure's evidence lines (`detail["evidence"]`: one fact per line, by role).
EVIDENCE = {
    "row": N_("W&B run {run} step {step} at {time}"),
    "last_row_kept": N_("W&B run {run} last row kept: step {step} at {time}"),
    "first_row": N_("W&B run {run} first row: step {step} at {time}"),
    "replaces": N_("replaces {id}"),
}


def day_title(day: Mapping[str, Any], lang: Language) -> str:
    """Return a day's title ("Day 12 · 2026-08-30"; 第 12 天 · 2026年8月30日)."""
    if lang.english:
        return str(day["title"])
    return lang.gettext(TITLE).format(day=day["day"], date=lang.date(day["date"]))


def inference_text(prediction: Mapping[str, Any], lang: Language) -> dict[str, str]:
    """Return the prediction's inference (statement, basis, falsified_by) in `lang`,
    said from the record's figures (empty when it has none)."""
    said = prediction.get("inference") or {}
    if lang.english or not said:
        return {k: str(said.get(k) or "") for k in ("statement", "basis", "falsified_by")}
    _ = lang.gettext
    step = prediction.get("eval_step")
    registered = prediction.get("registered")
    basis = _(BASIS).format(metric=prediction.get("metric"),
                            step=f"{step:,}" if isinstance(step, int) else step,
                            date=lang.date(registered) if registered else "—")
    if not prediction.get("outside_band"):
        return {"statement": _(ON_TRACK), "basis": basis, "falsified_by": _(FALSIFIED_INSIDE)}
    ahead = prediction.get("sign") == "below"
    edge = prediction.get("low") if ahead else prediction.get("high")
    return {"statement": _(AHEAD if ahead else BEHIND), "basis": basis,
            "falsified_by": _(FALSIFIED_AHEAD if ahead else FALSIFIED_BEHIND).format(
                value=fmt_num(edge, 3))}


def _record(failure: FailureRecord | Mapping[str, Any]) -> tuple[str, dict[str, Any], str]:
    """Return a failure's (what, detail, kind), from the record or its JSON."""
    if isinstance(failure, FailureRecord):
        return failure.what, dict(failure.detail), failure.kind
    return (str(failure.get("what") or ""), dict(failure.get("detail") or {}),
            str(failure.get("kind") or ""))


def failure_text(failure: FailureRecord | Mapping[str, Any], lang: Language) -> str:
    """Return what a failure was: a detected one said in `lang` (English included) from its
    `detail`, one people wrote (an issue, failures.yml) as written."""
    what, detail, kind = _record(failure)
    if not detail:
        return what
    _ = lang.gettext
    if kind == "gap" and "as_of" in detail:
        return _(GAP_OPEN).format(step=f"{detail['step']:,}",
                                  duration=lang.duration(detail["seconds"]),
                                  time=lang.time(detail["as_of"]))
    if kind == "gap":
        return _(GAP).format(step=f"{detail['step']:,}", duration=lang.duration(detail["seconds"]))
    if kind == "loss_spike":
        return _(SPIKE).format(value=f"{detail['value']:.4g}", step=f"{detail['step']:,}",
                               baseline=f"{detail['baseline']:.4g}",
                               sigma=f"{detail['sigma']:.2g}", first=f"{detail['first']:,}",
                               last=f"{detail['last']:,}")
    if kind == "nan_loss" and detail["first"] == detail["last"]:
        # One row: its step once ("steps 4,660–4,660" read as a range that is not one).
        return _(NAN_ONE).format(step=f"{detail['first']:,}")
    if kind == "nan_loss":
        return lang.ngettext(
            "loss was NaN or inf on {rows} logged row, steps {first}–{last}",
            "loss was NaN or inf on {rows} logged rows, steps {first}–{last}",
            int(detail["rows"])).format(rows=detail["rows"], first=f"{detail['first']:,}",
                                        last=f"{detail['last']:,}")
    if kind == "fork":
        redone = detail.get("redone")
        return _(FORK_REDONE if redone is not None else FORK).format(
            run=detail["run"], parent=detail["parent"], step=f"{detail['step']:,}",
            redone=f"{redone:,}" if redone is not None else "",
            duration=lang.duration(detail["seconds"]))
    return what


def evidence_text(failure: FailureRecord | Mapping[str, Any],
                  lang: Language) -> tuple[str, ...]:
    """Return a failure's evidence lines: a detected one's said in `lang` from the facts
    of each line (`detail["evidence"]`), others (links, records stored before their lines
    carried facts) as written."""
    if isinstance(failure, FailureRecord):
        written = tuple(failure.evidence)
    else:
        written = tuple(str(e) for e in failure.get("evidence") or ())
    facts = _record(failure)[1].get("evidence")
    if isinstance(facts, list) and len(facts) == len(written):
        written = tuple(_evidence_line(fact, lang) or text
                        for fact, text in zip(facts, written, strict=True))
    # Each line once: a spike's onset is often its peak, stored as two equal lines.
    return tuple(dict.fromkeys(written))


def _evidence_line(fact: Any, lang: Language) -> str | None:
    """Return one evidence line said from its fact; None when it is not one we know."""
    if not isinstance(fact, Mapping) or fact.get("role") not in EVIDENCE:
        return None
    message = lang.gettext(EVIDENCE[str(fact["role"])])
    if fact["role"] == "replaces":
        return message.format(id=fact.get("id")) if fact.get("id") else None
    step = fact.get("step")
    if not isinstance(step, int) or not fact.get("run") or not fact.get("time"):
        return None
    return message.format(run=fact["run"], step=f"{step:,}",
                          time=lang.time(fact["time"], seconds=True))


_DEFAULT_REASONS = {c.id: c.reason for c in DEFAULT_CHECKS}


def check_reason(check: Any, lang: Language) -> str:
    """Return a health check's reason (a record's, or a configured check's): a default
    check's message in `lang`; a reason the chronicle's config wrote, as written."""
    if isinstance(check, Mapping):
        cid, reason = str(check.get("id")), str(check.get("reason") or "")
    else:
        cid, reason = str(check.id), str(check.reason or "")
    if _DEFAULT_REASONS.get(cid) == reason:
        return lang.gettext(reason)
    return lang.said(reason)  # the config's words, in this language where it gives them


CLAIM_METHODS = {
    "equals": N_("claimed value equals {figure}"),
    "within": N_("claimed value within {share} of {figure}"),
    "at_least": N_("{figure} is at least the claimed value"),
    "at_most": N_("{figure} is at most the claimed value"),
}


def claim_method(claim: Mapping[str, Any], lang: Language) -> str:
    """Return how a claim was checked (analysis/claims.py), said from its `how`."""
    how = str(claim.get("how"))
    if lang.english or how not in CLAIM_METHODS:
        return str(claim.get("method") or "")
    # The tolerance is in the English method only: a share of the figure (5%).
    tolerance = claim.get("tolerance")
    share = f"{tolerance:.0%}" if isinstance(tolerance, int | float) else ""
    return lang.gettext(CLAIM_METHODS[how]).format(figure=claim.get("against"), share=share)
