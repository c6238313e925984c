"""What a snapshot adds to the days it seals: figure provenance and corrections.

Glue between the store (which artifacts exist, what sealed pages say) and the pure
analysis in provenance.py and analysis/corrections.py; called by pipeline.take_snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from chronicle.analysis.corrections import find_corrections, late_days
from chronicle.analysis.days import summarize_day
from chronicle.analysis.series import Series, day_bounds
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, MetricRow, Thread
from chronicle.snapshot.provenance import Artifact, MetricsFile, metrics_file, metrics_for
from chronicle.store import Store, dump_json, parquet_bytes, sha256_bytes, sha256_file

CONFIG_FILE = "chronicle.yml"


class SealContext:
    """The artifacts of the store plus the snapshot being taken, for provenance."""

    def __init__(self, config: RunConfig, store: Store, sid: str,
                 new_rows: Sequence[MetricRow] | None, failures: Sequence[FailureRecord]) -> None:
        self.store = store
        self.metrics: list[MetricsFile] = []
        for snap in store.snapshots():
            meta = snap.files.get("metrics.parquet")
            if meta:
                rel = f"data/{snap.id}/metrics.parquet"
                found = metrics_file(store.docs, rel, meta["sha256"], meta["size"])
                if found:
                    self.metrics.append(found)
        if new_rows:
            # Same bytes as the store will write (the sha256 is the manifest's).
            blob = parquet_bytes(list(new_rows))
            ts = [float(r["timestamp"]) for r in new_rows]
            self.metrics.append(MetricsFile(
                Artifact(f"data/{sid}/metrics.parquet", sha256_bytes(blob), len(blob)),
                min(ts), max(ts)))
        fblob = dump_json([f.to_json() for f in failures])
        self.failures = Artifact(f"data/{sid}/failures.json", sha256_bytes(fblob), len(fblob))
        cfg = config.root / CONFIG_FILE
        self.config = (Artifact(CONFIG_FILE, sha256_file(cfg), cfg.stat().st_size)
                       if cfg.is_file() else None)

    def scopes(self, day: date, sealed_now: Mapping[str, Mapping[str, bytes]]
               ) -> dict[str, list[Artifact]]:
        """Return the artifacts of each provenance scope for one day being sealed."""
        start, end = day_bounds(day)
        scopes: dict[str, list[Artifact]] = dict(metrics_for(self.metrics, start, end))
        scopes["failures"] = [self.failures]
        scopes["config"] = [self.config] if self.config else []
        prev = (day - timedelta(days=1)).isoformat()
        rel = f"days/{prev}.json"
        blob = sealed_now.get(prev, {}).get(rel)
        if blob is None and (self.store.docs / rel).is_file():
            blob = (self.store.docs / rel).read_bytes()
        scopes["previous"] = [Artifact(rel, sha256_bytes(blob), len(blob))] if blob else []
        return scopes


def published_corrections(store: Store) -> list[dict[str, Any]]:
    """Return every correction recorded in a manifest, oldest first."""
    return [c for snap in store.snapshots() for c in snap.manifest.get("corrections", ())]


def pending_corrections(store: Store) -> list[dict[str, Any]]:
    """Return corrections found since the newest snapshot that sealed a day (not yet announced)."""
    out: list[dict[str, Any]] = []
    for snap in reversed(store.snapshots()):
        if snap.sealed:
            break
        out[:0] = snap.manifest.get("corrections", ())
    return out


def snapshot_corrections(
    config: RunConfig,
    store: Store,
    series: Series,
    failures: Sequence[FailureRecord],
    history: Mapping[int, Sequence[Thread]],
    new_rows: Sequence[MetricRow] | None,
    sid: str,
    as_of: datetime,
) -> list[dict[str, Any]]:
    """Return corrections to sealed days that received rows in this snapshot."""
    if not new_rows:
        return []
    touched = late_days(float(r["timestamp"]) for r in new_rows)
    sealed = store.sealed_days()
    earlier = published_corrections(store)
    out: list[dict[str, Any]] = []
    for day in sorted(set(touched) & set(sealed)):
        path = store.days / f"{day.isoformat()}.json"
        if not path.is_file():
            continue  # verify reports it; nothing to compare with
        before = json.loads(path.read_bytes())
        now = summarize_day(day, series, failures, history, config, before.get("sealed_by", sid),
                            as_of)
        out += find_corrections(day, before, now, earlier, touched[day], sid, as_of)
    return out
