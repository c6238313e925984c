"""Generated sentences: a day's summary paragraph, the prediction's residual line and
what a correction changes (render stage, pure).

Written from the numbers only, in the site's one number format (render/formats.py). The
summary paragraph is part of the sealed day JSON and page: a change here changes what
newly sealed days say, never what sealed days said. Each sentence is a catalog message:
sealing writes it in English; a translated page writes it again, in its language, from
the sealed day's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronicle.analysis.day_model import DaySummary, RunStateRecord
from chronicle.render.formats import fmt_count, fmt_num, fmt_pct, fmt_signed
from chronicle.render.i18n import Language
from chronicle.render.record_text import inference_text


def write_summary(d: DaySummary, lang: Language) -> str:
    """Return the one-paragraph summary of a day, written from its numbers only in `lang`
    (the sealed one is English; a translated page writes its own)."""
    _, ngettext, fmt_si = lang.gettext, lang.ngettext, lang.si
    parts = [_("Day {day} of {planned}.").format(day=d["day"], planned=d["planned_days"])]
    t = d["tokens"]
    ended = _ended_before(d)
    if ended is not None:
        parts.append(_("The run had finished on {date} at step {step}: nothing ran this "
                       "day.").format(date=lang.date(ended["since"]),
                                      step=fmt_count(ended["step"])))
    elif d["data"]["rows"] == 0:
        parts.append(_("No metrics were logged this day."))
    if t["day"] is not None:
        frac = _(", {share} of the {budget} budget").format(
            share=fmt_pct(t["budget_fraction"]), budget=fmt_si(t["budget"])) \
            if t["budget_fraction"] is not None else ""
        parts.append(_("The run processed {day} tokens ({total} so far{share}).").format(
            day=fmt_si(t["day"]), total=fmt_si(t["cumulative"]), share=frac))
    loss = d["loss"]
    if loss["train_last"] is not None:
        change = _(" ({change} on the day before)").format(
            change=fmt_signed(loss["train_change"])) if loss["train_change"] is not None \
            else ""
        parts.append(_("Train loss ended at {loss}{change}.").format(
            loss=fmt_num(loss["train_last"]), change=change))
    if loss["eval_last"] is not None:
        parts.append(_("Latest eval loss: {loss} at step {step}.").format(
            loss=fmt_num(loss["eval_last"]), step=fmt_count(loss["eval_step"])))
    if loss["nan_rows"]:
        parts.append(ngettext("{values} was NaN or infinite.", "{values} were NaN or infinite.",
                              loss["nan_rows"]).format(
            values=lang.plural(loss["nan_rows"], "logged loss value")))
    parts += _throughput(d, lang)
    if d["moe"]["drop_fraction_max"] is not None:
        parts.append(_("Token dropping peaked at {share}.").format(
            share=fmt_pct(d["moe"]["drop_fraction_max"])))
    if d["restarts"] or d["downtime_seconds"]:
        parts.append(_("{restarts}, {duration} without telemetry.").format(
            restarts=lang.plural(d["restarts"], "restart"),
            duration=lang.duration(d["downtime_seconds"] or 0)))
    parts += _state(d, lang) if ended is None else []
    n_fail, n_thr = len(d["failures"]), len(d["threads_updated"])
    if n_fail or n_thr:
        parts.append(_("{failures}; {threads} updated.").format(
            failures=lang.plural(n_fail, "failure record"),
            threads=lang.plural(n_thr, "issue thread")))
    # Chinese sentences follow each other without a space.
    return lang.sep.join(parts)


def _ended_before(d: DaySummary) -> RunStateRecord | None:
    """Return the day's run state if the run had finished before the day began."""
    state = d.get("run_state")
    if state is None or state["state"] != "finished" or not state["since"]:
        return None
    return state if state["since"][:10] < d["date"] else None


def _state(d: DaySummary, lang: Language) -> list[str]:
    """Say that the run finished this day, or had stalled by the day's figures."""
    _ = lang.gettext
    state = d.get("run_state")
    if state is None or not state["since"]:
        return []
    if state["state"] == "finished" and state["since"][:10] == d["date"]:
        reason = {"steps": _("its configured number of steps"),
                  "budget": _("its token budget"),
                  "wandb": _("W&B marks its last run finished"),
                  "config": _("chronicle.yml says so")}.get(str(state["finished_by"]), "")
        return [_("The run finished at {time}, step {step} ({reason}).").format(
            time=lang.time(state["since"]), step=fmt_count(state["step"]), reason=reason)]
    if state["state"] == "stalled" and state["since"][:10] <= d["date"]:
        # A stall that began after the day ended (seen when it was sealed) is the next
        # day's: this day's page never names a time after it.
        return [_("By the day's figures the run had stalled: no metrics since {time} "
                  "(step {step}).").format(time=lang.time(state["since"]),
                                           step=fmt_count(state["step"]))]
    return []


def _throughput(d: DaySummary, lang: Language) -> list[str]:
    _, fmt_si = lang.gettext, lang.si
    th = d["throughput"]
    if th["compute_tokens_per_second_p50"] is None:
        return []
    text = _("Compute-step throughput was {rate}").format(
        rate=fmt_si(th["compute_tokens_per_second_p50"], _(" tok/s")))
    if th["sustained_tokens_per_second"] is not None and th["goodput"] is not None:
        text += _(", sustained {rate} (goodput {goodput})").format(
            rate=fmt_si(th["sustained_tokens_per_second"], _(" tok/s")),
            goodput=fmt_pct(th["goodput"]))
    if th["mfu_p50"] is not None:
        mfu = (fmt_num(th["mfu_p50"], 1, "%") if th.get("mfu_unit", "percent") == "percent"
               else fmt_pct(th["mfu_p50"]))
        text += _("; MFU p50 {mfu}").format(mfu=mfu)
    return [text + _(".")]


def residual_line(p: Mapping[str, Any] | None, lang: Language) -> str | None:
    """Return a one-line description of a day's prediction record, or None."""
    _ = lang.gettext
    if not p or p.get("residual") is None:
        return None
    band = ""
    if p.get("outside_band") is not None:
        band = (_(" — outside the band") if p["outside_band"] else _(" — inside the band")) \
            + f" [{fmt_num(p['low'])}, {fmt_num(p['high'])}]"
    moved = _(" The prediction changed since day 1!") if p.get("changed") else ""
    verdict = p.get("inference")
    if verdict:
        said = inference_text(p, lang)
        moved += _(" Inference: {statement} (would be falsified by {falsified_by}).").format(
            statement=said["statement"], falsified_by=said["falsified_by"])
    return _("Eval loss {actual} at step {step} ({share} of the budget) vs predicted "
             "{predicted}: residual {residual} ({sign}){band}.{moved}").format(
        actual=fmt_num(p["actual"], 4), step=fmt_count(p["eval_step"]),
        share=fmt_pct(p["fraction"]), predicted=fmt_num(p["predicted"], 4),
        residual=fmt_signed(p["residual"], 4), sign=lang.term(p["sign"], "prediction sign"),
        band=band, moved=moved)
