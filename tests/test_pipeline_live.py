"""`chronicle snapshot` on the live path: real wandb + PyGithub clients, fake servers on
127.0.0.1, two nights, the second with W&B failing: exit 3, nothing stored is touched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.errors import EXIT_DEGRADED
from tests.fakes.github_server import FakeGithub
from tests.fakes.wandb_server import Failure, FakeWandb
from tests.test_sources_wandb import HERO, SENTINEL, add_run


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, FakeWandb]]:
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    root = tmp_path / "c"
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    data = yaml.safe_load((root / "chronicle.yml").read_text())
    data["run"]["start"] = "2026-08-20"
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
        yield root, wb


def test_two_nights_second_degraded(live: tuple[Path, FakeWandb]) -> None:
    root, wandb = live
    runner = CliRunner()
    first = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of", "2026-08-21T03:17:00Z"])
    assert first.exit_code == 0, first.output
    assert "sealed: 2026-08-20" in first.output
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}

    wandb.failure = Failure("500")
    second = runner.invoke(
        main, ["snapshot", "--dir", str(root), "--as-of", "2026-08-22T03:17:00Z"]
    )
    assert second.exit_code == EXIT_DEGRADED, second.output
    assert "source wandb failed" in second.output
    assert SENTINEL not in second.output
    for path, blob in before.items():
        assert path.read_bytes() == blob, f"{path} changed"
    manifest = json.loads((root / "docs/data/2026-08-22T031700Z/MANIFEST.json").read_text())
    assert manifest["sources"]["wandb"]["status"] == "failed"
    assert manifest["sources"]["github"]["status"] == "ok"
    assert "metrics.parquet" not in manifest["files"]
    assert runner.invoke(main, ["verify", "--dir", str(root)]).exit_code == 0

    built = runner.invoke(main, ["build", "--dir", str(root)])
    assert built.exit_code == 0, built.output
    home = (root / "site" / "index.html").read_text()
    assert "stale" in home.lower() and "wandb" in home
    produced = [p for p in root.rglob("*") if p.is_file()]
    assert not [p for p in produced if SENTINEL.encode() in p.read_bytes()]
