"""The watch sections of chronicle.yml: prediction, health, risks, claims (validated).

Split from config.py so the core schema stays readable; `parse_watch` appends every
problem to the caller's list (key path first) instead of raising, like config.py does.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

SEVERITIES = ("warn", "fail")
STATS = (
    "max", "min", "abs_max", "mean", "last", "p10", "p50", "p90", "count", "nan_count",
    "gap_minutes", "increase", "band_excess", "residual",
)
OPS = (">", ">=", "<", "<=")
CLAIM_HOWS = ("equals", "within", "at_least", "at_most")
# Figures a claim can be set against: `config.*` from chronicle.yml, `data.*` from the store.
CLAIM_FIGURES = (
    "config.accelerators", "config.token_budget", "config.planned_days",
    "config.sequence_length", "data.tokens", "data.mfu_p50", "data.accelerator_hours",
    "data.cost_usd", "data.projected_cost_usd", "data.restarts", "data.days",
)
TRAIN_LOSSES = ("loss", "cross_entropy", "train/loss", "train/cross_entropy_loss")
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
class Prediction:
    """A loss prediction frozen before launch: a table or a functional form."""

    metric: str  # canonical name (e.g. eval_loss) or a W&B key
    table: tuple[tuple[float, float, float | None, float | None], ...] = ()
    form: dict[str, float] = field(default_factory=dict)  # E, A, alpha, flops_per_token, band
    registered: date | None = None
    source: str | None = None

    def canonical_json(self) -> str:
        """Return the prediction as canonical JSON (sorted keys, no spaces)."""
        return json.dumps({"metric": self.metric, "table": [list(r) for r in self.table],
                           "form": self.form, "registered": self.registered.isoformat()
                           if self.registered else None, "source": self.source},
                          sort_keys=True, separators=(",", ":"))

    def sha256(self) -> str:
        """Return the sha256 of `canonical_json()`: it must not move during the run."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


@dataclass(frozen=True)
class Check:
    """One health check: a metric, a rule over a window, a severity and why it matters."""

    id: str
    metric: tuple[str, ...]
    rule: Rule
    severity: str
    reason: str
    window_minutes: float | None = None  # None: the whole day


@dataclass(frozen=True)
class Risk:
    """A named risk watched over a budget-fraction window, triggered by a rule."""

    id: str
    title: str
    metric: tuple[str, ...]
    rule: Rule
    watch: tuple[float, float]
    window_minutes: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class Claim:
    """A public claim about the run, checked against a config or data figure."""

    statement: str
    value: float
    unit: str
    who: str
    where: str
    when: date | None
    against: str
    how: str = "equals"
    tolerance: float = 0.0  # relative, for `within`


@dataclass(frozen=True)
class WatchSections:
    prediction: Prediction | None = None
    health: tuple[Check, ...] = ()
    risks: tuple[Risk, ...] = ()
    claims: tuple[Claim, ...] = ()


def parse_rule(text: Any) -> Rule | None:
    """Return the Rule of `max > 2.0`-style text, or None when it does not parse."""
    if not isinstance(text, str):
        return None
    m = _RULE.match(text)
    if not m or m.group(1) not in STATS:
        return None
    try:
        return Rule(m.group(1), m.group(2), float(m.group(3)))
    except ValueError:
        return None


def _c(cid: str, metric: str | tuple[str, ...], rule: str, severity: str, reason: str,
       window: float | None = None) -> Check:
    parsed = parse_rule(rule)
    assert parsed is not None, rule
    return Check(cid, (metric,) if isinstance(metric, str) else metric, parsed, severity,
                 reason, window)


# Mirrors the upstream run's alerts (marin moe_hero_ep monitoring): twelve checks.
DEFAULT_CHECKS: tuple[Check, ...] = (
    _c("telemetry_gone", "telemetry", "gap_minutes > 10", "warn",
       "no metrics for over 10 minutes: the job stalled, crashed or lost its logger"),
    _c("loss_spike", "failures.loss_spike", "count > 0", "fail",
       "a loss spike by upstream's rule (5-min minimum above the trailing hour's mean + 6σ)"),
    _c("grad_norm", "grad_norm", "max > 2.0", "warn",
       "gradient norm above 2.0 precedes loss spikes and divergence"),
    _c("skipped_steps", "loss", "nan_count > 0", "fail",
       "NaN/inf loss: the trainer skips those updates and they may signal divergence"),
    _c("drop_fraction", "drop_fraction", "p50 > 0.07", "warn",
       "over 7% of tokens dropped by the MoE router for an hour: capacity is starved", 60),
    _c("router_entropy", "router_entropy", "min < 5.92", "warn",
       "router entropy far below the uniform bound: experts are collapsing"),
    _c("router_bias", ("router_bias_max", "router_bias_min"), "abs_max > 400", "warn",
       "load-balancing bias beyond ±400: the balancer is fighting a skewed router"),
    _c("throughput", "tokens_per_second", "p50 < 2.0e6", "warn",
       "compute-step throughput under 2.0M tokens/s for an hour: a slow node or bad sharding",
       60),
    _c("mfu", "mfu", "p50 < 15", "warn",
       "MFU under 15% (percent of peak) for an hour: the accelerators are idling", 60),
    _c("eval_regressed", "eval_loss", "increase > 0.02", "warn",
       "eval loss rose above its best so far: the model got worse on held-out data"),
    _c("prediction_band", "prediction", "band_excess > 0", "warn",
       "eval loss outside the pre-registered prediction band"),
    _c("heartbeat", "telemetry", "gap_minutes > 60", "fail",
       "no heartbeat for over an hour: work since the last checkpoint is at risk"),
)


def _unknown(item: dict[str, Any], allowed: tuple[str, ...], where: str,
             problems: list[str]) -> None:
    for key in item:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{where}.{key}: unknown key{hint}; allowed here: {', '.join(allowed)}")


def _num(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            return None
    return None


def _metrics(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    return None


def _rule_problem(value: Any) -> str:
    return (f"expected '<stat> <op> <number>' like 'max > 2.0', got {value!r}; "
            f"stats: {', '.join(STATS)}; ops: {', '.join(OPS)}")


def _prediction(data: Any, problems: list[str]) -> Prediction | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        problems.append("prediction: expected a mapping (metric:, table: or form:)")
        return None
    _unknown(data, ("metric", "table", "form", "registered", "source"), "prediction", problems)
    metric = data.get("metric", "eval_loss")
    if not isinstance(metric, str) or not metric:
        problems.append("prediction.metric: expected a metric name, e.g. eval_loss")
        metric = "eval_loss"
    if metric in TRAIN_LOSSES:
        problems.append(f"prediction.metric: {metric!r} is a train loss; a prediction is about "
                        "an eval metric (e.g. eval_loss) and is only compared with that metric")
    table: list[tuple[float, float, float | None, float | None]] = []
    for i, row in enumerate(data.get("table") or []):
        nums = [_num(v) for v in row] if isinstance(row, list) else []
        if len(nums) not in (2, 4) or any(v is None for v in nums):
            problems.append(f"prediction.table[{i}]: expected [fraction, predicted] or "
                            f"[fraction, predicted, low, high], got {row!r}")
            continue
        f, p = float(nums[0] or 0), float(nums[1] or 0)
        lo, hi = (nums[2], nums[3]) if len(nums) == 4 else (None, None)
        if not 0 < f <= 1:
            problems.append(f"prediction.table[{i}]: fraction {f} must be in (0, 1]")
        if lo is not None and hi is not None and not lo <= p <= hi:
            problems.append(f"prediction.table[{i}]: need low <= predicted <= high, got {row!r}")
        table.append((f, p, lo, hi))
    if [r[0] for r in table] != sorted({r[0] for r in table}):
        problems.append("prediction.table: fractions must be strictly increasing")
    form: dict[str, float] = {}
    if data.get("form") is not None:
        raw = data["form"]
        keys = ("E", "A", "alpha", "flops_per_token", "band")
        if not isinstance(raw, dict):
            problems.append("prediction.form: expected {E, A, alpha, flops_per_token}")
        else:
            _unknown(raw, keys, "prediction.form", problems)
            for k in keys:
                v = _num(raw.get(k))
                if v is None and k != "band":
                    problems.append(f"prediction.form.{k}: missing or not a number")
                elif v is not None:
                    form[k] = v
    if bool(table) == bool(data.get("form") is not None):
        problems.append("prediction: give exactly one of table: or form:")
    registered = data.get("registered")
    reg = _date(registered) if registered is not None else None
    if registered is not None and reg is None:
        problems.append(f"prediction.registered: expected a date like 2026-08-19, "
                        f"got {registered!r}")
    source = data.get("source")
    return Prediction(metric, tuple(table), form, reg, str(source) if source else None)


def _rows(data: Any, name: str, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        problems.append(f"{name}: expected a list of mappings")
        return []
    return [(f"{name}[{i}]", d) for i, d in enumerate(data)]


def _checks(data: Any, problems: list[str]) -> tuple[Check, ...]:
    out = {c.id: c for c in DEFAULT_CHECKS}
    keys = ("id", "metric", "rule", "window", "severity", "reason", "enabled")
    for where, d in _rows(data, "health", problems):
        _unknown(d, keys, where, problems)
        cid = d.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"{where}.id: missing (a short name, e.g. grad_norm)")
            continue
        if d.get("enabled") is False:
            out.pop(cid, None)
            continue
        base = out.get(cid)
        metric = _metrics(d["metric"]) if "metric" in d else (base.metric if base else None)
        rule = parse_rule(d["rule"]) if "rule" in d else (base.rule if base else None)
        severity = d.get("severity", base.severity if base else "warn")
        window = _num(d["window"]) if d.get("window") is not None else (
            base.window_minutes if base else None)
        if metric is None:
            problems.append(f"{where}.metric: expected a metric name or a list of them")
        if rule is None:
            problems.append(f"{where}.rule: {_rule_problem(d.get('rule'))}")
        if severity not in SEVERITIES:
            problems.append(f"{where}.severity: expected warn or fail, got {severity!r}")
        if d.get("window") is not None and (window is None or window <= 0):
            problems.append(f"{where}.window: expected minutes > 0, got {d['window']!r}")
        if metric and rule and severity in SEVERITIES:
            out[cid] = Check(cid, metric, rule, severity,
                             str(d.get("reason") or (base.reason if base else "")), window)
    return tuple(out.values())


def _risks(data: Any, problems: list[str]) -> tuple[Risk, ...]:
    out: list[Risk] = []
    keys = ("id", "title", "metric", "rule", "watch", "window", "reason")
    for where, d in _rows(data, "risks", problems):
        _unknown(d, keys, where, problems)
        rid, title = d.get("id"), d.get("title") or d.get("id")
        metric, rule = _metrics(d.get("metric")), parse_rule(d.get("rule"))
        watch = d.get("watch")
        nums = [_num(v) for v in watch] if isinstance(watch, list) else []
        if not isinstance(rid, str) or not rid:
            problems.append(f"{where}.id: missing")
        if metric is None:
            problems.append(f"{where}.metric: expected a metric name or a list of them")
        if rule is None:
            problems.append(f"{where}.rule: {_rule_problem(d.get('rule'))}")
        ok = len(nums) == 2 and None not in nums and 0 <= (nums[0] or 0) < (nums[1] or 0) <= 1
        if not ok:
            problems.append(f"{where}.watch: expected [from, to] budget fractions with "
                            f"0 <= from < to <= 1, got {watch!r}")
        window = _num(d.get("window")) if d.get("window") is not None else None
        if isinstance(rid, str) and rid and metric and rule and ok:
            out.append(Risk(rid, str(title), metric, rule, (float(nums[0] or 0),
                            float(nums[1] or 0)), window, str(d.get("reason") or "")))
    return tuple(out)


def _claims(data: Any, problems: list[str]) -> tuple[Claim, ...]:
    out: list[Claim] = []
    keys = ("statement", "value", "unit", "who", "where", "when", "against", "how",
            "tolerance")
    for where, d in _rows(data, "claims", problems):
        _unknown(d, keys, where, problems)
        value, against, how = _num(d.get("value")), d.get("against"), d.get("how", "equals")
        for k in ("statement", "who", "where"):
            if not isinstance(d.get(k), str) or not d.get(k):
                problems.append(f"{where}.{k}: missing (a non-empty string)")
        if value is None:
            problems.append(f"{where}.value: expected a number, got {d.get('value')!r}")
        if against not in CLAIM_FIGURES:
            close = difflib.get_close_matches(str(against), CLAIM_FIGURES, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{where}.against: unknown figure {against!r}{hint}; "
                            f"known: {', '.join(CLAIM_FIGURES)}")
        if how not in CLAIM_HOWS:
            problems.append(f"{where}.how: expected one of {', '.join(CLAIM_HOWS)}, got {how!r}")
        tol = _num(d.get("tolerance", 0.0))
        if tol is None or tol < 0:
            problems.append(f"{where}.tolerance: expected a relative tolerance >= 0, e.g. 0.05")
        when = _date(d["when"]) if d.get("when") is not None else None
        if d.get("when") is not None and when is None:
            problems.append(f"{where}.when: expected a date like 2026-08-19")
        if value is not None and against in CLAIM_FIGURES and how in CLAIM_HOWS and tol is not None:
            out.append(Claim(str(d.get("statement")), value, str(d.get("unit") or ""),
                             str(d.get("who")), str(d.get("where")), when, str(against), how,
                             tol))
    return tuple(out)


def parse_watch(data: dict[str, Any], problems: list[str]) -> WatchSections:
    """Return the validated watch sections; append each problem found to `problems`."""
    return WatchSections(
        prediction=_prediction(data.get("prediction"), problems),
        health=_checks(data.get("health"), problems),
        risks=_risks(data.get("risks"), problems),
        claims=_claims(data.get("claims"), problems),
    )
