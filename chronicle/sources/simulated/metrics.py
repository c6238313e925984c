"""The simulated run's W&B side (sources stage): its timeline, lineage and every value.

The series is generated once (vectorised, numpy); wandb_payloads.py slices it into the
payloads the real API returns. Calibrated on the public figures of the Marin 535B-A23B
run: loss ~11.8 falling fast, ~19 s/step, MFU ~21% (percent), drop fraction ~10% at step
0, a lineage of W&B runs forked at rewound steps, and the planned changes of plan.py
(a shorter schedule at 25%, mixture stages, a 16K context at ~82%).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

import numpy as np
import numpy.typing as npt

from chronicle.config import RunConfig
from chronicle.sources.simulated.plan import (
    BATCH_SEQUENCES,
    CONTEXT,
    CONTEXT_STEP_FACTOR,
    CONTEXT_WORK,
    DROP_REBOUND,
    DROP_REBOUND_STEPS,
    LONG_LOG_EVERY,
    OUTAGE_CHANGES,
    PEAK_LR,
    PERF_CHANGE,
    PLANNED_GAP_S,
    Fork,
    base_config,
    make_plan,
    plan_forks,
    run_config,
)

Arr = npt.NDArray[np.float64]

LOG_EVERY = 10
EVAL_EVERY = 3_000
START_CLOCK = time(2, 14, 1)
STEP_SECONDS = 18.46  # compute time of one step (throughput/duration)
STEP_OVERHEAD = 1.1  # wall minus compute per step: logging, data, checkpoint writes
MFU_AT_REF = 21.3  # percent, at STEP_SECONDS
EVAL_FLOOR, EVAL_EXPONENT, EVAL_END = 1.5, 0.25, 2.04
# Gaps in telemetry (minutes to hours) as the real run had them: many in its first days
# (3-16 a day longer than 10 minutes in days 1-5 of the hero run's history), then few (2 in
# the next six days). A constant 5 a day made the demo's health checks warn on 95 days of
# 100 and taught readers to ignore them.
MINOR_GAPS_PER_DAY = 5.0  # days 1-5
SETTLED_GAPS_PER_DAY = 0.3  # from day 6 on
SETTLED_AFTER_DAYS = 5.0
MEMORY_GIB = (143.72, 134.63, 135.64, 134.63, 136.11)
TRAIN_KEYS = (
    "train/loss", "train/cross_entropy_loss", "throughput/tokens_per_second",
    "throughput/total_tokens", "throughput/mfu", "throughput/duration", "moe/drop_fraction",
    "grad/norm/total", "optim/learning_rate", "run_progress",
    "train/router/routing_entropy_mean", "train/router/bias_max", "memory/peak_gib",
)
EVAL_KEYS = ("eval_dropless/paloma/macro_loss", "eval/paloma/macro_loss")



# The simulated run must be the same numbers on every machine: a demo's sealed bytes, the
# goldens and `verify --recompute` compare them exactly. NumPy computes exp, log and
# power of float64 arrays with Intel's SVML where the CPU has AVX-512 and with the C
# library elsewhere, and the two differ in the last bit; these always use the C library.
def _elementwise(fn: Any) -> Any:
    def apply(x: Any, *args: float) -> npt.NDArray[np.float64]:
        a = np.asarray(x, dtype=float)
        # map, not a comprehension: the loop runs in C (half the time of making the run).
        out = map(fn, a.ravel().tolist(), *(itertools.repeat(arg) for arg in args))
        return np.fromiter(out, dtype=float, count=a.size).reshape(a.shape)
    return apply


def _c_pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except (ValueError, ZeroDivisionError):  # 0 ** -y, a negative base: NumPy's inf / nan
        return float(np.power(x, y))


_exp, _log, _log1p, _pow = (_elementwise(f) for f in (math.exp, math.log, math.log1p,
                                                       _c_pow))

@dataclass(frozen=True)
class _Drawn:
    """The random draws of a timeline, before the planned forks join it."""

    n: int
    dur: Arr
    over: Arr
    gap: Arr
    major_rows: npt.NDArray[np.int64]
    outage_rows: npt.NDArray[np.int64]
    rewinds: npt.NDArray[np.int64]


class SimulatedMetrics:
    """A deterministic simulated run's W&B side: lineage, history rows, state at a time."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng(config.simulated.seed)
        self.t0 = datetime.combine(config.run.start, START_CLOCK, tzinfo=UTC).timestamp()
        self.tokens_per_step = BATCH_SEQUENCES * (config.run.sequence_length or 4096)
        self.planned = max(1000, round(config.run.token_budget / self.tokens_per_step))
        self.plan = make_plan(self.planned, LOG_EVERY)
        self._timeline(config.simulated.days * 86400.0)
        self._metrics()
        self._lineage()

    # -- W&B ---------------------------------------------------------------------------

    def _timeline(self, span: float) -> None:
        """Rows every LOG_EVERY steps, downtime gaps, forks with rewinds, cut at `span`."""
        drawn = self._draw(span)
        n, dur, gap = drawn.n, drawn.dur, drawn.gap
        shift = np.zeros(n, dtype=np.int64)
        shift[drawn.outage_rows + 1] = drawn.rewinds
        step = LOG_EVERY * np.arange(n, dtype=np.int64) - np.cumsum(shift)
        forks = plan_forks(self.plan, drawn.outage_rows, drawn.rewinds, step)
        run = np.searchsorted([f.row for f in forks], np.arange(n), side="left").astype(np.int64)
        self.context_run = next((k + 1 for k, f in enumerate(forks)
                                 if self.plan.context()[0] in f.changes), None)
        # At 16K a step takes 5x as long: a row every LONG_LOG_EVERY steps keeps rows a few
        # minutes apart (a row every 10 would be a 15-minute "gap" each time).
        every = np.full(n, LOG_EVERY, dtype=np.int64)
        if self.context_run is not None:
            longer = np.flatnonzero(run >= self.context_run)
            every[longer[1:]] = LONG_LOG_EVERY
            step = np.concatenate([[0], np.cumsum(every[1:] - shift[1:])])
            # Minor gaps were drawn per row: keep as many per day as at 10 steps a row.
            minor = np.zeros(n, dtype=bool)
            minor[longer[1:]] = longer[1:] % (LOG_EVERY // LONG_LOG_EVERY) != 0
            minor[drawn.major_rows] = False
            gap[minor] = 0.0
        perf = [k + 1 for k, f in enumerate(forks) if OUTAGE_CHANGES[PERF_CHANGE][0] in f.changes]
        if perf:
            dur[run >= perf[0]] *= 0.96
        restart = np.concatenate([[True], gap[:-1] > 1800])
        dur[restart] = self.rng.uniform(45, 90, int(restart.sum()))  # compile + restore
        # Planned restarts come after the random draws: a short run's stream stays the same.
        for f in forks:
            if f.planned:
                gap[f.row] = max(gap[f.row], PLANNED_GAP_S)
                dur[f.row + 1] = 60.0
        if self.context_run is not None:
            dur[run >= self.context_run] *= CONTEXT_STEP_FACTOR
        step_wall = dur + drawn.over
        ts = self.t0 + np.concatenate([[0.0], np.cumsum(every[1:] * step_wall[1:] + gap[:-1])])
        self._train_steps = np.array([self._config_of(forks, k)["trainer"]["num_train_steps"]
                                      for k in range(len(forks) + 1)])
        past = step > self._train_steps[run]
        cut = min(int(np.searchsorted(ts, self.t0 + span, side="right")),
                  int(np.argmax(past)) if past.any() else n)
        self._keep(cut, [f for f in forks if f.row < cut - 1], ts, step, run, restart, drawn)

    def _draw(self, span: float) -> _Drawn:
        """Draw step times, minor gaps, the outages and which of them fork (rewound)."""
        rng = self.rng
        wall = LOG_EVERY * (STEP_SECONDS + STEP_OVERHEAD)
        n = int(span / (LOG_EVERY * 17.0)) + 10
        dur = STEP_SECONDS + np.abs(rng.normal(0, 0.05, n)) + rng.exponential(0.04, n)
        slow = rng.random(n) < 0.01  # a slow node drags a few rows (real: 21-22 s steps)
        dur[slow] *= rng.uniform(1.05, 1.2, int(slow.sum()))
        over = STEP_OVERHEAD * rng.gamma(8.0, 1 / 8.0, n)
        # Same draws whatever the rate: the first days of a short run stay the same rows.
        days_in = np.arange(n) * wall / 86400
        rate = np.where(days_in < SETTLED_AFTER_DAYS, MINOR_GAPS_PER_DAY, SETTLED_GAPS_PER_DAY)
        gap = np.where(rng.random(n) < rate * wall / 86400,
                       np.clip(rng.lognormal(math.log(18 * 60), 0.9, n), 240, 4 * 3600), 0.0)
        runs = int(rng.integers(3, 6))
        n_major = int(rng.integers(max(3, runs - 1), 7))
        expected = span * 0.9 / wall
        edges = np.linspace(0.04, 0.96, n_major + 1)
        major_rows = (rng.uniform(edges[:-1], edges[1:]) * expected).astype(int)
        hours = rng.uniform(1.2, 5.0, n_major)
        hours[rng.integers(n_major)] = rng.uniform(5.0, 9.0)  # at least one long outage
        gap[major_rows] = hours * 3600
        outage_rows = np.sort(rng.choice(major_rows, runs - 1, replace=False))
        rewinds = LOG_EVERY * rng.integers(12, 37, runs - 1)
        return _Drawn(n, dur, over, gap, major_rows, outage_rows, rewinds)

    def _keep(self, cut: int, forks: list[Fork], ts: Arr, step: npt.NDArray[np.int64],
              run: npt.NDArray[np.int64], restart: npt.NDArray[np.bool_],
              drawn: _Drawn) -> None:
        """Keep the first `cut` rows and the forks inside them."""
        self.forks = forks
        self.fork_rows = np.array([f.row for f in forks], dtype=np.int64)
        self.rewinds = np.array([f.rewind for f in forks], dtype=np.int64)
        self.ts, self.step, self.run = ts[:cut], step[:cut], run[:cut]
        self.dur, self.restart = drawn.dur[:cut], restart[:cut]
        self.gap_rows = np.nonzero(drawn.gap[: cut - 1])[0]
        self.gap_after = drawn.gap[: cut - 1]
        self.major = set(int(r) for r in drawn.major_rows if r < cut - 1)
        self.n_runs = len(self.fork_rows) + 1
        self.fork_steps = [int(self.step[r + 1]) for r in self.fork_rows]
        superseded = np.zeros(cut, dtype=bool)
        for k, fstep in enumerate(self.fork_steps):
            superseded |= (self.run == k) & (self.step >= fstep)
        self.final = ~superseded

    def _loss_base(self, s: Arr) -> Arr:
        """Train loss before noise: fast early drop from ~11.8, then a power law."""
        tail = 1.0 + 6.6 * _pow(s + 300.0, -0.31)
        return tail + (11.8 - tail) * _exp(-_pow(s / 620.0, 1.7))

    def _metrics(self) -> None:
        """Every logged value, vectorised over rows; spikes and NaN rows injected.

        Rows at 16K tokens count four 4K steps: `eq` is the step in 4K-token steps and `p`
        the fraction of the planned tokens; rows before the context change keep the values
        they always had (np.where keeps their arithmetic, so a short run's bytes are stable).
        """
        rng, s, n = self.rng, self.step.astype(np.float64), self.step.size
        ctx = (self.run >= self.context_run) if self.context_run is not None \
            else np.zeros(n, dtype=bool)
        eq = np.where(ctx, self.plan.equivalent(s), s)
        p = eq / self.planned
        spike, fast = self._spikes(s)
        loss = self._loss_base(eq) + rng.normal(0, 0.007, n) * (1 + 2 * _exp(-s / 3000)) + spike
        lr = self._learning_rate(s, eq, ctx)
        peak = rng.uniform(0.25, 0.38)
        grad = (0.19 + _exp(-_pow(s / 1300.0, 1.5)) * 0.95
                + 0.2 * _pow(p / peak, 1.2) * _exp(1.2 * (1 - p / peak)))
        grad *= rng.lognormal(0, 0.1, n) * (1 + rng.uniform(4, 8) * fast)
        drop = (0.034 * (1 - _exp(-s / 400)) + 0.01 * _exp(-_log((s + 1) / 2500) ** 2))
        drop = drop * (1 - 0.25 * p) * rng.lognormal(0, 0.03, n) + 0.08 * fast
        drop[s == 0] = 0.1043
        since = np.maximum(s - self.plan.context_step, 0.0)
        rebound = 1 + DROP_REBOUND * (1 - _exp(-since / DROP_REBOUND_STEPS))
        drop = np.where(ctx, drop * rebound, drop)  # more tokens overflow expert capacity
        entropy = 5.9475 - 0.01 * np.sqrt(p) - 0.002 * (1 - _exp(-s / 2000))
        entropy += rng.normal(0, 0.0006, n) - 0.03 * fast
        top = int(self.step[self.final].max())
        nan_pool = np.nonzero(self.final & ~self.restart & (spike < 1e-3)
                              & (s > min(5000, top // 4)))[0]
        nans = min(int(rng.integers(2, 5)), nan_pool.size)
        self.nan_rows = np.sort(rng.choice(nan_pool, nans, replace=False))
        for arr in (loss, grad):
            arr[self.nan_rows] = np.nan
        memory = np.array(MEMORY_GIB)[self.run % len(MEMORY_GIB)]
        memory[0] = 143.47
        ratio, per_step = CONTEXT[1] // CONTEXT[0], self.tokens_per_step
        self.values = {
            "train/loss": loss, "train/cross_entropy_loss": loss,
            "throughput/tokens_per_second": np.where(
                ctx, ratio * per_step / self.dur, per_step / self.dur),
            "throughput/total_tokens": np.where(ctx, (eq + ratio) * per_step,
                                                (s + 1) * per_step),
            "throughput/mfu": np.where(ctx, MFU_AT_REF * STEP_SECONDS * CONTEXT_WORK / self.dur,
                                       MFU_AT_REF * STEP_SECONDS / self.dur),
            "throughput/duration": self.dur, "moe/drop_fraction": drop, "grad/norm/total": grad,
            "optim/learning_rate": lr,
            "run_progress": s / self._train_steps[self.run].astype(np.float64),
            "train/router/routing_entropy_mean": entropy,
            "train/router/bias_max": 0.15 + 12 * _log1p(s / 400) * rng.lognormal(0, 0.02, n),
            "memory/peak_gib": memory,
        }
        self.mixture_rows = self._mixture_rows()
        self._evals(ctx, spike)

    def _spikes(self, s: Arr) -> tuple[Arr, Arr]:
        """Pick 3-4 loss-spike steps away from forks; return each row's (spike, decay)."""
        rng, n = self.rng, s.size
        top = int(self.step[self.final].max())
        self.spike_steps: list[int] = []
        wanted = int(rng.integers(3, 5)) if top > 10_000 else 0
        for _ in range(200):
            if len(self.spike_steps) == wanted:
                break
            cand = LOG_EVERY * int(rng.uniform(0.08, 0.95) * top / LOG_EVERY)
            if all(abs(cand - a) > 3000 for a in self.fork_steps + self.spike_steps):
                self.spike_steps.append(cand)
        self.spike_steps.sort()
        spike, fast = np.zeros(n), np.zeros(n)
        for s0 in self.spike_steps:
            since = np.where(s >= s0, s - s0, np.inf)  # exp(-inf) = 0 before the spike
            amp, tau = rng.uniform(0.35, 1.0), rng.uniform(60, 160)
            spike += amp * _exp(-since / tau)
            fast += _exp(-since / 30.0)
        return spike, fast

    def _learning_rate(self, s: Arr, eq: Arr, ctx: npt.NDArray[np.bool_]) -> Arr:
        """Linear warmup, then a linear decay to each run's floor at its train steps (in
        4K-token steps at 16K, so the context change keeps the rate continuous)."""
        lr_floor = np.array([self._config(k)["optimizer"]["min_lr_ratio"]
                             for k in range(self.n_runs)])
        warm = 0.01 * self.planned
        ends = np.where(ctx, float(self.plan.shortened),
                        self._train_steps[self.run].astype(np.float64))
        decay = np.clip((eq - warm) / (ends - warm), 0, 1)
        lr: Arr = np.where(s < warm, PEAK_LR * s / warm,
                           PEAK_LR * (1 - (1 - lr_floor[self.run]) * decay))
        return lr

    def _evals(self, ctx: npt.NDArray[np.bool_], spike: Arr) -> None:
        """Evals at steps 2999, 5999, ...: logged between the rows of 2990 and 3000."""
        at = np.nonzero((self.step % EVAL_EVERY == 0) & (self.step > 0)
                        & np.concatenate([[False], self.run[1:] == self.run[:-1]]))[0]
        self.ev_step = self.step[at] - 1
        self.ev_run = self.run[at]
        self.ev_ts = self.ts[at] - np.minimum(0.35 * (self.ts[at] - self.ts[at - 1]), 25.0)
        a = (EVAL_END - EVAL_FLOOR) * math.pow(float(self.planned), EVAL_EXPONENT)
        ev_eq = np.where(ctx[at], self.plan.equivalent(self.ev_step.astype(float)),
                         self.ev_step.astype(float))
        ev = EVAL_FLOOR + a * _pow(ev_eq, -EVAL_EXPONENT)
        ev += self.rng.normal(0, 0.003, at.size) + 0.5 * spike[at]
        self.ev_values = {EVAL_KEYS[0]: ev, EVAL_KEYS[1]: ev + 0.011}

    def _mixture_rows(self) -> dict[int, int]:
        """Return row -> mixture stage of the rows that log it: a run's first row (levanter
        logs the stage again after a restart) and a row where the stage switches."""
        stage = self.plan.stage(self.step)
        first = np.concatenate([[True], self.run[1:] != self.run[:-1]])
        switch = np.concatenate([[False], stage[1:] != stage[:-1]]) & ~first
        return {int(i): int(stage[i]) for i in np.flatnonzero(first | switch)}

    def _config(self, k: int) -> dict[str, Any]:
        """The (unwrapped) training config of lineage run `k`: the base plus k forks' changes."""
        return self._config_of(self.forks, k)

    def _config_of(self, forks: list[Fork], k: int) -> dict[str, Any]:
        return run_config(base_config(self.planned, self.config.run.sequence_length or 4096,
                                      LOG_EVERY, EVAL_EVERY), forks, k)

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


def utc(epoch: float) -> datetime:
    """Return epoch seconds as an aware UTC datetime."""
    return datetime.fromtimestamp(float(epoch), tz=UTC)
