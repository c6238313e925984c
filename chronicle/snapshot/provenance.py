"""Provenance of a day (snapshot stage): the stored artifact each figure was read or computed from.

Every figure on a day page is OBSERVED (a value read as logged from a named artifact) or
DERIVED (computed by a named, versioned method from named inputs). `day_provenance`
returns the map stored under "provenance" in the day JSON; artifacts are named by their
path relative to docs/ and their sha256, so a reader can fetch and check them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from chronicle.analysis.series import day_bounds
from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.models import FailureRecord, MetricRow
from chronicle.store import Store, dump_json, parquet_bytes, sha256_bytes, sha256_file

OBSERVED = "OBSERVED"
DERIVED = "DERIVED"
PROVENANCE_SCHEMA = "chronicle-provenance/1"

# figure path -> (kind, method, inputs, scope). Inputs are canonical metric names (shown
# with their W&B key), "config:<key>" or "day:<figure>" of the previous sealed day.
# Scopes: "day" = metric rows of the day; "through" = also the last row before it;
# "failures" / "config" / "previous" = the failure records, chronicle.yml, the day before.
_FIGURES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "data.rows": (DERIVED, "count_rows/1", ("timestamp",), ("day",)),
    "data.first": (OBSERVED, "first_row_time/1", ("timestamp",), ("day",)),
    "data.last": (OBSERVED, "last_row_time/1", ("timestamp",), ("day",)),
    "steps.first": (OBSERVED, "first_step/1", ("step",), ("day",)),
    "steps.last": (OBSERVED, "last_step/1", ("step",), ("day",)),
    "steps.count": (DERIVED, "step_span/1", ("step",), ("day",)),
    "tokens.day": (DERIVED, "tokens_day/1", ("total_tokens",), ("through",)),
    "tokens.cumulative": (OBSERVED, "last_total_tokens/1", ("total_tokens",), ("through",)),
    "tokens.budget": (OBSERVED, "config/1", ("config:run.token_budget",), ("config",)),
    "tokens.budget_fraction": (
        DERIVED, "budget_fraction/1", ("total_tokens", "config:run.token_budget"),
        ("through", "config")),
    "loss.train_last": (OBSERVED, "last_finite/1", ("loss",), ("day",)),
    "loss.train_mean": (DERIVED, "mean_finite/1", ("loss",), ("day",)),
    "loss.train_min": (DERIVED, "min_finite/1", ("loss",), ("day",)),
    "loss.train_change": (
        DERIVED, "change_vs_previous_day/1", ("loss", "day:loss.train_last"),
        ("day", "previous")),
    "loss.eval_last": (OBSERVED, "last_finite/1", ("eval_loss",), ("through",)),
    "loss.eval_step": (OBSERVED, "step_of_last_finite/1", ("eval_loss", "step"), ("through",)),
    "loss.nan_rows": (DERIVED, "count_non_finite/1", ("loss",), ("day",)),
    "throughput.compute_tokens_per_second_p50": (
        DERIVED, "percentile/1", ("tokens_per_second",), ("day",)),
    "throughput.sustained_tokens_per_second": (
        DERIVED, "sustained_tokens_per_second/1", ("total_tokens", "timestamp"), ("through",)),
    "throughput.goodput": (
        DERIVED, "goodput/1", ("total_tokens", "tokens_per_second", "timestamp"), ("through",)),
    "throughput.mfu_p10": (DERIVED, "percentile/1", ("mfu",), ("day",)),
    "throughput.mfu_p50": (DERIVED, "percentile/1", ("mfu",), ("day",)),
    "throughput.mfu_p90": (DERIVED, "percentile/1", ("mfu",), ("day",)),
    "moe.drop_fraction_p50": (DERIVED, "percentile/1", ("drop_fraction",), ("day",)),
    "moe.drop_fraction_max": (DERIVED, "max_finite/1", ("drop_fraction",), ("day",)),
    "grad_norm.max": (DERIVED, "max_finite/1", ("grad_norm",), ("day",)),
    "grad_norm.p50": (DERIVED, "percentile/1", ("grad_norm",), ("day",)),
    "learning_rate.last": (OBSERVED, "last_finite/1", ("learning_rate",), ("day",)),
    "downtime_seconds": (
        DERIVED, "downtime_in_gaps/1", ("timestamp", "config:failures.gap_minutes"),
        ("through", "config")),
    "restarts": (DERIVED, "count_restarts/1", ("failures",), ("failures",)),
    "accelerator_hours": (
        DERIVED, "accelerator_hours/1", ("timestamp", "config:run.accelerators.count"),
        ("through", "config")),
    "cost.usd": (
        DERIVED, "cost/1", ("day:accelerator_hours", "config:run.prices_usd_per_accelerator_hour"),
        ("config",)),
    "cumulative.accelerator_hours": (
        DERIVED, "running_sum/1", ("accelerator_hours", "day:cumulative.accelerator_hours"),
        ("through", "config", "previous")),
    "cumulative.downtime_seconds": (
        DERIVED, "running_sum/1", ("downtime_seconds", "day:cumulative.downtime_seconds"),
        ("through", "config", "previous")),
}
METHOD_PREFIX = "chronicle.days."


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


@functools.lru_cache(maxsize=4096)
def _time_range(path: str, size: int) -> tuple[float, float] | None:
    """Return (min, max) timestamp of a Parquet file from its footer statistics."""
    meta = pq.read_metadata(path)
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    if "timestamp" not in names or meta.num_rows == 0:
        return None
    col = names.index("timestamp")
    lo, hi = float("inf"), float("-inf")
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(col).statistics
        if stats is None or not stats.has_min_max:
            return None
        lo, hi = min(lo, float(stats.min)), max(hi, float(stats.max))
    return lo, hi


def metrics_file(docs: Path, rel: str, sha256: str, size: int) -> MetricsFile | None:
    """Return a stored metrics.parquet with its row time range, or None if it has no rows."""
    found = _time_range(str(docs / rel), size)
    return MetricsFile(Artifact(rel, sha256, size), *found) if found else None


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
    """Return the provenance map of a day: figure path -> kind, method, inputs, artifacts."""
    figures: dict[str, Any] = {}
    for path, (kind, method, inputs, wanted) in _FIGURES.items():
        if not _present(summary, path):
            continue
        artifacts: list[Artifact] = []
        for scope in wanted:
            for a in scopes.get(scope, ()):
                if a not in artifacts:
                    artifacts.append(a)
        entry: dict[str, Any] = {
            "kind": kind,
            "inputs": [_input_name(i, raw_keys) for i in inputs],
            "artifacts": [a.to_json() for a in artifacts],
        }
        if kind == DERIVED:
            entry["method"] = METHOD_PREFIX + method
        else:
            entry["read_by"] = METHOD_PREFIX + method
        figures[path] = entry
    return {"schema": PROVENANCE_SCHEMA, "figures": figures}


def _present(summary: Mapping[str, Any], path: str) -> bool:
    node: Any = summary
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return node is not None and node != {}


def _input_name(name: str, raw_keys: Mapping[str, str]) -> str:
    if name in raw_keys:
        return f"{name} ({raw_keys[name]})"
    return name


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
        prev = (day - timedelta(days=1)).isoformat()
        rel = f"days/{prev}.json"
        blob = sealed_now.get(prev, {}).get(rel)
        if blob is None and (self.store.docs / rel).is_file():
            blob = (self.store.docs / rel).read_bytes()
        scopes["previous"] = [Artifact(rel, sha256_bytes(blob), len(blob))] if blob else []
        return scopes
