"""Config stage: chronicle.yml -> a typed, validated RunConfig. Every problem at once.

The keys are declared once, on the section dataclasses (config/model.py, config/watchers.py)
with the machinery of config/fields.py; config/yaml.py reads the file strictly. Secrets
never live in the file: they come from environment variables only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from chronicle.config.fields import Invalid, Section, walk
from chronicle.config.metrics import DEFAULT_CONFIG_KEYS, DEFAULT_METRICS, TRAIN_LOSSES
from chronicle.config.model import (
    DEFAULT_FAILURES_FILE,
    DEFAULT_KEYS,
    LANGUAGES,
    MAX_DAYS,
    MFU_UNITS,
    SOURCES,
    Accelerators,
    FailuresSection,
    GithubSection,
    PullsSection,
    RunConfig,
    RunSection,
    SealingSection,
    SimulatedSection,
    SiteSection,
    WandbSection,
    finish_config,
)
from chronicle.config.watchers import WatchSections
from chronicle.config.yaml import read_yaml
from chronicle.errors import ConfigError

CONFIG_NAME = "chronicle.yml"
CONFIG = Section(RunConfig, finish_config)  # the declaration of the whole file

__all__ = [
    "CONFIG",
    "CONFIG_NAME",
    "DEFAULT_CONFIG_KEYS",
    "DEFAULT_FAILURES_FILE",
    "DEFAULT_KEYS",
    "DEFAULT_METRICS",
    "LANGUAGES",
    "MAX_DAYS",
    "MFU_UNITS",
    "SOURCES",
    "TRAIN_LOSSES",
    "Accelerators",
    "FailuresSection",
    "GithubSection",
    "PullsSection",
    "RunConfig",
    "RunSection",
    "SealingSection",
    "SimulatedSection",
    "SiteSection",
    "WandbSection",
    "WatchSections",
    "declared_keys",
    "load_config",
    "parse_config",
    "read_yaml",
    "secret",
]


def parse_config(data: Any, root: Path, origin: str = CONFIG_NAME) -> RunConfig:
    """Validate a loaded YAML document and return the RunConfig; raise ConfigError."""
    if not isinstance(data, dict):
        raise ConfigError(origin, ["the file must be a YAML mapping (run:, wandb:, github:, ...)"])
    try:
        config: RunConfig = CONFIG(data, root=root)
    except Invalid as err:
        raise ConfigError(origin, err.messages()) from None
    return config


def load_config(root: Path) -> RunConfig:
    """Read `root/chronicle.yml`; raise ConfigError naming the file and every problem."""
    path = root / CONFIG_NAME
    if not root.is_dir():
        raise ConfigError(
            str(root), ["folder does not exist; create one with `chronicle init DIR`"]
        )
    if not path.is_file():
        raise ConfigError(
            str(path), [f"no {CONFIG_NAME} here; run `chronicle init {root}` or pass --dir"]
        )
    return parse_config(read_yaml(path), root.resolve(), str(path))


def declared_keys() -> list[str]:
    """Return the dotted path of every declared key (sections, then their keys)."""
    return [path for path, _ in walk(CONFIG.schema)]


def secret(name: str) -> str | None:
    """Return a secret from the environment only (never from a file)."""
    value = os.environ.get(name, "").strip()
    return value or None
