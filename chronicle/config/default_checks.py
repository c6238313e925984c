"""Config stage: health-check rules and the twelve default checks chronicle.yml overrides.

The defaults mirror the upstream run's alerts (marin moe_hero_ep monitoring); a `health`
row in chronicle.yml with the same id overrides one, `enabled: false` drops it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

STATS = (
    "max", "min", "abs_max", "mean", "last", "p10", "p50", "p90", "count", "nan_count",
    "gap_minutes", "increase", "band_excess", "residual", "rebound",
)
OPS = (">", ">=", "<", "<=")
_RULE = re.compile(r"^\s*([a-z_0-9]+)\s*(>=|<=|>|<)\s*([-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Rule:
    """`<stat> <op> <threshold>`, e.g. `max > 2.0`, evaluated per window of a day."""

    stat: str
    op: str
    threshold: float

    def fires(self, value: float) -> bool:
        """Return whether `value` breaks the rule."""
        return {">": value > self.threshold, ">=": value >= self.threshold,
                "<": value < self.threshold, "<=": value <= self.threshold}[self.op]

    def __str__(self) -> str:
        number = f"{self.threshold:g}".replace("e+0", "e").replace("e+", "e")
        return f"{self.stat} {self.op} {number}"


@dataclass(frozen=True)
class Check:
    """One health check: a metric, a rule over a window, a severity and why it matters."""

    id: str
    metric: tuple[str, ...]
    rule: Rule
    severity: str
    reason: str
    window_minutes: float | None = None  # None: the whole day


def parse_rule(text: Any) -> Rule | None:
    """Return the Rule of `max > 2.0`-style text, or None when it does not parse."""
    if not isinstance(text, str):
        return None
    m = _RULE.match(text)
    if not m or m.group(1) not in STATS:
        return None
    try:
        threshold = float(m.group(3))
    except ValueError:
        return None
    # `max > 1e999` parses as infinity: a rule that can never (or always) fire is a typo.
    return Rule(m.group(1), m.group(2), threshold) if math.isfinite(threshold) else None


def N_(message: str) -> str:
    """Mark a default reason for the message catalog: the site says it in each language
    (render/record_text.py); the config and the sealed record keep the English."""
    return message


def _c(cid: str, metric: str | tuple[str, ...], rule: str, severity: str, reason: str,
       window: float | None = None) -> Check:
    parsed = parse_rule(rule)
    assert parsed is not None, rule
    return Check(cid, (metric,) if isinstance(metric, str) else metric, parsed, severity,
                 reason, window)


# Mirrors the upstream run's alerts (marin moe_hero_ep monitoring): twelve checks.
DEFAULT_CHECKS: tuple[Check, ...] = (
    _c("telemetry_gone", "telemetry", "gap_minutes > 10", "warn",
       N_("no metrics for over 10 minutes: the job stalled, crashed or lost its logger")),
    _c("loss_spike", "failures.loss_spike", "count > 0", "fail",
       N_("a loss spike by upstream's rule (5-min minimum above the trailing hour's mean + 6σ)")),
    _c("grad_norm", "grad_norm", "max > 2.0", "warn",
       N_("gradient norm above 2.0 precedes loss spikes and divergence")),
    _c("skipped_steps", "loss", "nan_count > 0", "fail",
       N_("NaN/inf loss: the trainer skips those updates and they may signal divergence")),
    _c("drop_fraction", "drop_fraction", "p50 > 0.07", "warn",
       N_("over 7% of tokens dropped by the MoE router for an hour: capacity is starved"), 60),
    _c("router_entropy", "router_entropy", "min < 5.92", "warn",
       N_("router entropy far below the uniform bound: experts are collapsing")),
    _c("router_bias", ("router_bias_max", "router_bias_min"), "abs_max > 400", "warn",
       N_("load-balancing bias beyond ±400: the balancer is fighting a skewed router")),
    _c("throughput", "tokens_per_second", "p50 < 2.0e6", "warn",
       N_("compute-step throughput under 2.0M tokens/s for an hour: a slow node or bad sharding"),
       60),
    _c("mfu", "mfu", "p50 < 15", "warn",
       N_("MFU under 15% (percent of peak) for an hour: the accelerators are idling"), 60),
    _c("eval_regressed", "eval_loss", "increase > 0.02", "warn",
       N_("eval loss rose above its best so far: the model got worse on held-out data")),
    _c("prediction_band", "prediction", "band_excess > 0", "warn",
       N_("eval loss outside the pre-registered prediction band")),
    _c("heartbeat", "telemetry", "gap_minutes > 60", "fail",
       N_("no heartbeat for over an hour: work since the last checkpoint is at risk")),
)
