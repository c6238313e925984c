"""What the run changes mid-flight, detected from the store (analysis stage, pure).

Five kinds (models.CHANGE_KINDS), each a `ChangeRecord` (analysis/day_model.py):
- config: a forked child's W&B config differs from its parent's (it takes effect at the
  child's first step), or a run's config differs between two snapshots (from the first
  row it logged after the earlier one);
- sequence_length: the same, for the `wandb.config_keys.sequence_length` path;
- budget: the token budget the lineage's configs imply (analysis/run_config.py) moved;
- mixture: the logged mixture stage switched (analysis/mixture.py);
- pull_request: a merged PR that touches configured paths or carries configured labels.
Every record names the stored file it can be checked against, with its sha256.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import numpy as np

from chronicle.analysis.mixture import StageRows, mixture_changes
from chronicle.analysis.recorded import Recorded, evidence_file, slug
from chronicle.analysis.records import ChangeRecord, Evidence
from chronicle.analysis.run_config import (
    Segment,
    as_count,
    differences,
    implied_budget,
    lookup,
    sequence_length,
)
from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import PullRequest, RunRecord, iso


@dataclass(frozen=True)
class RunChanges:
    """The changes known at a time, each W&B run's sequence length, and the token budget
    the latest configs imply (None: unknown)."""

    changes: Sequence[ChangeRecord] = ()
    sequence_lengths: Mapping[str, int | None] = field(default_factory=dict)
    implied_budget: int | None = None


@dataclass(frozen=True)
class ChangeInputs:
    """What changes are detected from, per snapshot, oldest first."""

    runs: Sequence[tuple[Recorded, Sequence[RunRecord]]] = ()
    pulls: Sequence[tuple[Recorded, Sequence[PullRequest]]] = ()
    stages: StageRows = ()


def run_changes(inputs: ChangeInputs, series: Series, config: RunConfig) -> RunChanges:
    """Return every change the store shows, oldest first (by time, then step, then id),
    with each run's sequence length and the budget the latest configs imply."""
    lineage = _Lineage(inputs.runs, series, config)
    out = lineage.changes()
    out += mixture_changes(inputs.stages, series, config)
    out += pull_changes(inputs.pulls, series)
    for change in out:
        change["budget_fraction"] = budget_fraction(series, change["time"], config)
    out.sort(key=lambda c: (c["time"] or "", c["step"] or 0, c["kind"], c["id"]))
    return RunChanges(out, sequence_lengths(inputs.runs, config), lineage.budget)


def budget_fraction(series: Series, time: str | None, config: RunConfig) -> float | None:
    """Return the tokens processed before `time` over `run.token_budget` (None: unknown)."""
    tokens = series.values.get("total_tokens")
    if time is None or tokens is None:
        return None
    when = datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp()
    ok = np.flatnonzero(np.isfinite(tokens) & (series.timestamp < when))
    return float(tokens[ok[-1]]) / config.run.token_budget if ok.size else None


def row_at(series: Series, when: float) -> int | None:
    """Return the index of the highest step logged at or before `when` (None: none yet)."""
    before = np.flatnonzero(series.timestamp <= when)
    return int(before[-1]) if before.size else None


def _urls(url: str) -> list[Evidence]:
    return [{"url": url}] if url else []


def _stamp(ts: float) -> str | None:
    return iso(datetime.fromtimestamp(ts, tz=UTC))


def pull_changes(pulls: Sequence[tuple[Recorded, Sequence[PullRequest]]],
                 series: Series) -> list[ChangeRecord]:
    """Return one change per merged PR, recorded by the first snapshot that stored it."""
    out: list[ChangeRecord] = []
    seen: set[int] = set()
    for recorded, prs in pulls:
        for pr in prs:
            if pr.number in seen:
                continue
            seen.add(pr.number)
            row = row_at(series, pr.merged_at.timestamp())
            out.append({
                "id": slug("pr", pr.number), "kind": "pull_request", "time": iso(pr.merged_at),
                "step": int(series.step[row]) if row is not None else None,
                "budget_fraction": None, "key": f"#{pr.number}", "name": None,
                "before": None, "after": pr.title, "run": None, "parent": None,
                "evidence": _urls(pr.url) + evidence_file(recorded, "pulls.json"),
                "recorded_by": recorded.id, "recorded_at": iso(recorded.taken_at),
                "detail": {"pull_request": pr.to_json()},
            })
    return out


def latest_configs(runs: Sequence[tuple[Recorded, Sequence[RunRecord]]]
                   ) -> dict[str, Mapping[str, Any]]:
    """Return each run's config as last stored."""
    out: dict[str, Mapping[str, Any]] = {}
    for _, records in runs:
        for record in records:
            out[record.id] = record.config
    return out


def sequence_lengths(runs: Sequence[tuple[Recorded, Sequence[RunRecord]]],
                     config: RunConfig) -> dict[str, int | None]:
    """Return each run's sequence length (its config, else `run.sequence_length`)."""
    return {run: sequence_length(cfg, config) for run, cfg in latest_configs(runs).items()}


@dataclass(frozen=True)
class _Event:
    """A run's config taking effect: at its start, a fork, or an update between snapshots."""

    time: float
    step: int | None
    run: str
    parent: str | None
    before: Mapping[str, Any] | None  # the config it replaces (None: the first run's start)
    after: Mapping[str, Any]
    recorded: Recorded
    record: RunRecord
    update: bool = False


class _Lineage:
    """The lineage's configs over time, and the config, context and budget changes."""

    def __init__(self, runs: Sequence[tuple[Recorded, Sequence[RunRecord]]], series: Series,
                 config: RunConfig) -> None:
        self.history = list(runs)
        self.series, self.config = series, config
        self.budget: int | None = None  # implied by the latest configs, once changes() ran
        self.records: dict[str, list[tuple[int, Recorded, RunRecord]]] = {}
        for i, (recorded, records) in enumerate(self.history):
            for record in records:
                self.records.setdefault(record.id, []).append((i, recorded, record))

    def changes(self) -> list[ChangeRecord]:
        out: list[ChangeRecord] = []
        starts: dict[str, int] = {}
        current: dict[str, Mapping[str, Any]] = {}
        budget = None
        for event in sorted(self._events(), key=lambda e: (e.time, e.step or 0, e.run)):
            if event.before is not None:
                out += self._differences(event)
            if not event.update:
                starts[event.run] = event.step or 0
            current[event.run] = event.after
            order = [r for r in self.series.lineage if r in starts]
            segments = [Segment(r, starts[r], current[r]) for r in order]
            now = implied_budget(segments, self.config)
            if budget is not None and now is not None and now != budget:
                out.append(self._budget(event, budget, now, segments))
            budget = now if now is not None else budget
        self.budget = budget
        return out

    def _events(self) -> Iterator[_Event]:
        forks = {f.run: f for f in self.series.forks}
        for k, run in enumerate(self.series.lineage):
            found = self.records.get(run)
            if not found:
                continue  # rows of a run with no stored record: nothing to compare
            first_i, first_rec, first = found[0]
            if k == 0 or run not in forks:
                at = np.flatnonzero(self.series.run == run)
                yield _Event(float(self.series.timestamp[at[0]]), int(self.series.step[at[0]]),
                             run, None, None, first.config, first_rec, first)
            else:
                fork = forks[run]
                parent = self._config_at(fork.parent, first_i) if fork.parent else None
                yield _Event(fork.timestamp, fork.step, run, fork.parent, parent, first.config,
                             self._recorded_after(fork.timestamp, first_i), first)
            yield from self._updates(run, found)

    def _updates(self, run: str, found: list[tuple[int, Recorded, RunRecord]]
                 ) -> Iterator[_Event]:
        for (_, old_rec, old), (_, new_rec, new) in pairwise(found):
            if not old.config or old.config == new.config:
                continue  # a config first stored empty is not a change when it fills in
            mine = np.flatnonzero((self.series.run == run)
                                  & (self.series.timestamp > old_rec.taken_at.timestamp()))
            if mine.size:
                when, step = float(self.series.timestamp[mine[0]]), int(self.series.step[mine[0]])
            else:
                when, step = new_rec.taken_at.timestamp(), None
            yield _Event(when, step, run, None, old.config, new.config, new_rec, new, True)

    def _config_at(self, run: str, index: int) -> Mapping[str, Any] | None:
        found = self.records.get(run) or []
        best = [rec.config for i, _, rec in found if i <= index]
        return best[-1] if best else (found[0][2].config if found else None)

    def _recorded_after(self, when: float, index: int) -> Recorded:
        """The first snapshot holding the child's record taken after its first row."""
        for recorded, _ in self.history[index:]:
            if recorded.taken_at.timestamp() >= when:
                return recorded
        return self.history[-1][0]

    def _differences(self, e: _Event) -> list[ChangeRecord]:
        assert e.before is not None
        keys = self.config.wandb.config_keys
        canonical_paths = set(keys.values())
        out: list[ChangeRecord] = []
        for name, path in keys.items():
            old, new = as_count(lookup(e.before, path)), as_count(lookup(e.after, path))
            if old != new:
                kind = "sequence_length" if name == "sequence_length" else "config"
                out.append(self._record(e, kind, path, name, old, new))
        names = (e.parent or e.run, e.run)
        for diff in differences(e.before, e.after, names):
            if diff.path not in canonical_paths:
                out.append(self._record(e, "config", diff.path, None, diff.before, diff.after))
        return out

    def _record(self, e: _Event, kind: str, key: str, name: str | None, before: Any,
                after: Any) -> ChangeRecord:
        suffix = e.recorded.id if e.update else None
        return {
            "id": slug(kind, e.run, key, suffix), "kind": kind, "time": _stamp(e.time),
            "step": e.step, "budget_fraction": None, "key": key, "name": name,
            "before": before, "after": after, "run": e.run, "parent": e.parent,
            "evidence": evidence_file(e.recorded, "runs.json") + _urls(e.record.url),
            "recorded_by": e.recorded.id, "recorded_at": iso(e.recorded.taken_at),
            "detail": {"how": "update" if e.update else "fork"},
        }

    def _budget(self, e: _Event, before: int, after: int,
                segments: Sequence[Segment]) -> ChangeRecord:
        record = self._record(e, "budget", "implied_budget", "implied_budget", before, after)
        record["id"] = slug("budget", e.run, e.recorded.id if e.update else None)
        terms = []
        for i, seg in enumerate(segments):
            last = i + 1 == len(segments)
            end = lookup(seg.config, self.config.wandb.config_keys["train_steps"]) if last \
                else segments[i + 1].start
            terms.append({"run": seg.run, "from_step": seg.start, "to_step": as_count(end),
                          "batch_size": as_count(lookup(
                              seg.config, self.config.wandb.config_keys["batch_size"])),
                          "sequence_length": sequence_length(seg.config, self.config)})
        record["detail"] = {**record["detail"], "configured": self.config.run.token_budget,
                            "terms": terms}
        return record
