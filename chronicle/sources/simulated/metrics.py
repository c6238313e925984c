"""The simulated run's W&B side (sources stage): lineage, history rows, run nodes.

The series is generated once (vectorised, numpy) and sliced per call, so a demo can take
a snapshot per simulated night cheaply. Payloads have the shapes the real APIs return
(GraphQL run nodes, `scan_history` rows, REST issue/comment JSON) and go through the same
`parse_*` functions as the live source. Calibrated on the public figures of the Marin
535B-A23B run: loss ~11.8 falling fast, ~19 s/step, MFU ~21% (percent), drop fraction
~10% at step 0, a lineage of W&B runs forked at rewound steps, daily status comments.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime, time
from typing import Any

import numpy as np
import numpy.typing as npt

from chronicle.config import RunConfig
from chronicle.errors import SourceError
from chronicle.models import iso

Arr = npt.NDArray[np.float64]

BATCH_SEQUENCES = 11_264
LOG_EVERY = 10
EVAL_EVERY = 3_000
START_CLOCK = time(2, 14, 1)
STEP_SECONDS = 18.46  # compute time of one step (throughput/duration)
STEP_OVERHEAD = 1.1  # wall minus compute per step: logging, data, checkpoint writes
MFU_AT_REF = 21.3  # percent, at STEP_SECONDS
PEAK_LR = 0.003290470163258143
EVAL_FLOOR, EVAL_EXPONENT, EVAL_END = 1.5, 0.25, 2.04
MINOR_GAPS_PER_DAY = 5.0
MEMORY_GIB = (143.72, 134.63, 135.64, 134.63, 136.11)
TRAIN_KEYS = (
    "train/loss", "train/cross_entropy_loss", "throughput/tokens_per_second",
    "throughput/total_tokens", "throughput/mfu", "throughput/duration", "moe/drop_fraction",
    "grad/norm/total", "optim/learning_rate", "run_progress",
    "train/router/routing_entropy_mean", "train/router/bias_max", "memory/peak_gib",
)
EVAL_KEYS = ("eval_dropless/paloma/macro_loss", "eval/paloma/macro_loss")
INT_KEYS = ("throughput/total_tokens", "optim/learning_rate", "run_progress")  # Go: 0.0 -> 0
NAN_KEYS = ("train/loss", "train/cross_entropy_loss", "grad/norm/total")
# Config changes of each child run: (path in the config, new value, why).
CHANGES: tuple[tuple[tuple[str, ...], Any, str], ...] = (
    (("trainer", "checkpointer", "save_interval"), "1:00:00",
     "checkpoint hourly: the crash cost almost two hours of steps"),
    (("trainer", "z_loss_weight"), 2e-4, "double the z-loss weight after the loss spike"),
    (("model", "num_expert_waves"), 4, "four expert waves: steps ~4% faster"),
    (("optimizer", "min_lr_ratio"), 0.1, "raise the floor of the linear decay to 10%"),
)
PERF_CHANGE = 3  # runs from this lineage index on use the faster expert waves


class SimulatedMetrics:
    """A deterministic simulated run's W&B side: lineage, history rows, state at a time."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng(config.simulated.seed)
        self.t0 = datetime.combine(config.run.start, START_CLOCK, tzinfo=UTC).timestamp()
        self.tokens_per_step = BATCH_SEQUENCES * (config.run.sequence_length or 4096)
        self.planned = max(1000, round(config.run.token_budget / self.tokens_per_step))
        self._timeline(config.simulated.days * 86400.0)
        self._metrics()
        self._lineage()

    # -- W&B ---------------------------------------------------------------------------

    def _timeline(self, span: float) -> None:
        """Rows every LOG_EVERY steps, downtime gaps, forks with rewinds, cut at `span`."""
        rng = self.rng
        wall = LOG_EVERY * (STEP_SECONDS + STEP_OVERHEAD)
        n = int(span / (LOG_EVERY * 17.0)) + 10
        dur = STEP_SECONDS + np.abs(rng.normal(0, 0.05, n)) + rng.exponential(0.04, n)
        slow = rng.random(n) < 0.01  # a slow node drags a few rows (real: 21-22 s steps)
        dur[slow] *= rng.uniform(1.05, 1.2, int(slow.sum()))
        over = STEP_OVERHEAD * rng.gamma(8.0, 1 / 8.0, n)
        gap = np.where(rng.random(n) < MINOR_GAPS_PER_DAY * wall / 86400,
                       np.clip(rng.lognormal(math.log(18 * 60), 0.9, n), 240, 4 * 3600), 0.0)
        runs = int(rng.integers(3, 6))
        n_major = int(rng.integers(max(3, runs - 1), 7))
        expected = span * 0.9 / wall
        edges = np.linspace(0.04, 0.96, n_major + 1)
        major_rows = (rng.uniform(edges[:-1], edges[1:]) * expected).astype(int)
        hours = rng.uniform(1.2, 5.0, n_major)
        hours[rng.integers(n_major)] = rng.uniform(5.0, 9.0)  # at least one long outage
        gap[major_rows] = hours * 3600
        fork_rows = np.sort(rng.choice(major_rows, runs - 1, replace=False))
        rewinds = LOG_EVERY * rng.integers(12, 37, runs - 1)
        run = np.searchsorted(fork_rows, np.arange(n), side="left").astype(np.int64)
        dur[run >= PERF_CHANGE] *= 0.96
        restart = np.concatenate([[True], gap[:-1] > 1800])
        dur[restart] = rng.uniform(45, 90, int(restart.sum()))  # compile + restore
        step_wall = dur + over
        ts = self.t0 + np.concatenate([[0.0], np.cumsum(LOG_EVERY * step_wall[1:] + gap[:-1])])
        shift = np.zeros(n, dtype=np.int64)
        shift[fork_rows + 1] = rewinds
        step = LOG_EVERY * np.arange(n, dtype=np.int64) - np.cumsum(shift)
        cut = min(int(np.searchsorted(ts, self.t0 + span, side="right")),
                  int(np.argmax(step > self.planned)) if (step > self.planned).any() else n)
        keep = fork_rows < cut - 1
        self.fork_rows, self.rewinds = fork_rows[keep], rewinds[keep]
        self.ts, self.step, self.run = ts[:cut], step[:cut], run[:cut]
        self.dur, self.restart = dur[:cut], restart[:cut]
        self.gap_rows = np.nonzero(gap[: cut - 1])[0]
        self.gap_after = gap[: cut - 1]
        self.major = set(int(r) for r in major_rows if r < cut - 1)
        self.n_runs = len(self.fork_rows) + 1
        self.fork_steps = [int(self.step[r + 1]) for r in self.fork_rows]
        superseded = np.zeros(cut, dtype=bool)
        for k, fstep in enumerate(self.fork_steps):
            superseded |= (self.run == k) & (self.step >= fstep)
        self.final = ~superseded

    def _loss_base(self, s: Arr) -> Arr:
        """Train loss before noise: fast early drop from ~11.8, then a power law."""
        tail = 1.0 + 6.6 * (s + 300.0) ** -0.31
        return tail + (11.8 - tail) * np.exp(-((s / 620.0) ** 1.7))

    def _metrics(self) -> None:
        """Every logged value, vectorised over rows; spikes and NaN rows injected."""
        rng, s, n = self.rng, self.step.astype(np.float64), self.step.size
        p = s / self.planned
        final_steps = self.step[self.final]
        top = int(final_steps.max())
        avoid = [*self.fork_steps]
        self.spike_steps: list[int] = []
        wanted = int(rng.integers(3, 5)) if top > 10_000 else 0
        for _ in range(200):
            if len(self.spike_steps) == wanted:
                break
            cand = LOG_EVERY * int(rng.uniform(0.08, 0.95) * top / LOG_EVERY)
            if all(abs(cand - a) > 3000 for a in avoid + self.spike_steps):
                self.spike_steps.append(cand)
        self.spike_steps.sort()
        spike = np.zeros(n)
        fast = np.zeros(n)
        for s0 in self.spike_steps:
            since = np.where(s >= s0, s - s0, np.inf)  # exp(-inf) = 0 before the spike
            amp, tau = rng.uniform(0.35, 1.0), rng.uniform(60, 160)
            spike += amp * np.exp(-since / tau)
            fast += np.exp(-since / 30.0)
        loss = self._loss_base(s) + rng.normal(0, 0.007, n) * (1 + 2 * np.exp(-s / 3000)) + spike
        lr_floor = np.array([self._config(k)["optimizer"]["min_lr_ratio"] for k in range(5)])
        warm = 0.01 * self.planned
        decay = np.clip((s - warm) / (self.planned - warm), 0, 1)
        lr = np.where(s < warm, PEAK_LR * s / warm,
                      PEAK_LR * (1 - (1 - lr_floor[self.run]) * decay))
        peak = rng.uniform(0.25, 0.38)
        grad = (0.19 + np.exp(-((s / 1300.0) ** 1.5)) * 0.95
                + 0.2 * (p / peak) ** 1.2 * np.exp(1.2 * (1 - p / peak)))
        grad *= rng.lognormal(0, 0.1, n) * (1 + rng.uniform(4, 8) * fast)
        drop = (0.034 * (1 - np.exp(-s / 400)) + 0.01 * np.exp(-np.log((s + 1) / 2500) ** 2))
        drop = drop * (1 - 0.25 * p) * rng.lognormal(0, 0.03, n) + 0.08 * fast
        drop[s == 0] = 0.1043
        entropy = 5.9475 - 0.01 * np.sqrt(p) - 0.002 * (1 - np.exp(-s / 2000))
        entropy += rng.normal(0, 0.0006, n) - 0.03 * fast
        nan_pool = np.nonzero(self.final & ~self.restart & (spike < 1e-3)
                              & (s > min(5000, top // 4)))[0]
        nans = min(int(rng.integers(2, 5)), nan_pool.size)
        self.nan_rows = np.sort(rng.choice(nan_pool, nans, replace=False))
        for arr in (loss, grad):
            arr[self.nan_rows] = np.nan
        memory = np.array(MEMORY_GIB)[self.run]
        memory[0] = 143.47
        cols: dict[str, Arr] = {
            "train/loss": loss, "train/cross_entropy_loss": loss,
            "throughput/tokens_per_second": self.tokens_per_step / self.dur,
            "throughput/total_tokens": (s + 1) * self.tokens_per_step,
            "throughput/mfu": MFU_AT_REF * STEP_SECONDS / self.dur,
            "throughput/duration": self.dur, "moe/drop_fraction": drop, "grad/norm/total": grad,
            "optim/learning_rate": lr, "run_progress": p,
            "train/router/routing_entropy_mean": entropy,
            "train/router/bias_max": 0.15 + 12 * np.log1p(s / 400) * rng.lognormal(0, 0.02, n),
            "memory/peak_gib": memory,
        }
        self.values = cols
        self._cols = {k: self._payload_column(k, v) for k, v in cols.items()}
        # Evals at steps 2999, 5999, ...: logged between the rows of 2990 and 3000.
        at = np.nonzero((self.step % EVAL_EVERY == 0) & (self.step > 0)
                        & np.concatenate([[False], self.run[1:] == self.run[:-1]]))[0]
        self.ev_step = self.step[at] - 1
        self.ev_run = self.run[at]
        self.ev_ts = self.ts[at] - np.minimum(0.35 * (self.ts[at] - self.ts[at - 1]), 25.0)
        a = (EVAL_END - EVAL_FLOOR) * self.planned**EVAL_EXPONENT
        ev = EVAL_FLOOR + a * self.ev_step.astype(float) ** -EVAL_EXPONENT
        ev += rng.normal(0, 0.003, at.size) + 0.5 * spike[at]
        self.ev_values = {EVAL_KEYS[0]: ev, EVAL_KEYS[1]: ev + 0.011}

    @staticmethod
    def _payload_column(key: str, arr: Arr) -> list[Any]:
        """JSON values as W&B sends them: "NaN" strings, integral floats as Go ints."""
        out: list[Any] = arr.tolist()
        if key in NAN_KEYS:
            out = ["NaN" if v != v else v for v in out]
        if key in INT_KEYS:
            out = [int(v) if float(v).is_integer() else v for v in out]
        return out

    def _config(self, k: int) -> dict[str, Any]:
        """The (unwrapped) training config of lineage run `k`: the base plus k changes."""
        cfg: dict[str, Any] = {
            "trainer": {"train_batch_size": BATCH_SEQUENCES, "num_train_steps": self.planned,
                        "z_loss_weight": 1e-4, "log_every": LOG_EVERY,
                        "checkpointer": {"save_interval": "2:00:00", "keep": [{"every": 6000}]}},
            "optimizer": {"learning_rate": PEAK_LR, "lr_schedule": "linear", "warmup": 0.01,
                          "min_lr_ratio": 0.05, "weight_decay": 0.1},
            "model": {"hidden_dim": 6144, "num_layers": 48, "num_experts": 384,
                      "num_experts_per_token": 8, "num_shared_experts": 2, "num_expert_waves": 3,
                      "max_seq_len": self.config.run.sequence_length or 4096},
            "resources": {"replicas": 176, "device": {"count": 4, "variant": "GB200"}},
            "eval": {"steps_per_eval": EVAL_EVERY},
            "stop_after_steps": self.planned,
        }
        for path, value, _why in CHANGES[:k]:
            node = cfg
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = value
        return cfg

    def _lineage(self) -> None:
        """Run ids, row ranges, creation and end times of the W&B runs."""
        hexes = self.rng.integers(0, 16**6, self.n_runs)
        self.run_ids = [f"hero-sim-{int(h):06x}" for h in hexes]
        bounds = [0, *(int(r) + 1 for r in self.fork_rows), self.step.size]
        self.ranges = [(bounds[k], bounds[k + 1]) for k in range(self.n_runs)]
        self.created = [self.t0 - 560.0] + [
            float(self.ts[b - 1] + 0.7 * (self.ts[b] - self.ts[b - 1])) for b in bounds[1:-1]]
        self.ev_ranges = [(int(np.searchsorted(self.ev_run, k)),
                           int(np.searchsorted(self.ev_run, k, side="right")))
                          for k in range(self.n_runs)]

    @property
    def end(self) -> datetime:
        """When the last simulated run stops logging."""
        return datetime.fromtimestamp(float(self.ts[-1]), tz=UTC)

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
            yield row
        for e in range(elo, ehi):
            yield self._eval_row(e, created)

    def _eval_row(self, e: int, created: float) -> dict[str, Any]:
        t = float(self.ev_ts[e])
        row: dict[str, Any] = {"_step": int(self.ev_step[e]), "_timestamp": t,
                               "_runtime": t - created}
        row.update({key: float(v[e]) for key, v in self.ev_values.items()})
        return row

    def truth(self) -> dict[str, Any]:
        """Injected facts for tests: outages, spike steps, NaN steps, forks, run ids."""
        outages = [{"start": utc(self.ts[r]), "end": utc(self.ts[r + 1]),
                    "minutes": float(self.ts[r + 1] - self.ts[r]) / 60,
                    "major": int(r) in self.major, "fork": bool(np.isin(r, self.fork_rows))}
                   for r in self.gap_rows]
        return {
            "runs": list(self.run_ids), "fork_steps": list(self.fork_steps),
            "rewinds": [int(r) for r in self.rewinds], "outages": outages,
            "spike_steps": list(self.spike_steps),
            "nan_steps": [int(self.step[r]) for r in self.nan_rows],
            "rows": int(self.step.size), "evals": int(self.ev_step.size),
        }

    def state_at(self, when: float) -> dict[str, Any]:
        """The stitched run's latest figures at epoch `when` (for thread text)."""
        i = max(0, int(np.searchsorted(self.ts, when, side="right")) - 1)
        lo = max(0, i - 5)
        window = self.values["train/loss"][lo : i + 1]
        down = sum(min(float(self.ts[r + 1]), when) - max(float(self.ts[r]), when - 86400)
                   for r in self.gap_rows if self.ts[r] < when and self.ts[r + 1] > when - 86400)
        return {"step": int(self.step[i]), "time": utc(self.ts[i]),
                "loss": float(np.nanmean(window)) if np.isfinite(window).any() else math.nan,
                "run": self.run_ids[int(self.run[i])],
                "tokens": float(self.values["throughput/total_tokens"][i]),
                "mfu": float(self.values["throughput/mfu"][i]),
                "drop": float(self.values["moe/drop_fraction"][i]),
                "grad": float(np.nanmedian(self.values["grad/norm/total"][lo : i + 1])),
                "progress": float(self.step[i]) / self.planned, "down_hours": down / 3600}


def utc(epoch: float) -> datetime:
    """Return epoch seconds as an aware UTC datetime."""
    return datetime.fromtimestamp(float(epoch), tz=UTC)
