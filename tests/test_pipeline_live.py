"""`chronicle snapshot` on the live path: real wandb + PyGithub clients, fake servers on
127.0.0.1, two nights, the second with W&B failing: exit 3, nothing stored is touched; and a
night whose W&B rows hold impossible timestamps: exit 3, the good rows and GitHub kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.errors import EXIT_DEGRADED
from tests.support.fakes.hero import HERO, SENTINEL, hero_rows
from tests.support.fakes.wandb_server import Failure, FakeWandb
from tests.support.live import Live

pytestmark = pytest.mark.integration  # nights end to end, against the fake servers


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


def test_a_night_with_impossible_timestamps_keeps_every_good_row_and_github(
        live_world: Live) -> None:
    root, wandb = live_world.root, live_world.wandb
    rows = hero_rows()
    rows[5] = {**rows[5], "_timestamp": -1e12}  # a traceback every night, before
    rows[7] = {**rows[7], "_timestamp": 0}  # a 1970 -> 2026 "gap" of 349M GPU-hours, before
    wandb.runs[f"e/p/{HERO}"].rows = rows
    runner = CliRunner()
    first = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of", "2026-08-21T03:17:00Z"])
    assert first.exit_code == EXIT_DEGRADED, first.output
    assert f"source wandb: 2 history rows left out as bad, the first of run {HERO} at step 50"\
        in " ".join(first.output.split())
    assert "sealed: 2026-08-20" in first.output  # the day's good data is all there
    docs = root / "docs/data/2026-08-21T031700Z"
    manifest = json.loads((docs / "MANIFEST.json").read_text())
    wb = manifest["sources"]["wandb"]
    assert wb["status"] == "ok" and wb["bad_rows"] == 2 and "step 50" in wb["error"]
    assert wb["first_bad_row"]["run"] == HERO and wb["first_bad_row"]["step"] == 50
    assert manifest["sources"]["github"]["status"] == "ok"  # that night's GitHub data stays
    assert {"threads.json", "metrics.parquet"} <= set(manifest["files"])
    cut = datetime(2026, 8, 21, 3, 17, tzinfo=UTC).timestamp()
    good = [r for i, r in enumerate(rows) if i not in (5, 7) and r["_timestamp"] <= cut]
    assert pq.read_table(docs / "metrics.parquet").column("step").to_pylist() == [
        r["_step"] for r in good]
    failures = json.loads((docs / "failures.json").read_text())
    assert failures and all(f["start"] >= "2026-08-20" for f in failures)
    assert not [f for f in failures if f["kind"] == "gap" and f["start"] < "2026-08-20"]
    assert runner.invoke(main, ["verify", "--dir", str(root)]).exit_code == 0

    # The bad rows lie before the newest stored step: never fetched again, never named again.
    second = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of",
                                  "2026-08-22T03:17:00Z"])
    assert second.exit_code == 0, second.output
