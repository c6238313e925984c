from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from chronicle.config import DEFAULT_METRICS, load_config, parse_config
from chronicle.errors import ConfigError
from tests.support.config import config_dict


def test_repository_chronicle_yml_describes_the_marin_run() -> None:
    config = load_config(Path(__file__).parent.parent)
    assert config.run.name == "Marin 535B-A23B"
    assert config.run.start == date(2026, 8, 20)
    assert config.run.token_budget == 18.0e12
    assert config.run.accelerators.count == 704
    assert config.wandb.mfu_unit == "percent"
    assert config.github.repo == "marin-community/marin"


def test_every_problem_is_reported_at_once_with_its_key_path() -> None:
    data = config_dict(run__planned_days=-3, run__accelerators={"kind": "GB200", "count": "x"})
    data["github"]["repo"] = "not a repo"
    del data["site"]["url"]
    with pytest.raises(ConfigError) as err:
        parse_config(data, Path("."))
    text = str(err.value)
    assert "4 problems" in text
    for path in ("run.planned_days", "run.accelerators.count", "github.repo", "site.url"):
        assert path in text


def test_unknown_keys_get_a_suggestion() -> None:
    data = config_dict()
    data["run"]["token_budgte"] = 1e12
    data["wandb"]["metrics"] = {"los": "train/loss"}
    with pytest.raises(ConfigError) as err:
        parse_config(data, Path("."))
    text = str(err.value)
    assert "run.token_budgte: unknown key (did you mean 'token_budget'?)" in text
    assert "did you mean 'loss'?" in text


def test_metric_overrides_merge_with_defaults() -> None:
    data = config_dict(wandb__metrics={"loss": "my/loss"})
    config = parse_config(data, Path("."))
    assert config.wandb.key("loss") == "my/loss"
    assert config.wandb.key("mfu") == DEFAULT_METRICS["mfu"]
    assert config.wandb.keeps("my/loss")


def test_yaml_11_exponent_and_url_slash() -> None:
    data = config_dict(run__token_budget="18.0e12", site__url="https://x.org/c")
    config = parse_config(data, Path("."))
    assert config.run.token_budget == 18.0e12
    assert config.site.url == "https://x.org/c/"


def test_live_source_needs_a_lineage() -> None:
    data = config_dict(source="live", wandb__runs=[])
    with pytest.raises(ConfigError, match=r"wandb\.runs"):
        parse_config(data, Path("."))


def test_missing_folder_and_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope")
    with pytest.raises(ConfigError, match="chronicle init"):
        load_config(tmp_path)
    (tmp_path / "chronicle.yml").write_text("run: [unclosed\n")
    with pytest.raises(ConfigError, match="line 1"):
        load_config(tmp_path)
    (tmp_path / "chronicle.yml").write_text(yaml.safe_dump(["a list"]))
    with pytest.raises(ConfigError, match="mapping"):
        load_config(tmp_path)
