"""The data a day's figures are computed from, as of a given time (snapshot stage).

A day sealed late (a source failed on the night it closed) must show what a timely seal
would have shown: its figures are computed from the rows logged up to the first snapshot
taken after it ended, the failure records detectable then and the issue threads as they
stood then. `EvidenceAt` builds that view for any such time from what the store (plus the
snapshot being taken) holds; for the snapshot's own time it is the snapshot's own view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc

from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.run_state import Finish
from chronicle.analysis.series import Series, build_series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, RunRecord, Thread
from chronicle.sources.manual import failures_from_threads

TimedThreads = Mapping[int, Sequence[tuple[datetime, Thread]]]


@dataclass(frozen=True)
class Evidence:
    """The stitched series, failure records and thread states of one as-of time, and
    the run's finish if it had finished by then."""

    series: Series
    failures: list[FailureRecord]
    threads: dict[int, list[Thread]]
    finish: Finish | None = None


def threads_as_of(timed: TimedThreads, when: datetime) -> dict[int, list[Thread]]:
    """Return each thread's states stored up to `when`.

    A thread first stored later (GitHub failed that night) counts with its first stored
    state if it existed by then: GitHub only shows a thread's present text.
    """
    out: dict[int, list[Thread]] = {}
    for number, states in timed.items():
        upto = [t for at, t in states if at <= when]
        if not upto and states and states[0][1].created_at <= when:
            upto = [states[0][1]]
        if upto:
            out[number] = upto
    return out


def merge_failures(*groups: Sequence[FailureRecord]) -> list[FailureRecord]:
    """One record per id; a later group overrides an earlier one (hand-written win)."""
    merged: dict[str, FailureRecord] = {}
    for group in groups:
        for record in group:
            merged[record.id] = record
    return sorted(merged.values(), key=lambda f: (f.start, f.id))


class EvidenceAt:
    """Build (and cache) the Evidence of any as-of time up to the snapshot's own."""

    def __init__(self, config: RunConfig, table: pa.Table, runs: Sequence[RunRecord],
                 timed: TimedThreads, extra: Callable[[], list[FailureRecord]],
                 own: tuple[datetime, Evidence]) -> None:
        self.config, self.table, self.runs, self.timed = config, table, runs, timed
        self.extra = extra  # hand-written and source-given records (not time-bounded)
        self._cache: dict[datetime, Evidence] = {own[0]: own[1]}
        # The finish the newest rows show: the run had finished by `when` if it was then.
        self.finish = own[1].finish

    def __call__(self, when: datetime) -> Evidence:
        if when not in self._cache:
            table = self.table.filter(pc.less_equal(self.table["timestamp"], when.timestamp()))
            series = build_series(table, self.runs, self.config)
            threads = threads_as_of(self.timed, when)
            latest = [states[-1] for states in threads.values()]
            finish = self.finish if self.finish and self.finish.at <= when.timestamp() else None
            failures = merge_failures(detect_failures(series, self.config, when, finish),
                                      failures_from_threads(latest, self.config), self.extra())
            self._cache[when] = Evidence(series, failures, threads, finish)
        return self._cache[when]
