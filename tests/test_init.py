"""`chronicle init` (chronicle/init.py): a simulated scaffold shows the three signals on its
first build; a live one keeps the same watchers as commented examples; every default the
template shows comes from the key's declaration."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from chronicle.config import DEFAULT_CONFIG_KEYS, load_config
from chronicle.config.template import declaration, declared_line
from chronicle.demo import demo_options
from chronicle.init import (
    CONFIG_TEMPLATE,
    SIMULATED_CONFIG_KEYS,
    SIMULATED_WATCH,
    InitOptions,
    init_chronicle,
)
from chronicle.render.signals import NO_PREDICTION
from tests.support.commands import cli, take_nights

# The keys the template shows at their default, each written from its declaration.
SHOWN_DEFAULTS = ("wandb.mfu_unit", "failures.gap_minutes", "simulated.seed")


def _text(path: Path) -> str:
    """Return the visible text of an HTML page, whitespace collapsed."""
    html = path.read_text(encoding="utf-8")
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`chronicle init --source simulated`, three nights, one build: as a new user does."""
    root = tmp_path_factory.mktemp("init") / "mine"
    result = cli("init", str(root), "--source", "simulated")
    assert result.exit_code == 0, result.output
    take_nights(root, 3)
    result = cli("build", "--dir", str(root))
    assert result.exit_code == 0, result.output
    return root


def test_a_simulated_scaffold_shows_the_three_signals_on_its_first_build(
        simulated: Path) -> None:
    site = simulated / "site"
    home = _text(site / "index.html")
    signals = json.loads((site / "api" / "signals.json").read_text(encoding="utf-8"))
    # The prediction: the eval loss set against it, not "none configured".
    assert "No loss prediction is configured" not in home and NO_PREDICTION not in home
    prediction = signals["prediction"]["verdict"]
    assert "Eval loss " in prediction and "above the prediction" in prediction
    assert "Eval loss " in home and "inside the band" in home
    # The risk points: each watched, none "configured" away.
    assert "No risk points are configured" not in home
    risks = signals["risks"]
    assert len(risks["points"]) == 4 and risks["verdict"] in home
    # The claims: the home page links their page, which sets each against the run.
    assert 'href="claims.html"' in (site / "index.html").read_text(encoding="utf-8")
    claims = _text(site / "claims.html")
    assert "No claim is configured" not in claims
    assert "The run uses 792 GPUs" in claims and "contradicted" in claims


def test_the_examples_are_marked_as_examples(simulated: Path) -> None:
    text = (simulated / "chronicle.yml").read_text(encoding="utf-8")
    assert "are EXAMPLES that fit the simulated run" in text
    assert "For\n# a live run, write your own before it starts" in text
    config = load_config(simulated)
    assert config.watch.prediction is not None and len(config.watch.claims) == 4


def test_a_live_scaffold_keeps_the_same_watchers_commented_out(tmp_path: Path) -> None:
    init_chronicle(tmp_path / "live", InitOptions())
    text = (tmp_path / "live" / "chronicle.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert not {"prediction", "risks", "claims", "health"} & set(data)
    assert "uncomment them and write your run's own before it" in text
    commented = "".join(line[2:] + "\n" for line in text.splitlines()
                        if line.startswith("# ") or line == "#")
    assert SIMULATED_WATCH.replace("\n\n", "\n") in commented.replace("\n\n", "\n")
    # Uncommented, the examples are valid watchers (on this chronicle's own run values).
    live = load_config(tmp_path / "live")
    assert live.watch.prediction is None


def test_the_config_keys_example_is_the_demos_line(tmp_path: Path) -> None:
    # The demo scaffolds a simulated chronicle: its line is the one a live chronicle
    # shows commented out, and one a simulated chronicle of `chronicle init` writes.
    init_chronicle(tmp_path / "demo", demo_options(3))
    init_chronicle(tmp_path / "sim", InitOptions(source="simulated"))
    init_chronicle(tmp_path / "live", InitOptions())
    demo = (tmp_path / "demo" / "chronicle.yml").read_text(encoding="utf-8")
    sim = (tmp_path / "sim" / "chronicle.yml").read_text(encoding="utf-8")
    live = (tmp_path / "live" / "chronicle.yml").read_text(encoding="utf-8")
    assert f"\n  {SIMULATED_CONFIG_KEYS}\n" in demo and f"\n  {SIMULATED_CONFIG_KEYS}\n" in sim
    assert f"\n  # {SIMULATED_CONFIG_KEYS}\n" in live
    assert load_config(tmp_path / "demo").wandb.config_keys["train_steps"] == \
        "trainer.num_train_steps"
    # The comment above it names the defaults as config/metrics.py declares them.
    said = " ".join(line.strip("# ") for line in live.splitlines() if line.startswith("  #"))
    for name, path in DEFAULT_CONFIG_KEYS.items():
        assert f"{name}: {path}" in said


@pytest.mark.parametrize("path", SHOWN_DEFAULTS)
def test_each_default_shown_is_the_declared_one(tmp_path: Path, path: str) -> None:
    init_chronicle(tmp_path / "c", InitOptions(source="simulated"))
    text = (tmp_path / "c" / "chronicle.yml").read_text(encoding="utf-8")
    line = declared_line(path)
    assert f"\n  {line}\n" in text
    section, key = path.split(".")
    assert yaml.safe_load(text)[section][key] == declaration(path).default
    # ...and written nowhere by hand in the template.
    assert f"{key}:" not in CONFIG_TEMPLATE
