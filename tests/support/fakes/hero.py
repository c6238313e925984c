"""The Marin hero run as recorded (tests/fixtures/wandb/), put on a fake W&B server."""

from __future__ import annotations

import json
from typing import Any

from tests.support.fakes.wandb_server import FakeRun, FakeWandb
from tests.support.paths import FIXTURES

HERO = "hero-12d8b6f0-dee637"
# A W&B key (>= 40 characters, as real ones are) that must never reach output or a file.
SENTINEL = "wandb-SENTINEL-0123456789abcdef-0123456789abcdef-SENTINEL"
WANDB_FIXTURES = FIXTURES / "wandb"


def hero_node() -> dict[str, Any]:
    """Return the run's recorded GraphQL node (config, summary, state)."""
    return json.loads((WANDB_FIXTURES / f"{HERO}.run.json").read_text())


def hero_config() -> dict[str, Any]:
    """Return the run's full recorded W&B config, every top-level value as {"value": ...}."""
    config: dict[str, Any] = json.loads((WANDB_FIXTURES / f"{HERO}.config.json").read_text())
    return config


def hero_rows() -> list[dict[str, Any]]:
    """Return the run's recorded history rows, oldest first."""
    lines = (WANDB_FIXTURES / f"{HERO}.history.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def add_run(fake: FakeWandb, name: str = HERO, rows: Any = None, **kw: Any) -> FakeRun:
    """Serve the hero run (or one like it named `name`) as e/p/<name>; `kw` overrides fields."""
    node = hero_node()
    fields: dict[str, Any] = {
        "created_at": node["createdAt"], "state": node["state"],
        "heartbeat_at": node["heartbeatAt"], "config": node["config"],
        "summary": node["summaryMetrics"], "rows": hero_rows() if rows is None else rows,
    }
    fields.update(kw)
    return fake.add_run(FakeRun(entity="e", project="p", name=name, **fields))
