"""A chronicle on the live path: `chronicle init`, wired to fake W&B and GitHub servers on
127.0.0.1 that serve the hero run's recorded rows and the recorded GitHub issues."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from chronicle.cli import main
from tests.support.fakes.github_server import FakeGithub
from tests.support.fakes.hero import HERO, SENTINEL, add_run
from tests.support.fakes.wandb_server import FakeWandb


@dataclass(frozen=True)
class Live:
    """A live chronicle and the two fake servers its environment points at."""

    root: Path
    wandb: FakeWandb
    github: FakeGithub


@contextmanager
def live_chronicle(tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, FakeWandb]]:
    """Yield (chronicle folder, W&B server) while both fake servers run; the environment
    points the real clients at them with SENTINEL as the W&B key."""
    with live_servers(tmp_path, monkeypatch) as live:
        yield live.root, live.wandb


def client_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the real wandb and PyGithub clients at nothing of the user's: wandb's folders
    in `tmp_path`, the fake servers' key, no telemetry, no GitHub token."""
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)


@contextmanager
def live_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """Yield a Live chronicle while both fake servers run (see live_chronicle)."""
    client_env(tmp_path, monkeypatch)
    root = tmp_path / "c"
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    data = yaml.safe_load((root / "chronicle.yml").read_text())
    data["run"]["start"] = "2026-08-20"
    data["run"].pop("example", None)  # the run values are set
    data["wandb"].update({"entity": "e", "project": "p", "runs": [HERO], "timeout_seconds": 2})
    with FakeGithub.from_fixture() as gh, FakeWandb(api_key=SENTINEL) as wb:
        add_run(wb)
        data["github"] = {
            "repo": "marin-community/marin",
            "issues": [8506],
            "labels": ["hero-run"],
            "failure_labels": ["incident"],
            "max_rate_limit_wait_seconds": 1,
        }
        (root / "chronicle.yml").write_text(yaml.safe_dump(data))
        monkeypatch.setenv("WANDB_BASE_URL", wb.url)
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        yield Live(root, wb, gh)
