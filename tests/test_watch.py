"""The watchers on a run whose truth we know: a simulated run with injected faults, sealed
night by night through the real pipeline, then the run-wide watch pages."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronicle.analysis.cost import summarize_cost
from chronicle.analysis.prediction import predict
from chronicle.config import load_config
from chronicle.render.i18n import ENGLISH
from chronicle.render.run_pages import run_pages
from chronicle.site.outputs.inputs import BuildInputs, load_inputs
from chronicle.snapshot.fetch import fetch_simulated_source
from chronicle.snapshot.take import take_snapshot
from chronicle.sources.simulated import SimulatedRun
from tests.support.site_factory import make_chronicle, simulated_chronicle
from tests.support.specs import rows

NIGHTS = 8
START = date(2026, 8, 20)


def _night(n: int) -> datetime:
    return datetime(2026, 8, 20, 3, 17, tzinfo=UTC) + timedelta(days=n)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    made = simulated_chronicle(tmp_path_factory.mktemp("watch"), NIGHTS, START)
    config = made.config
    days = {p.stem: json.loads(p.read_text()) for p in sorted(config.docs_dir.glob("days/*.json"))}
    return {"root": config.root, "config": config, "sim": made.sim, "store": made.store,
            "days": days}


def _day_of(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).date().isoformat()


def _status(day: dict[str, Any], check: str) -> str:
    return next(c["status"] for c in day["health"]["checks"] if c["id"] == check)


def _step_days(sim: SimulatedRun, steps: list[int]) -> set[str]:
    out = set()
    for s in steps:
        rows = np.flatnonzero((sim.step == s) & sim.final)
        out.add(_day_of(float(sim.ts[rows[0]])))
    return out


def test_injected_faults_fail_their_checks_on_their_days_only(run: dict[str, Any]) -> None:
    sim, days = run["sim"], run["days"]
    truth = sim.truth()
    spikes, nans = _step_days(sim, truth["spike_steps"]), _step_days(sim, truth["nan_steps"])
    assert spikes and nans and len(days) == NIGHTS
    for d, day in days.items():
        assert _status(day, "loss_spike") == ("fail" if d in spikes else "pass"), d
        assert _status(day, "skipped_steps") == ("fail" if d in nans else "pass"), d
    # Every outage longer than 10 minutes warns on each day it touches; a day whose longest
    # silence is the evidence names a value above the threshold.
    for o in truth["outages"]:
        if o["minutes"] > 10 and o["start"].date().isoformat() in days:
            assert _status(days[o["start"].date().isoformat()], "telemetry_gone") == "warn"
    for day in days.values():
        tel = next(c for c in day["health"]["checks"] if c["id"] == "telemetry_gone")
        assert (tel["status"] == "warn") == (tel["value"] > 10)
        assert tel["when"] is not None
    long_days = {o["start"].date().isoformat() for o in truth["outages"] if o["minutes"] > 60}
    assert {d for d, day in days.items() if _status(day, "heartbeat") == "fail"} >= (
        long_days & set(days))


def test_healthy_metrics_pass_and_no_eval_yet_is_no_data(run: dict[str, Any]) -> None:
    days = run["days"]
    first = days[START.isoformat()]
    # Day 1 has no eval before the prediction table starts: no data, never a pass.
    assert _status(first, "prediction_band") == "no-data"
    assert first["health"]["counts"]["no-data"] >= 1
    for day in days.values():
        assert _status(day, "router_bias") == "pass"  # the simulated bias stays under 400
        assert _status(day, "drop_fraction") == "pass"


def test_prediction_residual_matches_an_independent_computation(run: dict[str, Any]) -> None:
    config, sim = run["config"], run["sim"]
    table = config.watch.prediction.table
    seen = 0
    for day in run["days"].values():
        p = day["prediction"]
        if p["residual"] is None:
            continue
        seen += 1
        # Our own computation: the eval's step -> tokens (the simulated run logs
        # (step + 1) x tokens per step) -> budget fraction -> linear interpolation.
        step = p["eval_step"]
        below = np.flatnonzero(sim.step <= step)
        tokens = float(sim.values["throughput/total_tokens"][below[np.argmax(sim.step[below])]])
        tokens += (step - int(sim.step[below].max())) * sim.tokens_per_step
        f = tokens / config.run.token_budget
        i = max(k for k, row in enumerate(table) if row[0] <= f)
        (f0, p0, lo0, hi0), (f1, p1, lo1, hi1) = table[i], table[i + 1]
        w = (f - f0) / (f1 - f0)
        predicted = p0 + w * (p1 - p0)
        low, high = lo0 + w * (lo1 - lo0), hi0 + w * (hi1 - hi0)
        assert p["fraction"] == pytest.approx(f, rel=1e-9)
        assert p["predicted"] == pytest.approx(predicted, abs=1e-9)
        assert p["residual"] == pytest.approx(p["actual"] - predicted, abs=1e-9)
        assert p["sign"] == ("above" if p["actual"] > predicted else "below")
        assert p["outside_band"] == (not low <= p["actual"] <= high)
        assert _status(day, "prediction_band") == ("warn" if p["outside_band"] else "pass")
    assert seen >= NIGHTS - 2


def test_prediction_sha256_is_sealed_on_day_1_and_a_moved_prediction_is_flagged(
        run: dict[str, Any]) -> None:
    days = run["days"]
    canonical = run["config"].watch.prediction.canonical_json()
    sha = hashlib.sha256(canonical.encode()).hexdigest()
    assert {d["prediction"]["sha256"] for d in days.values()} == {sha}
    assert not any(d["prediction"]["changed"] for d in days.values())
    # Someone edits the prediction after launch: the next sealed day says so.
    root = run["root"]
    path = root / "chronicle.yml"
    text = path.read_text()
    path.write_text(text.replace("[1.0, 2.0350,", "[1.0, 2.0300,"))
    try:
        moved = load_config(root)
        take_snapshot(moved, _night(NIGHTS + 1), store=run["store"],
                      fetcher=lambda c, s, t: fetch_simulated_source(c, s, t, sim=run["sim"]))
        last = json.loads((moved.docs_dir / "days" / "2026-08-28.json").read_text())
        assert last["prediction"]["changed"] is True
        assert last["prediction"]["registered_sha256"] == sha != last["prediction"]["sha256"]
        assert "The prediction changed since day 1" in (
            moved.docs_dir / "days" / "2026-08-28.md").read_text()
    finally:
        path.write_text(text)


def test_cost_is_count_times_wall_clock_times_price(run: dict[str, Any]) -> None:
    config, sim = run["config"], run["sim"]
    days = [run["days"][k] for k in sorted(run["days"])][:NIGHTS]
    cost = summarize_cost(days, config)
    end = datetime.fromisoformat(days[-1]["date"]).replace(tzinfo=UTC) + timedelta(days=1)
    wall_h = (end.timestamp() - float(sim.ts[0])) / 3600
    assert cost["accelerator_hours"] == pytest.approx(704 * wall_h, rel=1e-9)
    for name, price in config.run.prices_usd_per_accelerator_hour.items():
        assert cost["usd"][name] == pytest.approx(704 * wall_h * price, rel=1e-9)
        assert cost["usd_per_billion_tokens"][name] == pytest.approx(
            704 * wall_h * price / (days[-1]["tokens"]["cumulative"] / 1e9), rel=1e-9)
    rate = np.mean([d["tokens"]["day"] for d in days[-7:]])
    remaining = (config.run.token_budget - days[-1]["tokens"]["cumulative"]) / rate
    assert cost["remaining_days"] == pytest.approx(remaining, rel=1e-9)
    assert cost["projected_accelerator_hours"] == pytest.approx(
        704 * (wall_h + 24 * remaining), rel=1e-9)


def _run_pages(inputs: BuildInputs) -> dict[str, str | bytes]:
    return run_pages(inputs.config, inputs.series, inputs.failures, inputs.days, inputs.runs,
                     (inputs.config_artifact(), inputs.manifest_artifact()), None, ENGLISH)


def test_watch_pages_show_claims_risks_health_and_charts(run: dict[str, Any]) -> None:
    config = run["config"]
    inputs = load_inputs(config)
    days = inputs.days
    pages = _run_pages(inputs)
    claims = pages["claims.md"]
    row = next(line for line in claims.splitlines() if "792 GPUs" in line)
    cfg_sha = hashlib.sha256((run["root"] / "chronicle.yml").read_bytes()).hexdigest()
    assert "**contradicted**" in row and "704" in row and cfg_sha in row
    assert "config.accelerators" in row
    health = pages["health.md"]
    heatmap = json.loads(pages["watch/health.vl.json"])
    cells = rows(heatmap)
    assert len(cells) == len(days) * len(config.watch.health)  # days x checks
    assert {c["u"] for c in cells} == {f"days/{d['date']}.html" for d in days}
    assert heatmap["encoding"]["href"]["field"] == "u"
    for check in config.watch.health:
        assert f"`{check.id}`" in health
    assert "upcoming" in pages["risks.md"]
    for name in ("prediction", "prediction_residual", "throughput_daily", "mfu_daily",
                 "drop_regimes", "risks", "health", "router_entropy"):
        spec = json.loads(pages[f"watch/{name}.vl.json"])
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        assert f"watch/{name}.svg" not in pages  # drawn by the site (site/outputs/statics.py)
    assert "ln 384" in pages["throughput.md"]
    # The prediction chart draws the actual evals and the predicted curve with its band.
    spec = json.loads(pages["watch/prediction.vl.json"])
    assert spec["usermeta"]["chronicle"]["x_kind"] == "quantitative"
    p, lo, hi = predict(config.watch.prediction, np.array([0.5]), config.run.token_budget)
    assert lo[0] < p[0] < hi[0]


def test_day_page_lists_failed_checks_and_the_residual(run: dict[str, Any]) -> None:
    spikes = _step_days(run["sim"], run["sim"].truth()["spike_steps"])
    d = sorted(spikes)[0]
    page = (run["config"].docs_dir / "days" / f"{d}.md").read_text()
    health = page.split("## Health", 1)[1].split("## Failures", 1)[0]
    assert "**fail** `loss_spike`" in health
    assert "`router_bias`" not in health  # passing checks are not listed
    later = max(run["days"])
    assert "Prediction: Eval loss" in (run["config"].docs_dir / "days" / f"{later}.md").read_text()


def test_days_sealed_before_the_watchers_still_build(tmp_path: Path) -> None:
    built = make_chronicle(tmp_path / "c", nights=2)
    pages = _run_pages(load_inputs(built.config))
    assert "No prediction is configured" in pages["prediction.md"]
    assert "No claim is configured" in pages["claims.md"]
