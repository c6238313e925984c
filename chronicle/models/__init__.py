"""Plain frozen data passed between stages (kernel: sources -> store -> analysis -> render).

Every record round-trips through JSON with `to_json()` / `from_json()`; times are aware
UTC datetimes in memory and ISO 8601 strings ending in "Z" on disk (models/times.py).
GitHub's records are in models/github.py; W&B runs, failures and source status here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from chronicle.models import typed
from chronicle.models.github import Comment, PullRequest, Thread
from chronicle.models.times import Archived, iso, parse_time, required_time

if TYPE_CHECKING:
    import pyarrow as pa

# Metric rows: "run" (W&B run id), "step" (int), "timestamp" (epoch seconds, float) and
# then the raw W&B keys ("train/loss", ...) with float values (NaN allowed: it is data).
# A fetch carries them as an Arrow table with those columns (a night may bring 10^6 rows);
# one row as a plain dict is a MetricRow. The store keeps them in Parquet, one column per key.
MetricRow = dict[str, Any]
ROW_KEYS = ("run", "step", "timestamp")

__all__ = ["CHANGE_KINDS", "FAILURE_KINDS", "RESTART_KINDS", "ROW_KEYS", "Archived", "Comment",
           "FailureRecord", "Fetched", "MetricRow", "PullRequest", "RunRecord", "SourceStatus",
           "Thread", "iso", "parse_time", "required_time"]


@dataclass(frozen=True)
class RunRecord:
    """One W&B run of the lineage: state, config, summary, and where it forked."""

    id: str
    name: str
    state: str
    created_at: datetime
    heartbeat_at: datetime | None
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None
    fork_step: int | None = None
    url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "state": self.state,
            "created_at": iso(self.created_at),
            "heartbeat_at": iso(self.heartbeat_at),
            "parent": self.parent,
            "fork_step": self.fork_step,
            "url": self.url,
            "config": self.config,
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunRecord:
        d = typed.record(d)
        run_id = typed.text(d, "id")
        return cls(
            id=run_id,
            name=typed.text(d, "name", run_id),
            state=typed.text(d, "state", "unknown"),
            created_at=required_time(typed.text(d, "created_at")),
            heartbeat_at=parse_time(typed.optional_text(d, "heartbeat_at")),
            config=typed.mapping(d, "config"),
            summary=typed.mapping(d, "summary"),
            parent=typed.optional_text(d, "parent"),
            fork_step=typed.optional_whole(d, "fork_step"),
            url=typed.text(d, "url", ""),
        )


# What a change of the run can be (analysis/changes.py detects them from the store).
CHANGE_KINDS = ("config", "sequence_length", "budget", "mixture", "pull_request")

# Failure kinds. Records from issues are "issue", from failures.yml "manual"; the rest
# are detected from metrics.
FAILURE_KINDS = ("issue", "manual", "restart", "fork", "gap", "loss_spike", "nan_loss")
# Failure kinds that mean the job stopped and came back: they count as restarts.
RESTART_KINDS = ("gap", "fork", "restart")


@dataclass(frozen=True)
class FailureRecord:
    """One failure or incident: what broke, when, for how long, what it cost."""

    id: str  # stable across snapshots: the same failure seen again keeps its id
    kind: str
    start: datetime
    end: datetime | None  # None while still open
    what: str
    accelerator_hours_lost: float | None = None
    evidence: tuple[str, ...] = ()
    source: str = ""  # "github", "manual", "metrics"
    # A detected failure's facts (step, seconds, values...), from which every language
    # says `what` (render/record_text.py); empty for records people wrote.
    detail: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def duration_seconds(self) -> float | None:
        if self.end is None:
            return None
        return max(0.0, (self.end - self.start).total_seconds())

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "source": self.source,
            "start": iso(self.start),
            "end": iso(self.end),
            "duration_seconds": self.duration_seconds,
            "what": self.what,
            "accelerator_hours_lost": self.accelerator_hours_lost,
            "evidence": list(self.evidence),
            # Only where there are facts: records without them keep their bytes.
            **({"detail": self.detail} if self.detail else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FailureRecord:
        d = typed.record(d)
        return cls(
            id=typed.text(d, "id"),
            kind=typed.text(d, "kind", "manual"),
            source=typed.text(d, "source", ""),
            start=required_time(typed.text(d, "start")),
            end=parse_time(typed.optional_text(d, "end")),
            what=typed.text(d, "what", ""),
            accelerator_hours_lost=typed.optional_number(d, "accelerator_hours_lost"),
            evidence=typed.texts(d, "evidence"),
            detail=typed.mapping(d, "detail"),
        )


@dataclass(frozen=True)
class SourceStatus:
    """How one source fared in one snapshot."""

    name: str
    ok: bool
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def degraded(self) -> bool:
        """Failed, or answered with something left out (`error` says what): exit 3."""
        return not self.ok or self.error is not None

    def to_json(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "failed", "error": self.error, **self.detail}

    @classmethod
    def from_json(cls, name: str, d: dict[str, Any]) -> SourceStatus:
        detail = {k: v for k, v in d.items() if k not in ("status", "error")}
        return cls(name=name, ok=d.get("status") == "ok", error=d.get("error"), detail=detail)


@dataclass(frozen=True)
class Fetched:
    """What the sources returned for one snapshot, before it is stored.

    `runs`/`metrics` are None when W&B failed, `threads` None when GitHub failed: the
    store then keeps what it had (nothing is dropped) and the manifest records why.
    `pulls` is None when GitHub failed or `github.pulls` is not configured. `metrics` is
    a table of rows (see MetricRow); a list of MetricRow dicts is accepted too.
    """

    metrics: pa.Table | list[MetricRow] | None
    runs: list[RunRecord] | None
    threads: list[Thread] | None
    failures: list[FailureRecord]
    statuses: tuple[SourceStatus, ...]
    pulls: list[PullRequest] | None = None

    @property
    def degraded(self) -> bool:
        return any(s.degraded for s in self.statuses)
