"""Generated sentences: a day's summary paragraph, the prediction's residual line and
what a correction changes (render stage, pure).

Written from the numbers only. The summary paragraph is part of the sealed day JSON and
page; its number formats (3 significant digits below a trillion, "1.5 h") are the ones
sealed days have always used: a change here changes what newly sealed days say, never
what sealed days said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chronicle.analysis.day_model import DaySummary


def _tokens(n: float | None) -> str:
    """Return a token count as 207.1B / 7.70T."""
    if n is None:
        return "no data"
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}" if unit != "T" else f"{n / scale:.2f}T"
    return f"{n:.0f}"


def _duration(seconds: float | None) -> str:
    """Return 5400 as '1.5 h', 300 as '5 min'."""
    if seconds is None:
        return "no data"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min"


def write_summary(d: DaySummary) -> str:
    """Return the one-paragraph summary of a day, written from its numbers only."""
    parts = [f"Day {d['day']} of {d['planned_days']}."]
    t = d["tokens"]
    if d["data"]["rows"] == 0:
        parts.append("No metrics were logged this day.")
    if t["day"] is not None:
        frac = (
            f", {t['budget_fraction']:.1%} of the {_tokens(t['budget'])} budget"
            if t["budget_fraction"] is not None
            else ""
        )
        parts.append(
            f"The run processed {_tokens(t['day'])} tokens "
            f"({_tokens(t['cumulative'])} so far{frac})."
        )
    loss = d["loss"]
    if loss["train_last"] is not None:
        change = (
            f" ({loss['train_change']:+.3f} on the day before)"
            if loss["train_change"] is not None
            else ""
        )
        parts.append(f"Train loss ended at {loss['train_last']:.3f}{change}.")
    if loss["eval_last"] is not None:
        parts.append(f"Latest eval loss: {loss['eval_last']:.3f} at step {loss['eval_step']:,}.")
    if loss["nan_rows"]:
        parts.append(f"{loss['nan_rows']} logged loss value(s) were NaN or infinite.")
    th = d["throughput"]
    if th["compute_tokens_per_second_p50"] is not None:
        text = (
            f"Compute-step throughput was {th['compute_tokens_per_second_p50'] / 1e6:.2f}M tokens/s"
        )
        if th["sustained_tokens_per_second"] is not None and th["goodput"] is not None:
            text += (
                f", sustained {th['sustained_tokens_per_second'] / 1e6:.2f}M "
                f"(goodput {th['goodput']:.0%})"
            )
        if th["mfu_p50"] is not None:
            text += f"; MFU p50 {th['mfu_p50']:.1f}%"
        parts.append(text + ".")
    if d["moe"]["drop_fraction_max"] is not None:
        parts.append(f"Token dropping peaked at {d['moe']['drop_fraction_max']:.1%}.")
    if d["restarts"] or d["downtime_seconds"]:
        parts.append(
            f"{d['restarts']} restart(s), {_duration(d['downtime_seconds'])} "
            "without telemetry."
        )
    n_fail, n_thr = len(d["failures"]), len(d["threads_updated"])
    if n_fail or n_thr:
        parts.append(f"{n_fail} failure record(s); {n_thr} issue thread(s) updated.")
    return " ".join(parts)


def residual_line(p: Mapping[str, Any] | None) -> str | None:
    """Return a one-line description of a day's prediction record, or None."""
    if not p or p.get("residual") is None:
        return None
    band = ""
    if p.get("outside_band") is not None:
        band = (" — outside the band" if p["outside_band"]
                else " — inside the band") + f" [{p['low']:.3f}, {p['high']:.3f}]"
    moved = " The prediction changed since day 1!" if p.get("changed") else ""
    verdict = p.get("inference")
    if verdict:
        moved += (f" Inference: {verdict['statement']} (would be falsified by "
                  f"{verdict['falsified_by']}).")
    return (f"Eval loss {p['actual']:.4f} at step {p['eval_step']:,} "
            f"({p['fraction']:.1%} of the budget) vs predicted {p['predicted']:.4f}: "
            f"residual {p['residual']:+.4f} ({p['sign']}){band}.{moved}")


def describe_correction(c: Mapping[str, Any]) -> str:
    """Return one sentence saying what a correction changes."""
    return (f"{c['figure']} of {c['day']}: {_fmt(c['previous'])} on the published record, "
            f"{_fmt(c['corrected'])} with the data stored by snapshot {c['found_by']} "
            f"({c['reason']}).")


def _fmt(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, float) and abs(value) >= 1e6:
        return f"{value:,.0f}"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
