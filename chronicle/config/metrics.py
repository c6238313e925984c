"""The canonical metric names and their default W&B keys, and the canonical config values
and their default paths in a W&B run config (config stage).

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
    # Logged when the data-mixture stage starts (and again after each restart), with the
    # stage's weights under the sibling keys <prefix>/weight/<name> (levanter).
    "mixture_stage": "mixture/stage",
}

# Canonical config value -> its dotted path in a W&B run config (Marin's levanter layout;
# W&B's {"value": ...} wrapping is removed when a run is read). `wandb.config_keys`
# overrides any of them; a path a run's config lacks reads as unknown, never as 0.
DEFAULT_CONFIG_KEYS: dict[str, str] = {
    "sequence_length": "model.max_seq_len",
    "train_steps": "trainer.trainer.num_train_steps",
    "batch_size": "trainer.trainer.train_batch_size",
}

# The train losses (canonical). A prediction is about a held-out eval metric and is never
# compared with these: train loss includes the z-loss and is a different statistic.
TRAIN_LOSSES = ("loss", "cross_entropy")
