"""Small valid configs: BASE_CONFIG and builders that override it by dotted path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from chronicle.config import RunConfig, parse_config

BASE_CONFIG: dict[str, Any] = {
    "source": "simulated",
    "run": {
        "name": "Test run",
        "start": "2026-08-20",
        "planned_days": 10,
        "token_budget": 18.0e12,
        "accelerators": {"kind": "GB200", "count": 704},
        "prices_usd_per_accelerator_hour": {"spot": 4.22, "on-demand": 6.11},
        "phases": {"pretraining": 0.0, "mid-training": 0.8},
    },
    "wandb": {"entity": "e", "project": "p", "runs": ["r1"]},
    "github": {"repo": "o/r", "issues": [1], "labels": ["hero-run"],
               "failure_labels": ["incident"]},
    "simulated": {"seed": 7, "days": 10},
    "site": {"url": "https://example.org/c/"},
}


def config_dict(**overrides: Any) -> dict[str, Any]:
    """Return a copy of BASE_CONFIG with overrides (__ for nesting: run__planned_days=5)."""
    data = copy.deepcopy(BASE_CONFIG)
    for dotted, value in overrides.items():
        node = data
        *parents, leaf = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return data


def make_config(root: Path | None = None, **overrides: Any) -> RunConfig:
    """Return a validated RunConfig (overrides use __ for nesting: run__planned_days=5)."""
    return parse_config(config_dict(**overrides), root or Path("."))


def scaffold_simulated(root: Path, days: int = 4) -> Path:
    """`chronicle init --source simulated` into `root`, shortened to a `days`-day run."""
    from click.testing import CliRunner

    from chronicle.cli import main

    result = CliRunner().invoke(main, ["init", str(root), "--source", "simulated"])
    assert result.exit_code == 0, result.output
    text = (root / "chronicle.yml").read_text().replace("days: 100", f"days: {days}")
    (root / "chronicle.yml").write_text(text.replace("planned_days: 100", f"planned_days: {days}"))
    return root
