"""What the simulated run changes mid-flight, and when (sources stage).

Modelled on Marin's hero-run notes, scaled to the simulated run's planned steps: data-mixture
stages switch at steps 108,000 and 312,192 of 390,251; at the first-quarter decision point
(25% of the budget) the schedule is shortened; at ~82% the context grows from 4,096 to
16,384 tokens with a quarter of the remaining steps (the budget stays), steps take 5x as
long and token dropping rises. Each planned change is a forked W&B run, like the outages'
config changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

BATCH_SEQUENCES = 11_264
PEAK_LR = 0.003290470163258143
MARIN_STEPS = 390_251
MARIN_MIXTURE_STEPS = (108_000, 312_192)
DECISION_AT = 0.25  # budget fraction of the go / no-go review
SHORTENED = 0.99  # the review keeps 99% of the planned steps
CONTEXT_AT = 0.82  # budget fraction where the context grows
CONTEXT = (4096, 16_384)
CONTEXT_STEP_FACTOR = 5.1  # a 16K step takes 5.1x a 4K step (4x the tokens, longer attention)
CONTEXT_WORK = 4.4  # ... for 4.4x the model FLOPs: MFU falls to 86%
DROP_REBOUND = 1.7  # dropping settles 2.7x higher at 16K
DROP_REBOUND_STEPS = 300.0
LONG_LOG_EVERY = 2  # at 16K, a history row every 2 steps (~3 minutes, as at 4K)
PLANNED_GAP_S = 25 * 60.0  # a planned restart: stop, change the config, resume

# Config changes of the forks at outages, in order: (path, new value), why.
OUTAGE_CHANGES: tuple[tuple[tuple[tuple[str, ...], Any], str], ...] = (
    ((("trainer", "checkpointer", "save_interval"), "1:00:00"),
     "checkpoint hourly: the crash cost almost two hours of steps"),
    ((("trainer", "z_loss_weight"), 2e-4), "double the z-loss weight after the loss spike"),
    ((("model", "num_expert_waves"), 4), "four expert waves: steps ~4% faster"),
    ((("optimizer", "min_lr_ratio"), 0.1), "raise the floor of the linear decay to 10%"),
)
PERF_CHANGE = 2  # the outage change that makes steps faster (num_expert_waves)

# The data mixture: source -> weight in stages 0, 1, 2 (mid-training).
MIXTURE: dict[str, tuple[float, float, float]] = {
    "web-high": (0.22, 0.30, 0.24),
    "web-mid": (0.26, 0.20, 0.08),
    "web-low": (0.14, 0.06, 0.0),
    "code": (0.12, 0.13, 0.18),
    "math": (0.06, 0.07, 0.14),
    "papers": (0.06, 0.07, 0.08),
    "books": (0.05, 0.06, 0.06),
    "wiki": (0.04, 0.05, 0.05),
    "multilingual": (0.05, 0.05, 0.05),
    "synthetic-qa": (0.0, 0.01, 0.12),
}
STAGE_KEY = "mixture/stage"
WEIGHT_PREFIX = "mixture/weight/"
MIXTURE_KEYS = (STAGE_KEY, *(WEIGHT_PREFIX + name for name in MIXTURE))


@dataclass(frozen=True)
class Fork:
    """One forked W&B run: after which row, how many steps rewound, what changed."""

    row: int  # the parent's last row; the child starts at row + 1
    rewind: int
    changes: tuple[tuple[tuple[str, ...], Any], ...]
    why: str
    planned: bool = False


@dataclass(frozen=True)
class Plan:
    """The simulated run's planned steps and the steps its planned changes happen at."""

    planned: int
    decision_step: int
    shortened: int  # num_train_steps from the decision on
    context_step: int
    context_steps: int  # num_train_steps from the context change on (budget unchanged)
    mixture_steps: tuple[int, int]

    def stage(self, step: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Return the mixture stage (0, 1, 2) in effect at each step."""
        return np.searchsorted(np.array(self.mixture_steps), step, side="right")

    def equivalent(self, step: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Return each step in 4K-token steps: a 16K step counts four."""
        ratio = CONTEXT[1] // CONTEXT[0]
        return np.where(step >= self.context_step,
                        self.context_step + ratio * (step - self.context_step), step)

    def decision(self) -> tuple[tuple[tuple[str, ...], Any], ...]:
        return ((("trainer", "num_train_steps"), self.shortened),)

    def context(self) -> tuple[tuple[tuple[str, ...], Any], ...]:
        return ((("model", "max_seq_len"), CONTEXT[1]),
                (("trainer", "num_train_steps"), self.context_steps))


def make_plan(planned: int, log_every: int) -> Plan:
    """Return the plan of a run of `planned` steps logged every `log_every` steps."""
    ratio = CONTEXT[1] // CONTEXT[0]

    def at(fraction: float) -> int:
        return log_every * round(fraction * planned / log_every)

    shortened = round(SHORTENED * planned)
    context_step = at(CONTEXT_AT)
    shortened -= (shortened - context_step) % ratio  # a whole number of 16K steps remains
    return Plan(
        planned=planned,
        decision_step=at(DECISION_AT),
        shortened=shortened,
        context_step=context_step,
        context_steps=context_step + (shortened - context_step) // ratio,
        mixture_steps=tuple(at(s / MARIN_STEPS) for s in MARIN_MIXTURE_STEPS),  # type: ignore[arg-type]
    )


def stage_weights(stage: int) -> dict[str, float]:
    """Return the logged weights of a mixture stage (zero weights are not logged)."""
    return {WEIGHT_PREFIX + name: w[stage] for name, w in MIXTURE.items() if w[stage] > 0}


def plan_forks(plan: Plan, outage_rows: npt.NDArray[np.int64],
               rewinds: npt.NDArray[np.int64], step: npt.NDArray[np.int64]) -> list[Fork]:
    """Return the forks in order: one per outage (rewound to a checkpoint, each with the
    next OUTAGE_CHANGES entry) and the planned ones (no rewind)."""
    forks = {int(r): Fork(int(r), int(w), (OUTAGE_CHANGES[k % len(OUTAGE_CHANGES)][0],),
                          OUTAGE_CHANGES[k % len(OUTAGE_CHANGES)][1])
             for k, (r, w) in enumerate(zip(outage_rows, rewinds, strict=True))}
    for at, changes, why in (
        (plan.decision_step, plan.decision(),
         f"the first-quarter review shortens the run to {plan.shortened:,} steps"),
        (plan.context_step, plan.context(),
         f"extend the context to {CONTEXT[1]:,} tokens, {plan.context_steps:,} steps "
         "in all (the token budget stays)"),
    ):
        reached = np.flatnonzero(step >= at)
        if not reached.size or reached[0] == 0:
            continue
        row = int(reached[0]) - 1
        if row in forks:  # an outage fork there carries the planned change too
            old = forks[row]
            forks[row] = Fork(row, old.rewind, old.changes + changes, f"{old.why}; {why}", True)
        else:
            forks[row] = Fork(row, 0, changes, why, True)
    return [forks[r] for r in sorted(forks)]


def base_config(planned: int, sequence_length: int, log_every: int,
                eval_every: int) -> dict[str, Any]:
    """Return the (unwrapped) training config the simulated run starts with."""
    return {
        "trainer": {"train_batch_size": BATCH_SEQUENCES, "num_train_steps": planned,
                    "z_loss_weight": 1e-4, "log_every": log_every,
                    "checkpointer": {"save_interval": "2:00:00", "keep": [{"every": 6000}]}},
        "optimizer": {"learning_rate": PEAK_LR, "lr_schedule": "linear", "warmup": 0.01,
                      "min_lr_ratio": 0.05, "weight_decay": 0.1},
        "model": {"hidden_dim": 6144, "num_layers": 48, "num_experts": 384,
                  "num_experts_per_token": 8, "num_shared_experts": 2, "num_expert_waves": 3,
                  "max_seq_len": sequence_length},
        "resources": {"replicas": 176, "device": {"count": 4, "variant": "GB200"}},
        "eval": {"steps_per_eval": eval_every},
        "stop_after_steps": planned,
    }


def run_config(base: dict[str, Any], forks: list[Fork], k: int) -> dict[str, Any]:
    """Return lineage run `k`'s config: `base` with the changes of the first k forks."""
    cfg = base
    for fork in forks[:k]:
        for path, value in fork.changes:
            node = cfg
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = value
    return cfg
