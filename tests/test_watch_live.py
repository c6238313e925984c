"""The watchers on real data through the live path: real wandb + PyGithub clients against
fake servers on 127.0.0.1 serving the hero run's first 300 logged rows."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from chronicle.cli import main
from tests.support.fakes.wandb_server import FakeWandb


def test_real_stall_fails_and_unlogged_metrics_are_no_data(live: tuple[Path, FakeWandb]) -> None:
    root, _ = live
    got = CliRunner().invoke(main, ["snapshot", "--dir", str(root), "--as-of",
                                    "2026-08-21T03:17:00Z"])
    assert got.exit_code == 0, got.output
    day = json.loads((root / "docs/days/2026-08-20.json").read_text())
    checks = {c["id"]: c for c in day["health"]["checks"]}
    # The hero run stalled for ~4.4 h between steps 170 and 180 on its first day.
    assert checks["heartbeat"]["status"] == "fail" and checks["heartbeat"]["value"] > 4 * 60
    assert checks["telemetry_gone"]["status"] == "warn"
    # Logged and healthy: MFU ~21% (percent), ~2.5M tokens/s.
    assert checks["mfu"]["status"] == checks["throughput"]["status"] == "pass"
    # Not in the stored rows (no router entropy, no eval yet, no prediction configured):
    # missing data is no-data, never a pass.
    for cid in ("router_entropy", "eval_regressed", "prediction_band"):
        assert checks[cid]["status"] == "no-data", cid
    assert day["prediction"] is None and day["risks"] == []
    page = (root / "docs/days/2026-08-20.md").read_text()
    assert "**fail** `heartbeat`" in page
