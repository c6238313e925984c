"""Provenance of a day (snapshot stage): the stored artifact each figure was read or computed from.

Every figure on a day page is OBSERVED (a value read as logged from a named artifact) or
DERIVED (computed by a named, versioned method from named inputs). `day_provenance`
returns the map stored under "provenance" in the day JSON; artifacts are named by their
path relative to docs/ and their sha256, so a reader can fetch and check them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from chronicle.analysis.day_model import DERIVED, figure_at, figures
from chronicle.analysis.series import day_bounds
from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.models import FailureRecord, RunRecord
from chronicle.store import SnapshotInfo, Store, dump_json, parquet_bytes, sha256_bytes, sha256_file

PROVENANCE_SCHEMA = "chronicle-provenance/1"
METHOD_PREFIX = "chronicle.days."
# The version of how a day's files are made from its figures: the Markdown page, the
# prose and verdict text, the chart specs and the JSON's layout. Recorded in each new
# day's provenance ("page"); `verify --recompute` compares a day's bytes only when it
# matches (and every figure's method does). Bump it with any change that makes the same
# figures seal other bytes: tests/test_sealed_compat.py's golden list catches such a
# change, and `python -m tests.support.goldens` refuses to rewrite that list until the
# version is bumped.
# /2: a detected failure records its facts (`detail`), from which every language says it.
# /3: charts are Altair charts: their specs are Altair's, data in named datasets.
# /4: the day JSON records the run's state (`run_state`); after a finish no wall-clock,
#     downtime or telemetry check counts, and the finish's silence is no open gap.
# /5: the summary says that the run finished that day, had finished before it, or had
#     stalled by the day's figures (and the digest of a day after the finish says so).
# /6: text on a chart (marker and alert names) in one dark grey, 7:1 on white (the
#     marker names were in their kind's colour, alert names mid-grey: 2.6-3.5:1).
# /7: a health check's silence is written as a duration (7 h 40 min, not "460 min").
# /8: a change of the day is its sentence alone ("Config trainer.x: 1 → 2", not
#     "Config: Config trainer.x: 1 → 2": the sentence names its kind).
# /9: a gap still open is shaded as long as it had lasted (it was a span of no width).
# /10: a budget change in the site's three significant digits, or as many as tell its two
#      values apart (18T → 17.8T, not 18.000T → 17.820T).
# /11: a budget marker's name without its unit ("budget 18T → 17.8T"): it was cut.
# /12: names on a chart are outlined in the background colour (a rule or line behind one
#      no longer strikes it through), an alert line's name is written on the side its data
#      leaves free, and a legend's columns follow the chart's width (rows of two below
#      560 px: a phone cut entries off a legend of fixed columns).
# /13: a detected failure's evidence records its facts (`detail.evidence`: role, run,
#      step, time), and the page and charts say a detected failure from its facts in
#      English too ("after step 7,220", "5 h 36 min", not the stored "7220", "5.6 h").
# /14: a NaN loss on one logged row names its step once ("on one logged row, at step
#      4,660", not "steps 4,660–4,660").
# /15: MFU in the key figures as a share whatever unit it is logged in ("MFU p50 22.1%",
#      not "MFU p50 (percent) 22.1%"), its change in percentage points (+0.4 pp, was 0.4).
# /16: every outbound link (an issue, a comment, a pull request) is a Robust Link: an
#      inline <a> with data-originalurl and data-versiondate (the day's `figures_as_of`,
#      which the day JSON now records), and data-versionurl where a memento is known.
# /17: a day without a logged row says so ("No metric row was logged this day.", not
#      "Steps — to — from 0 logged rows."), one row is one "logged row", and one step is
#      named once ("Step 163,210 from 1 logged row", not "Steps 163,210 to 163,210").
# /18: the day opens with what happened (its ledger: analysis/ledger.py), a headline and
#      one line per event, each said from its facts; its JSON records them (`ledger`);
#      corrections the ledger found later are announced with late rows'.
# /19: its charts draw markers and alert lines under the data (raw data at 0.5 under a
#      smoothed line), a line breaks where logging stopped, a marker's tooltip is cut
#      between words; words in another language (a thread title, a comment) carry their
#      `lang`; a failed health check's line is one message (its punctuation translated).
DAY_PAGE = "chronicle.day_page/19"


@dataclass(frozen=True)
class Artifact:
    """One stored file a figure was read from: path relative to docs/, sha256, size."""

    path: str
    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True)
class MetricsFile:
    """A snapshot's metrics.parquet and the time range of its rows (epoch seconds)."""

    artifact: Artifact
    first: float
    last: float


def metrics_for(
    files: Sequence[MetricsFile], start: float, end: float
) -> dict[str, list[Artifact]]:
    """Return the metric files of a day ("day") and those plus the last one before ("through")."""
    day = [f.artifact for f in files if f.first < end and f.last >= start]
    before = [f for f in files if f.first < start]
    through = list(day)
    if before:
        last = max(before, key=lambda f: min(f.last, start))
        if last.artifact not in through:
            through.insert(0, last.artifact)
    return {"day": day, "through": through}


def day_provenance(
    summary: Mapping[str, Any],
    raw_keys: Mapping[str, str],
    scopes: Mapping[str, Sequence[Artifact]],
) -> dict[str, Any]:
    """Return the provenance map of a day: figure path -> kind, method, inputs, artifacts.

    The figures and how each is obtained are declared once, on the day summary's types
    (analysis/day_model.py); a figure that is missing (None) that day has no entry.
    """
    out: dict[str, Any] = {}
    for path, fig in figures():
        if figure_at(summary, path) in (None, {}):
            continue
        artifacts: list[Artifact] = []
        for scope in fig.scopes:
            for a in scopes.get(scope, ()):
                if a not in artifacts:
                    artifacts.append(a)
        entry: dict[str, Any] = {
            "kind": fig.kind,
            "inputs": [_input_name(i, raw_keys) for i in fig.inputs],
            "artifacts": [a.to_json() for a in artifacts],
        }
        entry["method" if fig.kind == DERIVED else "read_by"] = METHOD_PREFIX + fig.method
        out[path] = entry
    return {"schema": PROVENANCE_SCHEMA, "figures": out, "page": DAY_PAGE}


def _input_name(name: str, raw_keys: Mapping[str, str]) -> str:
    if name in raw_keys:
        return f"{name} ({raw_keys[name]})"
    return name


def as_stored(failures: Sequence[FailureRecord],
              stored: Sequence[FailureRecord]) -> list[FailureRecord]:
    """Return detected `failures` as a snapshot stored before their evidence carried its
    facts would have: without `detail.evidence` where its record of the same id has none
    (chronicle.day_page/13 added them; nothing else a record says may differ, so
    `verify --recompute` still proves every other byte of an older failures.json)."""
    had = {f.id: f for f in stored}
    out = []
    for f in failures:
        old = had.get(f.id)
        if "evidence" in f.detail and old is not None and "evidence" not in old.detail:
            f = replace(f, detail={k: v for k, v in f.detail.items() if k != "evidence"})
        out.append(f)
    return out


class SealContext:
    """The artifacts of the store plus the snapshot being taken, for provenance."""

    def __init__(self, config: RunConfig, store: Store, sid: str,
                 new_rows: pa.Table | None, failures: Sequence[FailureRecord],
                 runs: Sequence[RunRecord] | None = None,
                 stored: SnapshotInfo | None = None) -> None:
        """`stored`: the snapshot `sid` as stored (verify --recompute replays it): its
        files' sha256s are its manifest's, not those of bytes made again."""
        self.store, self.stored = store, stored
        self.new_metrics: dict[str, Any] | None = None  # {sha256, size} of tonight's file
        self.metrics: list[MetricsFile] = []
        for snap in store.snapshots():
            meta = snap.files.get("metrics.parquet")
            # The row time range from the file's footer, read from bytes checked against
            # its manifest (store/read.py), like every store file a seal reads.
            found = store.metrics_range(snap) if meta else None
            if meta and found:
                self.metrics.append(MetricsFile(Artifact(
                    f"data/{snap.id}/metrics.parquet", meta["sha256"], meta["size"]), *found))
        if stored is not None:
            meta = stored.files.get("metrics.parquet")
            self.new_metrics = dict(meta) if meta else None
            found = store.metrics_range(stored) if meta else None
            if meta and found:
                self.metrics.append(MetricsFile(Artifact(
                    f"data/{sid}/metrics.parquet", meta["sha256"], meta["size"]), *found))
        elif new_rows is not None:
            # Same bytes as the store will write (the sha256 is the manifest's).
            blob = parquet_bytes(new_rows)
            self.new_metrics = {"sha256": sha256_bytes(blob), "size": len(blob)}
            if new_rows.num_rows:
                span = pc.min_max(new_rows.column("timestamp"))
                self.metrics.append(MetricsFile(
                    Artifact(f"data/{sid}/metrics.parquet", sha256_bytes(blob), len(blob)),
                    float(span["min"].as_py()), float(span["max"].as_py())))
            del blob  # up to ~100 MB on a heavy night: not kept past its checksum
        # The run configs a sequence length is read from: tonight's, else the newest stored.
        self.runs: Artifact | None = None
        if stored is not None and "runs.json" in stored.files:
            meta = stored.files["runs.json"]
            self.runs = Artifact(f"data/{sid}/runs.json", meta["sha256"], meta["size"])
        elif runs is not None:
            rblob = dump_json([r.to_json() for r in runs])
            self.runs = Artifact(f"data/{sid}/runs.json", sha256_bytes(rblob), len(rblob))
        else:
            for snap in reversed(store.snapshots()):
                meta = snap.files.get("runs.json")
                if meta:
                    self.runs = Artifact(f"data/{snap.id}/runs.json", meta["sha256"],
                                         meta["size"])
                    break
        if stored is not None:  # made again as the version that stored it wrote them
            failures = as_stored(failures, store.failures_of(stored))
        fblob = dump_json([f.to_json() for f in failures])
        self.failures = Artifact(f"data/{sid}/failures.json", sha256_bytes(fblob), len(fblob))
        cfg = config.root / CONFIG_NAME
        self.config = (Artifact(CONFIG_NAME, sha256_file(cfg), cfg.stat().st_size)
                       if cfg.is_file() else None)

    def scopes(self, day: date, sealed_now: Mapping[str, Mapping[str, bytes]]
               ) -> dict[str, list[Artifact]]:
        """Return the artifacts of each provenance scope for one day being sealed."""
        start, end = day_bounds(day)
        scopes: dict[str, list[Artifact]] = dict(metrics_for(self.metrics, start, end))
        scopes["failures"] = [self.failures]
        scopes["config"] = [self.config] if self.config else []
        scopes["runs"] = [self.runs] if self.runs else []
        prev = (day - timedelta(days=1)).isoformat()
        rel = f"days/{prev}.json"
        # A day the replayed snapshot sealed too is cited as it sealed it (its manifest's
        # sha256): made again under a newer page version, its bytes would differ.
        meta = (self.stored.sealed.get(prev) or {}).get(rel) if self.stored else None
        if isinstance(meta, Mapping) and "sha256" in meta:
            scopes["previous"] = [Artifact(rel, str(meta["sha256"]), int(meta.get("size", 0)))]
            return scopes
        blob = sealed_now.get(prev, {}).get(rel)
        if blob is None:
            blob = self.store.sealed_bytes(rel)  # checked against the manifest sealing it
        scopes["previous"] = [Artifact(rel, sha256_bytes(blob), len(blob))] if blob else []
        return scopes
