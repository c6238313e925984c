"""Weights & Biases: run records and full-resolution history, fetched incrementally.

`parse_*` turn raw payloads (GraphQL run nodes, `scan_history` rows) into models; they
are shared by the live fetcher and the simulated source.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from chronicle.models import MetricRow, RunRecord, parse_time

_SPECIAL = {"NaN": math.nan, "nan": math.nan, "Infinity": math.inf, "-Infinity": -math.inf,
            "inf": math.inf, "-inf": -math.inf}


def _json_field(value: Any) -> dict[str, Any]:
    """W&B returns config/summary as JSON strings in GraphQL, dicts from the client."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return dict(value)


def _unwrap_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """GraphQL config values come wrapped as {"value": ..., "desc": ...}; unwrap them."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key.startswith("_wandb"):
            continue
        if isinstance(value, Mapping) and "value" in value and set(value) <= {"value", "desc"}:
            out[key] = value["value"]
        else:
            out[key] = value
    return out


def _clean_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Keep scalar summary values only (media/histograms are not chronicle data)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key.startswith("_wandb"):
            continue
        if isinstance(value, bool) or value is None or isinstance(value, str):
            out[key] = value
        elif isinstance(value, int | float):
            out[key] = value if math.isfinite(value) else None
    return out


def parse_run(raw: Mapping[str, Any], parent: str | None = None,
              fork_step: int | None = None, url: str = "") -> RunRecord:
    """Return a RunRecord from a GraphQL run node (`name`, `state`, `createdAt`, ...)."""
    created = parse_time(raw.get("createdAt"))
    if created is None:
        raise ValueError(f"run {raw.get('name')!r} has no createdAt")
    return RunRecord(
        id=str(raw["name"]),
        name=str(raw.get("displayName") or raw["name"]),
        state=str(raw.get("state") or "unknown"),
        created_at=created,
        heartbeat_at=parse_time(raw.get("heartbeatAt")),
        config=_unwrap_config(_json_field(raw.get("config"))),
        summary=_clean_summary(_json_field(raw.get("summaryMetrics"))),
        parent=parent,
        fork_step=fork_step,
        url=url,
    )


def parse_value(value: Any) -> float | None:
    """Normalise one history value to float: ints (Go turns 1.0 into 1), NaN strings."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _SPECIAL:
            return _SPECIAL[value]
        try:
            return float(value)
        except ValueError:
            return None
    return None  # media, histograms, nested dicts: not metric values


def parse_history_row(run_id: str, raw: Mapping[str, Any],
                      keys: frozenset[str] | None = None) -> MetricRow | None:
    """Return a MetricRow from one `scan_history` row, or None if it has no step/time.

    `keys` restricts the row to those W&B keys (None keeps every numeric key).
    """
    step, stamp = raw.get("_step"), parse_value(raw.get("_timestamp"))
    if step is None or stamp is None or not math.isfinite(stamp):
        return None
    row: MetricRow = {"run": run_id, "step": int(step), "timestamp": stamp}
    for key, value in raw.items():
        if key.startswith("_") or (keys is not None and key not in keys):
            continue
        number = parse_value(value)
        if number is not None:
            row[key] = number
    return row
