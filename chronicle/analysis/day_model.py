"""The shape of a day summary (the day JSON contract, documentation/pages/day-json.md),
typed (analysis stage, pure).

One declaration per figure: its type and, for every number on a day page, how it is
obtained (`Annotated[..., Figure]`): OBSERVED as logged or DERIVED by a versioned method,
from which inputs, read from which stored artifacts. snapshot/provenance.py derives the
day's provenance map from these annotations; nothing restates the shape by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    NotRequired,
    Required,
    TypedDict,
    get_args,
    get_origin,
    get_type_hints,
)

from chronicle.analysis.records import (
    ChangeRecord,
    Health,
    Num,
    PredictionRecord,
    RiskRecord,
    ThreadUpdate,
)

DAY_SCHEMA = "chronicle-day/1"
OBSERVED = "OBSERVED"
DERIVED = "DERIVED"


@dataclass(frozen=True)
class Figure:
    """How one figure of a day is obtained.

    `inputs` are canonical metric names (shown with their W&B key), "config:<key>" or
    "day:<figure>" of the previous sealed day. `scopes` name the artifacts it is read from:
    "day" = the metric rows of the day; "through" = those plus the last row before it;
    "failures" / "config" / "previous" = the failure records, chronicle.yml, the day before;
    "runs" = the W&B run records (their configs) the snapshot read.
    """

    kind: str
    method: str  # versioned, e.g. "tokens_day/1"
    inputs: tuple[str, ...]
    scopes: tuple[str, ...]


def observed(method: str, *inputs: str, scopes: tuple[str, ...] = ("day",)) -> Figure:
    return Figure(OBSERVED, method, inputs, scopes)


def derived(method: str, *inputs: str, scopes: tuple[str, ...] = ("day",)) -> Figure:
    return Figure(DERIVED, method, inputs, scopes)


_THROUGH = ("through",)


class DataRange(TypedDict):
    rows: Annotated[int, derived("count_rows/1", "timestamp")]
    first: Annotated[str | None, observed("first_row_time/1", "timestamp")]
    last: Annotated[str | None, observed("last_row_time/1", "timestamp")]


class Steps(TypedDict):
    first: Annotated[int | None, observed("first_step/1", "step")]
    last: Annotated[int | None, observed("last_step/1", "step")]
    count: Annotated[int | None, derived("step_span/1", "step")]


class Tokens(TypedDict):
    day: Annotated[Num, derived("tokens_day/1", "total_tokens", scopes=_THROUGH)]
    cumulative: Annotated[Num, observed("last_total_tokens/1", "total_tokens", scopes=_THROUGH)]
    budget: Annotated[float, observed("config/1", "config:run.token_budget",
                                      scopes=("config",))]
    budget_fraction: Annotated[Num, derived("budget_fraction/1", "total_tokens",
                                            "config:run.token_budget",
                                            scopes=("through", "config"))]


class Loss(TypedDict):
    train_last: Annotated[Num, observed("last_finite/1", "loss")]
    train_mean: Annotated[Num, derived("mean_finite/1", "loss")]
    train_min: Annotated[Num, derived("min_finite/1", "loss")]
    train_change: Annotated[Num, derived("change_vs_previous_day/1", "loss",
                                         "day:loss.train_last", scopes=("day", "previous"))]
    eval_last: Annotated[Num, observed("last_finite/1", "eval_loss", scopes=_THROUGH)]
    eval_step: Annotated[int | None, observed("step_of_last_finite/1", "eval_loss", "step",
                                              scopes=_THROUGH)]
    nan_rows: Annotated[int, derived("count_non_finite/1", "loss")]


class Throughput(TypedDict):
    compute_tokens_per_second_p50: Annotated[Num, derived("percentile/1", "tokens_per_second")]
    sustained_tokens_per_second: Annotated[Num, derived(
        "sustained_tokens_per_second/1", "total_tokens", "timestamp", scopes=_THROUGH)]
    goodput: Annotated[Num, derived("goodput/1", "total_tokens", "tokens_per_second",
                                    "timestamp", scopes=_THROUGH)]
    mfu_p10: Annotated[Num, derived("percentile/1", "mfu")]
    mfu_p50: Annotated[Num, derived("percentile/1", "mfu")]
    mfu_p90: Annotated[Num, derived("percentile/1", "mfu")]
    mfu_unit: str


class DropStats(TypedDict):
    p50: Num
    max: Num
    rows: int


class Moe(TypedDict):
    drop_fraction_p50: Annotated[Num, derived("percentile/1", "drop_fraction")]
    drop_fraction_max: Annotated[Num, derived("max_finite/1", "drop_fraction")]
    # Sequence length (as text; "unknown") -> the day's drop fraction at that length. Days
    # sealed before context changes were tracked lack it.
    by_sequence_length: NotRequired[Annotated[dict[str, DropStats], derived(
        "drop_by_sequence_length/1", "drop_fraction", "config:wandb.config_keys",
        "config:run.sequence_length", scopes=("day", "runs", "config"))]]


class GradNorm(TypedDict):
    max: Annotated[Num, derived("max_finite/1", "grad_norm")]
    p50: Annotated[Num, derived("percentile/1", "grad_norm")]


class LearningRate(TypedDict):
    last: Annotated[Num, observed("last_finite/1", "learning_rate")]


class Cost(TypedDict):
    usd: Annotated[dict[str, Num], derived(
        "cost/1", "day:accelerator_hours", "config:run.prices_usd_per_accelerator_hour",
        scopes=("config",))]


class Cumulative(TypedDict):
    accelerator_hours: Annotated[Num, derived(
        "running_sum/1", "accelerator_hours", "day:cumulative.accelerator_hours",
        scopes=("through", "config", "previous"))]
    usd: dict[str, Num]
    downtime_seconds: Annotated[Num, derived(
        "running_sum/1", "downtime_seconds", "day:cumulative.downtime_seconds",
        scopes=("through", "config", "previous"))]


class ForkRecord(TypedDict):
    run: str
    parent: str | None
    step: int
    time: str | None


class PreviousBrief(TypedDict):
    """The figures of the day before that a day page compares with."""

    date: str
    loss_train_last: Num
    tokens_day: Num
    mfu_p50: Num
    goodput: Num
    drop_fraction_max: Num
    grad_norm_max: Num
    downtime_seconds: Num


class RunStateRecord(TypedDict):
    """The run's state as of the day's figures (analysis/run_state.py RunState)."""

    state: str  # running, stalled or finished
    since: str | None  # finished: when; stalled: the last row's time
    step: int | None  # the last step logged
    finished_by: str | None  # steps, budget, wandb or config
    target: float | None  # the steps or the budget the run reached


class DaySummary(TypedDict):
    """One day's figures: the sealed day JSON (every number may be None: missing)."""

    schema: str
    run: str
    date: str
    day: int
    planned_days: int
    title: str
    sealed_by: str
    sealed_at: str | None
    backfilled: bool
    # Days sealed since chronicle.day_page/16: the time of the snapshot whose data the
    # figures and threads are as of (a day sealed late: the first one after it ended);
    # the page's outbound links carry it as their Robust Links data-versiondate.
    figures_as_of: NotRequired[str]
    data: DataRange
    steps: Steps
    tokens: Tokens
    phase: str | None
    loss: Loss
    throughput: Throughput
    moe: Moe
    grad_norm: GradNorm
    learning_rate: LearningRate
    downtime_seconds: Annotated[Num, derived(
        "downtime_in_gaps/1", "timestamp", "config:failures.gap_minutes",
        scopes=("through", "config"))]
    restarts: Annotated[int, derived("count_restarts/1", "failures", scopes=("failures",))]
    runs: list[str]
    forks: list[ForkRecord]
    accelerator_hours: Annotated[Num, derived(
        "accelerator_hours/1", "timestamp", "config:run.accelerators.count",
        scopes=("through", "config"))]
    cost: Cost
    cumulative: Cumulative
    failures: list[dict[str, Any]]  # FailureRecord.to_json()
    threads_updated: list[ThreadUpdate]
    previous: PreviousBrief | None
    # Days sealed since changes are tracked: those that took effect this day, and the
    # sequence length(s) of the runs that logged its rows (None: unknown).
    changes: NotRequired[list[ChangeRecord]]
    sequence_length: NotRequired[Annotated[list[int | None], derived(
        "sequence_length_in_effect/1", "config:wandb.config_keys", "config:run.sequence_length",
        scopes=("day", "runs", "config"))]]
    # Days sealed since the run's state is tracked: it as of the day's figures (after a
    # finish, no wall-clock, downtime or telemetry check counts).
    run_state: NotRequired[RunStateRecord]
    # Added when the day is sealed (snapshot/seal.py): prose, verdicts, provenance.
    summary: NotRequired[str]
    prediction: NotRequired[PredictionRecord | None]
    health: NotRequired[Health]
    risks: NotRequired[list[RiskRecord]]
    provenance: NotRequired[dict[str, Any]]
    corrections: NotRequired[list[dict[str, Any]]]
    # What happened that day (analysis/ledger.py Event.to_json), as of its figures; on the
    # first day a night seals, with the corrections of earlier days found since.
    ledger: NotRequired[list[dict[str, Any]]]
    # Only on a day sealed after sealing.max_wait_days without every source (snapshot/plan.py).
    missing_sources: NotRequired[list[dict[str, Any]]]


def required_fields(tp: type = DaySummary) -> set[str]:
    """Return the keys every day of shape `tp` has (those not declared NotRequired).

    TypedDict's own `__required_keys__` cannot tell under postponed annotations (this
    module's `from __future__ import annotations`): it counts every key as required.
    """
    hints = get_type_hints(tp, include_extras=True)
    return {name for name, hint in hints.items() if get_origin(hint) is not NotRequired}


def figures(tp: type = DaySummary, prefix: str = "") -> Iterator[tuple[str, Figure]]:
    """Yield (dotted path, Figure) of every figure declared in the TypedDict tree `tp`."""
    for name, hint in get_type_hints(tp, include_extras=True).items():
        path = prefix + name
        if get_origin(hint) in (NotRequired, Required):
            hint = get_args(hint)[0]
        if get_origin(hint) is Annotated:
            found = [m for m in hint.__metadata__ if isinstance(m, Figure)]
            if found:
                yield path, found[0]
                continue
            hint = get_args(hint)[0]
        if isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__annotations__"):
            yield from figures(hint, path + ".")


def figure_at(summary: Mapping[str, Any], path: str) -> Any:
    """Return the value at a dotted figure path ("tokens.day"), or None."""
    node: Any = summary
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node
