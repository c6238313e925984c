"""The canonical metric names and their default W&B keys (config stage).

Analysis only ever asks for canonical names; `wandb.metrics` in chronicle.yml maps any of
them to another W&B key.
"""

from __future__ import annotations

# Canonical metric name -> default W&B key (levanter / Marin names). Analysis only ever
# asks for canonical names; `wandb.metrics` in chronicle.yml overrides any of them.
DEFAULT_METRICS: dict[str, str] = {
    "loss": "train/loss",
    "cross_entropy": "train/cross_entropy_loss",
    "eval_loss": "eval_dropless/paloma/macro_loss",
    "tokens_per_second": "throughput/tokens_per_second",
    "total_tokens": "throughput/total_tokens",
    "mfu": "throughput/mfu",
    "step_duration": "throughput/duration",
    "drop_fraction": "moe/drop_fraction",
    "grad_norm": "grad/norm/total",
    "learning_rate": "optim/learning_rate",
    "run_progress": "run_progress",
    "router_entropy": "train/router/routing_entropy_mean",
    "router_bias_max": "train/router/bias_max",
    "router_bias_min": "train/router/bias_min",
    "memory_peak_gib": "memory/peak_gib",
}

# The train losses (canonical). A prediction is about a held-out eval metric and is never
# compared with these: train loss includes the z-loss and is a different statistic.
TRAIN_LOSSES = ("loss", "cross_entropy")
