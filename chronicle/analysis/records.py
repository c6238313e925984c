"""Records a day holds besides its figures (analysis stage, pure): the issue threads it
updated, the watchers' verdicts (prediction, health checks, risks) and the changes the
run made that day. Declared as TypedDicts; analysis/day_model.py puts them in a day.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

Num = float | None  # every number of a day may be missing (None), never zero


class NewComment(TypedDict):
    id: int
    author: str
    created_at: str | None
    url: str
    body: str
    edited: bool


class EditedComment(TypedDict):
    id: int
    author: str
    created_at: str | None
    updated_at: str | None
    url: str
    body: str
    previous_body: str | None


class ThreadUpdate(TypedDict):
    number: int
    title: str
    url: str
    labels: list[str]
    state: str
    opened: bool
    new_comments: list[NewComment]
    edited_comments: list[EditedComment]


class Inference(TypedDict):
    kind: str  # always "INFERRED"
    statement: str
    basis: str
    falsified_by: str


class PredictionRecord(TypedDict):
    metric: str
    sha256: str
    registered_sha256: str
    changed: bool
    registered: str | None
    eval_step: int | None
    eval_time: str | None
    evals_this_day: int
    fraction: Num
    actual: Num
    predicted: Num
    low: Num
    high: Num
    residual: Num
    sign: str | None  # above / below / on
    outside_band: bool | None
    band_excess: Num
    inference: NotRequired[Inference | None]  # present once an eval has been read


class CheckResult(TypedDict):
    id: str
    status: str  # pass / warn / fail / no-data
    metric: list[str]
    rule: str
    window_minutes: float | None
    value: Num
    threshold: float
    when: str | None
    severity: str
    reason: str
    note: str


class Health(TypedDict):
    status: str
    counts: dict[str, int]
    checks: list[CheckResult]


class RiskEvidence(TypedDict):
    date: str
    value: float
    threshold: float


class RiskRecord(TypedDict):
    id: str
    title: str
    watch: list[float]
    rule: str
    metric: list[str]
    reason: str
    fraction: Num
    value: Num
    evidence: RiskEvidence | None
    status: str  # upcoming / watching / triggered / passed
    since: str
    # Risks watched from a change on (`after`): the change and, for `rebound`, the p50
    # of the metric in the 24 h before it.
    after: NotRequired[str | None]
    change: NotRequired[str | None]
    baseline: NotRequired[Num]


class Evidence(TypedDict, total=False):
    """Where a change can be checked: a URL, or a stored file (relative to docs/) + sha256."""

    url: str
    path: str
    sha256: str


class ChangeRecord(TypedDict):
    """One change of the run (analysis/changes.py): what changed, when, where it shows."""

    id: str  # stable: the same change found again keeps its id
    kind: str  # config / sequence_length / budget / mixture / pull_request
    time: str | None  # when it took effect (a PR: when it was merged)
    step: int | None  # the first step it applies to (a PR: the run's step when merged)
    budget_fraction: Num  # tokens processed by then / run.token_budget
    key: str  # config path, "implied_budget", the mixture stage key, or "#<PR number>"
    name: str | None  # the canonical name of a config_keys path (sequence_length, ...)
    before: Any  # None: unknown or absent
    after: Any
    run: str | None  # the W&B run it applies to
    parent: str | None  # the run it was forked from (a change between parent and child)
    evidence: list[Evidence]
    recorded_by: str  # the snapshot that first stored it
    recorded_at: str | None
    detail: dict[str, Any]  # kind-specific: mixture movers, the PR, the budget's terms


class Verdicts(TypedDict):
    """What the watchers add to a day when it is sealed (analysis/verdicts.py)."""

    prediction: PredictionRecord | None
    health: Health
    risks: list[RiskRecord]
