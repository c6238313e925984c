"""How each canonical metric is shown: its label, unit and number format, and the alert
lines a chart draws for it, read from the configured health checks (render stage, pure).

The one home for metric display: charts, pages and sentences ask here instead of
restating "tokens/s" or a threshold. Alert lines come from `config.watch.health` (the
defaults, overridden by chronicle.yml's `health:`), never from constants in chart code:
a chronicle that sets grad_norm's rule to `max > 3.0` sees "alert 3.0" on its charts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chronicle.config import RunConfig
from chronicle.render.charts import Axis
from chronicle.render.formats import fmt_plain, fmt_value

# Stats whose threshold is a value of the metric itself (a line on its chart); counts,
# gaps, increases and band excesses are not.
VALUE_STATS = ("max", "min", "abs_max", "mean", "last", "p10", "p50", "p90")


@dataclass(frozen=True)
class Display:
    """A metric's label in legends and text, its axis title, format kind and unit."""

    label: str
    axis: str
    kind: str = "number"  # si | fraction | percent | number | sci (render/formats.py)
    unit: str = ""


DISPLAYS: dict[str, Display] = {
    "loss": Display("train loss", "loss"),
    "cross_entropy": Display("train cross-entropy", "loss"),
    "eval_loss": Display("eval loss", "loss"),
    "tokens_per_second": Display("compute-step throughput", "tokens/s", "si", "tok/s"),
    "total_tokens": Display("tokens processed", "tokens", "si", "tokens"),
    "mfu": Display("MFU", "MFU (% of peak FLOPs)", "percent"),
    "step_duration": Display("step time", "seconds per step", "number", "s"),
    "drop_fraction": Display("token drop fraction", "tokens dropped", "fraction"),
    "grad_norm": Display("grad norm", "gradient norm"),
    "learning_rate": Display("learning rate", "learning rate", "sci"),
    "run_progress": Display("run progress", "progress", "fraction"),
    "router_entropy": Display("router entropy", "entropy (nats)", "number", "nats"),
    "router_bias_max": Display("router bias max", "router bias"),
    "router_bias_min": Display("router bias min", "router bias"),
    "memory_peak_gib": Display("peak memory", "GiB", "number", "GiB"),
}
BUDGET_FRACTION = Display("fraction of the token budget", "fraction of the token budget",
                          "fraction")


def display(name: str, config: RunConfig | None = None) -> Display:
    """Return how metric `name` is shown (MFU follows `wandb.mfu_unit`)."""
    shown = DISPLAYS.get(name, Display(name.replace("_", " "), name.replace("_", " ")))
    if name == "mfu" and config is not None and config.wandb.mfu_unit == "fraction":
        shown = replace(shown, axis="MFU (fraction of peak FLOPs)", kind="fraction")
    return shown


def axis_for(name: str, config: RunConfig | None = None,
             domain: tuple[float, float] | None = None, log: bool = False) -> Axis:
    """Return the y axis of metric `name` (title, format, unit)."""
    shown = display(name, config)
    return Axis(shown.axis, shown.kind, shown.unit, domain=domain, log=log)


def show(name: str, value: object, config: RunConfig | None = None) -> str:
    """Return a value of metric `name` as the site writes it (2.5M tok/s, 3.1%, 1.118)."""
    shown = display(name, config)
    return fmt_value(value, shown.kind, shown.unit)


def _names(name: str, config: RunConfig) -> set[str]:
    """Return the names a check may use for metric `name`: canonical and its W&B key."""
    key = config.wandb.metrics.get(name)
    return {name} | ({key} if key else set())


def alert_rules(config: RunConfig, name: str) -> list[tuple[float, str]]:
    """Return the (value, label) alert lines of metric `name` from the configured checks."""
    out: list[tuple[float, str]] = []
    names = _names(name, config)
    for check in config.watch.health:
        if check.rule.stat not in VALUE_STATS or not names & set(check.metric):
            continue
        value = check.rule.threshold
        label = f"alert {show(name, value, config)}"
        if check.window_minutes:
            label += f" ({check.rule.stat}, {check.window_minutes:g} min)"
        out.append((value, label))
        if check.rule.stat == "abs_max" and value:
            out.append((-value, f"alert {show(name, -value, config)}"))
    return sorted(set(out))


def check_value(record: Mapping[str, Any], config: RunConfig) -> str:
    """Return a health check's reading as the site writes its metric (counts, gaps and
    prediction excesses as plain numbers)."""
    value = record.get("value")
    stat = str(record.get("rule") or "").split(" ", 1)[0]
    if stat in ("count", "nan_count", "band_excess", "residual", "increase"):
        return fmt_plain(value)
    if stat == "gap_minutes":
        return fmt_value(value, "number", "min")
    metric = (record.get("metric") or [""])[0]
    canonical = next((k for k, key in config.wandb.metrics.items() if key == metric), metric)
    return show(canonical, value, config)
