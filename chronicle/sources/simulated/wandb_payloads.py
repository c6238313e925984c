"""The simulated run's W&B payloads (sources stage): GraphQL run nodes and `scan_history`
rows as of any time, sliced from the series metrics.py generated once.

Shaped as the real APIs return them, for the same `parse_*` functions as the live source:
configs wrapped as {"value": ...}, "NaN" strings, integral floats as Go ints, and the
data-mixture stage and weights on the rows that log them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import numpy as np

from chronicle.errors import SourceError
from chronicle.models import iso
from chronicle.sources.simulated.metrics import TRAIN_KEYS, Arr, SimulatedMetrics, utc
from chronicle.sources.simulated.plan import STAGE_KEY, stage_weights

INT_KEYS = ("throughput/total_tokens", "optim/learning_rate", "run_progress")  # Go: 0.0 -> 0
NAN_KEYS = ("train/loss", "train/cross_entropy_loss", "grad/norm/total")


def payload_column(key: str, arr: Arr) -> list[Any]:
    """JSON values as W&B sends them: "NaN" strings, integral floats as Go ints."""
    out: list[Any] = arr.tolist()
    if key in NAN_KEYS:
        out = ["NaN" if v != v else v for v in out]
    if key in INT_KEYS:
        out = [int(v) if float(v).is_integer() else v for v in out]
    return out


class SimulatedWandb(SimulatedMetrics):
    """The simulated run as W&B serves it."""

    @functools.cached_property
    def _cols(self) -> dict[str, list[Any]]:
        """Every logged value as W&B's JSON would carry it, computed once."""
        return {k: payload_column(k, v) for k, v in self.values.items()}

    def run_nodes(self, as_of: datetime) -> list[dict[str, Any]]:
        """GraphQL run nodes created by `as_of`, in lineage order."""
        now = as_of.timestamp()
        nodes = []
        for k, rid in enumerate(self.run_ids):
            if self.created[k] > now:
                break
            a, b = self.ranges[k]
            last = a + int(np.searchsorted(self.ts[a:b], now, side="right")) - 1
            ended = float(self.ts[b - 1]) + 60 <= now
            state = ("crashed" if k < self.n_runs - 1 else "finished") if ended else "running"
            summary: dict[str, Any] = {}
            if last >= a:
                summary = {key: float(self.values[key][last]) for key in TRAIN_KEYS}
                summary.update(_step=int(self.step[last]), _timestamp=float(self.ts[last]),
                               _runtime=float(self.ts[last]) - self.created[k])
            beat = min(now, float(self.ts[max(last, a)]) + 30) if last >= a else self.created[k]
            cfg = {key: {"value": v} for key, v in self._config(k).items()}
            cfg["_wandb"] = {"value": {"cli_version": "0.26.0"}}
            nodes.append({
                "name": rid, "displayName": rid, "state": state,
                "createdAt": iso(utc(self.created[k])), "heartbeatAt": iso(utc(beat)),
                "tags": ["hero", "moe", "simulated"], "group": "moe-hero-ep", "notes": None,
                "config": json.dumps(cfg), "summaryMetrics": json.dumps(summary),
            })
        return nodes

    def history(self, run_id: str, min_step: int, as_of: datetime) -> Iterator[dict[str, Any]]:
        """`scan_history` rows of `run_id` with step >= min_step logged by `as_of`."""
        if run_id not in self.run_ids:
            raise SourceError("simulated", f"unknown W&B run {run_id!r}; the lineage is "
                              f"{', '.join(self.run_ids)}")
        k, now = self.run_ids.index(run_id), as_of.timestamp()
        a, b = self.ranges[k]
        lo = a + int(np.searchsorted(self.step[a:b], min_step))
        hi = a + int(np.searchsorted(self.ts[a:b], now, side="right"))
        ea, eb = self.ev_ranges[k]
        elo = ea + int(np.searchsorted(self.ev_step[ea:eb], min_step))
        ehi = ea + int(np.searchsorted(self.ev_ts[ea:eb], now, side="right"))
        created = self.created[k]
        for i in range(lo, hi):
            while elo < ehi and self.ev_step[elo] < self.step[i]:
                yield self._eval_row(elo, created)
                elo += 1
            t = float(self.ts[i])
            row: dict[str, Any] = {"_step": int(self.step[i]), "_timestamp": t,
                                   "_runtime": t - created}
            for key in TRAIN_KEYS:
                row[key] = self._cols[key][i]
            if i in self.mixture_rows:
                stage = self.mixture_rows[i]
                row.update({STAGE_KEY: stage, **stage_weights(stage)})
            yield row
        for e in range(elo, ehi):
            yield self._eval_row(e, created)

    def _eval_row(self, e: int, created: float) -> dict[str, Any]:
        t = float(self.ev_ts[e])
        row: dict[str, Any] = {"_step": int(self.ev_step[e]), "_timestamp": t,
                               "_runtime": t - created}
        row.update({key: float(v[e]) for key, v in self.ev_values.items()})
        return row
