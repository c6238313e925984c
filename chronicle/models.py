"""Plain frozen data passed between stages (sources -> store -> analysis -> render).

Every record round-trips through JSON with `to_json()` / `from_json()`; times are aware
UTC datetimes in memory and ISO 8601 strings ending in "Z" on disk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

# Metric rows are plain dicts: "run" (W&B run id), "step" (int), "timestamp" (epoch
# seconds, float) and then the raw W&B keys ("train/loss", ...) with float values
# (NaN allowed: it is data). The store keeps them in Parquet, one column per key.
MetricRow = dict[str, Any]
ROW_KEYS = ("run", "step", "timestamp")


class Archived(Protocol):
    """A stored snapshot as pages name it: its id and when it was taken."""

    @property
    def id(self) -> str: ...

    @property
    def taken_at(self) -> datetime: ...


def iso(dt: datetime | None) -> str | None:
    """Return `dt` as an ISO 8601 UTC string ending in Z (None stays None)."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        raise ValueError(f"naive datetime {dt!r}: chronicle only handles aware UTC times")
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """Parse an ISO 8601 string, epoch seconds or datetime into an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        return datetime.fromtimestamp(float(value), tz=UTC)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _req_time(value: Any) -> datetime:
    parsed = parse_time(value)
    if parsed is None:
        raise ValueError("missing timestamp")
    return parsed


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
        return cls(
            id=d["id"],
            name=d.get("name", d["id"]),
            state=d.get("state", "unknown"),
            created_at=_req_time(d["created_at"]),
            heartbeat_at=parse_time(d.get("heartbeat_at")),
            config=d.get("config") or {},
            summary=d.get("summary") or {},
            parent=d.get("parent"),
            fork_step=d.get("fork_step"),
            url=d.get("url", ""),
        )


@dataclass(frozen=True)
class Comment:
    """One issue comment as it stood when the snapshot was taken."""

    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    url: str = ""
    reactions: dict[str, int] = field(default_factory=dict)

    @property
    def edited(self) -> bool:
        return self.updated_at > self.created_at

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "author": self.author,
            "body": self.body,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "url": self.url,
            "reactions": self.reactions,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Comment:
        return cls(
            id=int(d["id"]),
            author=d.get("author") or "ghost",
            body=d.get("body") or "",
            created_at=_req_time(d["created_at"]),
            updated_at=_req_time(d.get("updated_at") or d["created_at"]),
            url=d.get("url", ""),
            reactions=dict(d.get("reactions") or {}),
        )


@dataclass(frozen=True)
class Thread:
    """The full state of one GitHub issue thread at snapshot time."""

    number: int
    title: str
    body: str
    state: str
    labels: tuple[str, ...]
    author: str
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None
    url: str
    comments: tuple[Comment, ...] = ()
    reactions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "body": self.body,
            "state": self.state,
            "labels": list(self.labels),
            "author": self.author,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "closed_at": iso(self.closed_at),
            "url": self.url,
            "reactions": self.reactions,
            "comments": [c.to_json() for c in self.comments],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Thread:
        return cls(
            number=int(d["number"]),
            title=d.get("title") or "",
            body=d.get("body") or "",
            state=d.get("state") or "open",
            labels=tuple(d.get("labels") or ()),
            author=d.get("author") or "ghost",
            created_at=_req_time(d["created_at"]),
            updated_at=_req_time(d.get("updated_at") or d["created_at"]),
            closed_at=parse_time(d.get("closed_at")),
            url=d.get("url", ""),
            comments=tuple(Comment.from_json(c) for c in d.get("comments") or ()),
            reactions=dict(d.get("reactions") or {}),
        )


@dataclass(frozen=True)
class PullRequest:
    """A merged pull request that touches a configured path or carries a configured label.

    `files` holds only the changed files that match `github.pulls.paths` (all of them are
    listed by GitHub; the rest are not chronicle data); `labels` all of the PR's labels.
    """

    number: int
    title: str
    author: str
    merged_at: datetime
    url: str
    labels: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    base: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "author": self.author,
            "merged_at": iso(self.merged_at),
            "url": self.url,
            "labels": list(self.labels),
            "files": list(self.files),
            "base": self.base,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PullRequest:
        return cls(
            number=int(d["number"]),
            title=d.get("title") or "",
            author=d.get("author") or "ghost",
            merged_at=_req_time(d["merged_at"]),
            url=d.get("url", ""),
            labels=tuple(d.get("labels") or ()),
            files=tuple(d.get("files") or ()),
            base=d.get("base") or "",
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
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FailureRecord:
        return cls(
            id=str(d["id"]),
            kind=d.get("kind", "manual"),
            source=d.get("source", ""),
            start=_req_time(d["start"]),
            end=parse_time(d.get("end")),
            what=d.get("what", ""),
            accelerator_hours_lost=d.get("accelerator_hours_lost"),
            evidence=tuple(d.get("evidence") or ()),
        )


@dataclass(frozen=True)
class SourceStatus:
    """How one source fared in one snapshot."""

    name: str
    ok: bool
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

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
    `pulls` is None when GitHub failed or `github.pulls` is not configured.
    """

    metrics: list[MetricRow] | None
    runs: list[RunRecord] | None
    threads: list[Thread] | None
    failures: list[FailureRecord]
    statuses: tuple[SourceStatus, ...]
    pulls: list[PullRequest] | None = None

    @property
    def degraded(self) -> bool:
        return any(not s.ok for s in self.statuses)
