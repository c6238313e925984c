"""What one build reads from the store (site/inputs.py): the watchers' verdicts of every
day are read from .cache/chronicle only while every byte they are computed from is the
same; a new snapshot, a correction or a config change computes them again."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chronicle.analysis.verdicts import watch_history
from chronicle.config import load_config
from chronicle.site.build_cache import Caches
from chronicle.site.inputs import BuildInputs, load_inputs, series_bytes, verdicts_key
from tests.support.site_factory import Built, add_correction, make_chronicle


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("inputs") / "c", nights=3)


def _uncached(inputs: BuildInputs) -> list[dict]:
    return watch_history(inputs.days, inputs.series, inputs.failures, inputs.config,
                         inputs.changes.changes)


def test_verdicts_are_read_back_as_computed(made: Built, tmp_path: Path) -> None:
    cold = Caches.of(tmp_path)
    first = load_inputs(made.config, cold).history
    assert (cold.verdicts.reused, cold.verdicts.missed) == (0, 1)
    warm = Caches.of(tmp_path)
    again = load_inputs(made.config, warm).history
    assert (warm.verdicts.reused, warm.verdicts.missed) == (1, 0)
    assert again == first == _uncached(load_inputs(made.config))
    assert len(first) == 3 and first[0]["health"]


def test_the_key_is_the_store_config_and_code_not_the_folder(made: Built,
                                                              tmp_path: Path) -> None:
    inputs = load_inputs(made.config)
    key = verdicts_key(inputs)
    assert verdicts_key(load_inputs(made.config)) == key
    shutil.copytree(made.root, tmp_path / "moved", ignore=shutil.ignore_patterns(".cache"))
    assert verdicts_key(load_inputs(load_config(tmp_path / "moved"))) == key
    config = inputs.config
    stricter = replace(config, sealing=replace(config.sealing, max_wait_days=9))
    assert verdicts_key(replace(inputs, config=stricter)) != key
    assert verdicts_key(replace(inputs, days=inputs.days[:-1])) != key
    assert verdicts_key(replace(inputs, failures=inputs.failures[1:])) != key


def test_every_field_and_value_of_the_series_is_in_its_bytes(made: Built) -> None:
    series = load_inputs(made.config).series
    parts = series_bytes(series)
    assert {"step", "timestamp", "run", "forks", "lineage"} <= set(parts)
    assert any(name.startswith("values.") for name in parts)
    assert any(name.startswith("raw_keys.") for name in parts)
    loss = series.values["loss"].copy()
    loss[-1] = np.nextafter(loss[-1], np.inf)  # the smallest change a float can make
    nudged = replace(series, values={**series.values, "loss": loss})
    assert series_bytes(nudged) != parts
    runs = series.run.copy()
    runs[0] = "run-b"
    assert series_bytes(replace(series, run=runs)) != parts


def test_a_correction_computes_the_verdicts_again(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=3)
    before = load_inputs(made.config, Caches.of(tmp_path / "cache"))
    key = verdicts_key(before)
    _ = before.history
    add_correction(made, 3)  # a new snapshot: late rows of day 1
    caches = Caches.of(tmp_path / "cache")
    after = load_inputs(made.config, caches)
    assert verdicts_key(after) != key
    assert after.history == _uncached(load_inputs(made.config))
    assert (caches.verdicts.reused, caches.verdicts.missed) == (0, 1)
