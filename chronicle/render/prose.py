"""Generated sentences: a day's summary paragraph, the prediction's residual line and
what a correction changes (render stage, pure).

Written from the numbers only, in the site's one number format (render/formats.py). The
summary paragraph is part of the sealed day JSON and page: a change here changes what
newly sealed days say, never what sealed days said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronicle.analysis.day_model import DaySummary
from chronicle.render.formats import (
    fmt_count,
    fmt_duration,
    fmt_num,
    fmt_pct,
    fmt_plain,
    fmt_si,
    fmt_signed,
    plural,
)


def write_summary(d: DaySummary) -> str:
    """Return the one-paragraph summary of a day, written from its numbers only."""
    parts = [f"Day {d['day']} of {d['planned_days']}."]
    t = d["tokens"]
    if d["data"]["rows"] == 0:
        parts.append("No metrics were logged this day.")
    if t["day"] is not None:
        frac = (f", {fmt_pct(t['budget_fraction'])} of the {fmt_si(t['budget'])} budget"
                if t["budget_fraction"] is not None else "")
        parts.append(f"The run processed {fmt_si(t['day'])} tokens "
                     f"({fmt_si(t['cumulative'])} so far{frac}).")
    loss = d["loss"]
    if loss["train_last"] is not None:
        change = (f" ({fmt_signed(loss['train_change'])} on the day before)"
                  if loss["train_change"] is not None else "")
        parts.append(f"Train loss ended at {fmt_num(loss['train_last'])}{change}.")
    if loss["eval_last"] is not None:
        parts.append(f"Latest eval loss: {fmt_num(loss['eval_last'])} at step "
                     f"{fmt_count(loss['eval_step'])}.")
    if loss["nan_rows"]:
        were = "was" if loss["nan_rows"] == 1 else "were"
        parts.append(f"{plural(loss['nan_rows'], 'logged loss value')} {were} NaN or infinite.")
    th = d["throughput"]
    if th["compute_tokens_per_second_p50"] is not None:
        text = ("Compute-step throughput was "
                f"{fmt_si(th['compute_tokens_per_second_p50'], ' tok/s')}")
        if th["sustained_tokens_per_second"] is not None and th["goodput"] is not None:
            text += (f", sustained {fmt_si(th['sustained_tokens_per_second'], ' tok/s')} "
                     f"(goodput {fmt_pct(th['goodput'])})")
        if th["mfu_p50"] is not None:
            mfu = (fmt_num(th["mfu_p50"], 1, "%") if th.get("mfu_unit", "percent") == "percent"
                   else fmt_pct(th["mfu_p50"]))
            text += f"; MFU p50 {mfu}"
        parts.append(text + ".")
    if d["moe"]["drop_fraction_max"] is not None:
        parts.append(f"Token dropping peaked at {fmt_pct(d['moe']['drop_fraction_max'])}.")
    if d["restarts"] or d["downtime_seconds"]:
        parts.append(f"{plural(d['restarts'], 'restart')}, "
                     f"{fmt_duration(d['downtime_seconds'] or 0)} without telemetry.")
    n_fail, n_thr = len(d["failures"]), len(d["threads_updated"])
    if n_fail or n_thr:
        parts.append(f"{plural(n_fail, 'failure record')}; "
                     f"{plural(n_thr, 'issue thread')} updated.")
    return " ".join(parts)


def residual_line(p: Mapping[str, Any] | None) -> str | None:
    """Return a one-line description of a day's prediction record, or None."""
    if not p or p.get("residual") is None:
        return None
    band = ""
    if p.get("outside_band") is not None:
        band = (" — outside the band" if p["outside_band"]
                else " — inside the band") + f" [{fmt_num(p['low'])}, {fmt_num(p['high'])}]"
    moved = " The prediction changed since day 1!" if p.get("changed") else ""
    verdict = p.get("inference")
    if verdict:
        moved += (f" Inference: {verdict['statement']} (would be falsified by "
                  f"{verdict['falsified_by']}).")
    return (f"Eval loss {fmt_num(p['actual'], 4)} at step {fmt_count(p['eval_step'])} "
            f"({fmt_pct(p['fraction'])} of the budget) vs predicted "
            f"{fmt_num(p['predicted'], 4)}: residual {fmt_signed(p['residual'], 4)} "
            f"({p['sign']}){band}.{moved}")


def describe_correction(c: Mapping[str, Any]) -> str:
    """Return one sentence saying what a correction changes."""
    return (f"{c['figure']} of {c['day']}: {_fmt(c['previous'])} on the published record, "
            f"{_fmt(c['corrected'])} with the data stored by snapshot {c['found_by']} "
            f"({c['reason']}).")


def _fmt(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, float) and abs(value) >= 1e6:
        return fmt_si(value)
    if isinstance(value, float):
        return fmt_plain(value)
    return str(value)
