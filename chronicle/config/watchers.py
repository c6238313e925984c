"""Config stage: the watch sections of chronicle.yml (prediction, health, risks, claims).

Declared with the same machinery as the core sections (config/fields.py): each key once,
with its check, default and doc. The health section overrides or extends the default
checks (config/default_checks.py) by id, so its rows are checked, then merged.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from chronicle.config.checks import boolean, choice, day, number, text
from chronicle.config.default_checks import DEFAULT_CHECKS, OPS, STATS, Check, Rule, parse_rule
from chronicle.config.fields import (
    UNSET,
    Fields,
    Invalid,
    Option,
    Problem,
    Rows,
    Schema,
    Section,
    check_mapping,
    option,
    show,
    type_name,
)
from chronicle.config.metrics import DEFAULT_METRICS, TRAIN_LOSSES
from chronicle.config.words import words
from chronicle.models import CHANGE_KINDS

SEVERITIES = ("warn", "fail")
CLAIM_HOWS = ("equals", "within", "at_least", "at_most")
# Figures a claim can be set against: `config.*` from chronicle.yml, `data.*` from the store.
CLAIM_FIGURES = (
    "config.accelerators", "config.token_budget", "config.planned_days",
    "config.sequence_length", "data.tokens", "data.mfu_p50", "data.accelerator_hours",
    "data.cost_usd", "data.projected_cost_usd", "data.restarts", "data.days",
)

_finite = number()
_minutes = number(0, above=True, what="minutes > 0", example="60")


def _rule(value: Any) -> Rule:
    rule = parse_rule(value)
    if rule is None:
        raise Invalid(f"expected '<stat> <op> <number>' like 'max > 2.0', got {show(value)}; "
                      f"stats: {', '.join(STATS)}; ops: {', '.join(OPS)}")
    return rule


def _metrics(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise Invalid(f"expected a metric name or a list of them, e.g. grad_norm, got {show(value)}")


def _prediction_metric(value: Any) -> str:
    metric = text("a metric name, e.g. eval_loss")(value)
    if metric in TRAIN_LOSSES or metric in (DEFAULT_METRICS[m] for m in TRAIN_LOSSES):
        raise Invalid(f"{metric!r} is a train loss; a prediction is about an eval metric "
                      "(e.g. eval_loss) and is only compared with that metric")
    return metric


def _table_row(row: Any) -> tuple[float, float, float | None, float | None]:
    expected = (f"expected [fraction, predicted] or [fraction, predicted, low, high] "
                f"(finite numbers), got {show(row)}")
    if not isinstance(row, list) or len(row) not in (2, 4):
        raise Invalid(expected)
    try:
        nums = [_finite(v) for v in row]
    except Invalid as err:
        raise Invalid(expected) from err
    f, p = nums[0], nums[1]
    lo, hi = (nums[2], nums[3]) if len(nums) == 4 else (None, None)
    if not 0 < f <= 1:
        raise Invalid(f"fraction {f} must be in (0, 1]")
    if lo is not None and hi is not None and not lo <= p <= hi:
        raise Invalid(f"need low <= predicted <= high, got {show(row)}")
    return (f, p, lo, hi)


def _table(value: Any) -> tuple[tuple[float, float, float | None, float | None], ...]:
    rows = Rows(_table_row, "[fraction, predicted, low, high] rows")(value)
    if [r[0] for r in rows] != sorted({r[0] for r in rows}):
        raise Invalid("fractions must be strictly increasing")
    return rows


_FORM: Schema = {
    k: Option(_finite, doc) for k, doc in (
        ("E", "irreducible loss"), ("A", "scale"), ("alpha", "compute exponent"),
        ("flops_per_token", "training FLOPs per token"))
}
_FORM["band"] = Option(number(0, example="0.01"), "half-width of the band", default=UNSET)


def _budget_window(value: Any) -> tuple[float, float]:
    expected = f"expected [from, to] budget fractions with 0 <= from < to <= 1, got {show(value)}"
    if not isinstance(value, list) or len(value) != 2:
        raise Invalid(expected)
    try:
        start, end = (_finite(v) for v in value)
    except Invalid as err:
        raise Invalid(expected) from err
    if not 0 <= start < end <= 1:
        raise Invalid(expected)
    return (start, end)


@dataclass(frozen=True, kw_only=True)
class Prediction:
    """A loss prediction frozen before launch: a table or a functional form."""

    metric: str = option(_prediction_metric, default="eval_loss",
                         doc="an eval metric's canonical name or W&B key")
    table: tuple[tuple[float, float, float | None, float | None], ...] = option(
        _table, default=(), doc="[fraction of the budget, predicted, low, high] rows")
    form: dict[str, float] = option(  # E, A, alpha, flops_per_token, band
        Fields(_FORM), factory=dict, doc="L = E + A·C^-alpha, C = flops_per_token x tokens")
    registered: date | None = option(day, default=None, doc="when it was registered")
    source: str | None = option(text(), default=None, doc="where the prediction comes from")

    def canonical_json(self) -> str:
        """Return the prediction as canonical JSON (sorted keys, no spaces)."""
        return json.dumps({"metric": self.metric, "table": [list(r) for r in self.table],
                           "form": self.form, "registered": self.registered.isoformat()
                           if self.registered else None, "source": self.source},
                          sort_keys=True, separators=(",", ":"))

    def sha256(self) -> str:
        """Return the sha256 of `canonical_json()`: it must not move during the run."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


def _one_of(prediction: Prediction) -> Prediction:
    if bool(prediction.table) == bool(prediction.form):
        raise Invalid("give exactly one of table: or form:")
    return prediction


@dataclass(frozen=True, kw_only=True)
class Risk:
    """A named risk watched over a budget-fraction window, or from a change of the run on,
    triggered by a rule."""

    id: str = option(text("a short name, e.g. grad-norm-growth"), doc="the risk's id")
    title: str = option(words(), default="",
                        doc="shown on the site (default: the id); {en: ..., zh: ...} for "
                            "each language")
    metric: tuple[str, ...] = option(_metrics, doc="the metric(s) the rule reads")
    rule: Rule = option(_rule, doc="<stat> <op> <number>, as in health")
    # (0, 1) when only `after` is given (set by _titled): the whole run, from the change on.
    watch: tuple[float, float] = option(_budget_window, default=None,
                                        doc="[from, to] budget fractions watched")
    after: str | None = option(choice(CHANGE_KINDS), default=None,
                               doc="watched from the first change of this kind on")
    window_minutes: float | None = option(_minutes, default=None, key="window",
                                          doc="window in minutes (default the whole day)")
    reason: str = option(words(empty=True), default="",
                         doc="why it matters; {en: ..., zh: ...} for each language")


def _titled(risk: Risk) -> Risk:
    problems: list[Problem] = []
    if risk.watch is None and risk.after is None:
        problems.append(("watch", "missing: give watch: [from, to] budget fractions, or "
                                  f"after: a change kind ({', '.join(CHANGE_KINDS)})"))
    if risk.rule.stat == "rebound" and risk.after is None:
        problems.append(("after", "the rebound stat compares with the p50 before a change: "
                                  "name it, e.g. after: sequence_length"))
    if problems:
        raise Invalid(problems=problems)
    risk = risk if risk.watch is not None else replace(risk, watch=(0.0, 1.0))
    return risk if risk.title else replace(risk, title=risk.id)


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A public claim about the run, checked against a config or data figure."""

    statement: str = option(words(), doc="the claim as stated, e.g. '792 GPUs'; "
                                         "{en: ..., zh: ...} for each language")
    value: float = option(number(example="792"), doc="the claimed figure")
    unit: str = option(text(empty=True), default="", doc="its unit")
    who: str = option(text(), doc="who made it")
    where: str = option(text(), doc="where it was made")
    when: date | None = option(day, default=None, doc="when it was made")
    against: str = option(choice(CLAIM_FIGURES), doc="the figure it is set against")
    how: str = option(choice(CLAIM_HOWS), default="equals", doc="how they are compared")
    tolerance: float = option(number(0, example="0.05"), default=0.0,
                              doc="relative tolerance, for `within`")


HEALTH_ROW: Schema = {
    "id": Option(text("a short name, e.g. grad_norm"), "the check's id (a default's overrides it)"),
    "metric": Option(_metrics, "canonical name, W&B key, telemetry, failures.<kind>, prediction",
                     default=UNSET),
    "rule": Option(_rule, "<stat> <op> <number>", default=UNSET),
    "window": Option(_minutes, "window in minutes (default the whole day)", default=UNSET),
    "severity": Option(choice(SEVERITIES), "warn or fail", default=UNSET),
    "reason": Option(words(empty=True), "why the check matters ({en: ..., zh: ...} for each "
                                        "language)", default=UNSET),
    "enabled": Option(boolean, "false drops a default check", default=True),
}


class _Health:
    """The health rows, merged by id over DEFAULT_CHECKS (a new id needs metric and rule)."""

    schema = HEALTH_ROW

    def __call__(self, value: Any) -> tuple[Check, ...]:
        if not isinstance(value, list):
            raise Invalid(f"expected a list of checks, got {type_name(value)}")
        out = {c.id: c for c in DEFAULT_CHECKS}
        problems: list[Problem] = []
        for i, raw in enumerate(value):
            try:
                row = check_mapping(HEALTH_ROW, raw)
            except Invalid as err:
                problems += err.at(f"[{i}]")
                continue
            cid, base = row["id"], out.get(row["id"])
            if not row["enabled"]:
                out.pop(cid, None)
                continue
            if base is None:
                missing = [k for k in ("metric", "rule") if k not in row]
                problems += [(f"[{i}].{k}", f"missing (required for a new check): "
                              f"{HEALTH_ROW[k].doc}") for k in missing]
                if missing:
                    continue
                base = Check(cid, row["metric"], row["rule"], "warn", "")
            out[cid] = Check(cid, row.get("metric", base.metric), row.get("rule", base.rule),
                             row.get("severity", base.severity),
                             row.get("reason") or base.reason,
                             row.get("window", base.window_minutes))
        if problems:
            raise Invalid(problems=problems)
        return tuple(out.values())


@dataclass(frozen=True, kw_only=True)
class WatchSections:
    prediction: Prediction | None = option(Section(Prediction, _one_of), default=None,
                                           doc="the loss prediction frozen before launch")
    health: tuple[Check, ...] = option(_Health(), default=DEFAULT_CHECKS,
                                       doc="overrides and extensions of the default checks")
    risks: tuple[Risk, ...] = option(Rows(Section(Risk, _titled), "risks"), default=(),
                                     doc="named risks watched over a budget window")
    claims: tuple[Claim, ...] = option(Rows(Section(Claim), "claims"), default=(),
                                       doc="public claims set against the run's figures")

