"""`chronicle snapshot` on the live path: real wandb + PyGithub clients, fake servers on
127.0.0.1, two nights, the second with W&B failing: exit 3, nothing stored is touched."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from chronicle.cli import main
from chronicle.errors import EXIT_DEGRADED
from tests.support.fakes.hero import SENTINEL
from tests.support.fakes.wandb_server import Failure, FakeWandb


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
