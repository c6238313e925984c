"""What one build reads from the store (site/outputs/inputs.py): the watchers' verdicts of
every day are the ones each day sealed; a chronicle with days sealed before the watchers
existed has theirs computed from the store at each build (never from a cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronicle.analysis.verdicts import watch_history
from chronicle.site.outputs.inputs import VERDICT_KEYS, BuildInputs, load_inputs
from tests.support.site_factory import Built, add_correction, make_chronicle, simulated_chronicle


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("inputs") / "c", nights=3)


def _computed(inputs: BuildInputs) -> list[dict]:
    return watch_history(inputs.days, inputs.series, inputs.failures, inputs.config,
                         inputs.changes.changes)


def test_days_sealed_without_verdicts_get_them_from_the_store(made: Built,
                                                              tmp_path: Path) -> None:
    inputs = load_inputs(made.config)
    assert not any(all(k in d for k in VERDICT_KEYS) for d in inputs.days)
    assert inputs.history == _computed(inputs)
    # A correction (late rows of day 1) is counted at the next build: nothing kept.
    add_correction(made, 3)
    again = load_inputs(made.config)
    assert again.history == _computed(again)


def test_days_sealed_with_their_verdicts_are_read_as_sealed(tmp_path: Path) -> None:
    sim = simulated_chronicle(tmp_path / "c", nights=2, planned_days=5)
    inputs = load_inputs(sim.config)
    assert all(all(k in d for k in VERDICT_KEYS) for d in inputs.days)
    assert inputs.history == [
        {"date": d["date"], "day": d["day"], "prediction": d["prediction"],
         "health": d["health"], "risks": d["risks"]} for d in inputs.days]
