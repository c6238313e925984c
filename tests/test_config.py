from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from chronicle.config import (
    DEFAULT_KEYS,
    DEFAULT_METRICS,
    declared_keys,
    load_config,
    parse_config,
)
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


def problems_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as err:
        parse_config(data, Path("."))
    return err.value.problems


NAN, INF = float("nan"), float("inf")
CLAIM = {"statement": "792 GPUs", "value": 792, "who": "w", "where": "a post",
         "against": "config.accelerators"}
RISK = {"id": "r", "metric": "loss", "rule": "max > 3", "watch": [0.2, 0.4]}
FORM = {"E": 1.5, "A": 2.0e6, "alpha": 0.25, "flops_per_token": 1.38e11}


@pytest.mark.parametrize(("overrides", "path"), [
    ({"run__token_budget": INF}, "run.token_budget"),
    ({"run__token_budget": "nan"}, "run.token_budget"),  # YAML 1.1 strings parse as numbers
    ({"failures__gap_minutes": NAN}, "failures.gap_minutes"),
    ({"run__prices_usd_per_accelerator_hour": {"spot": INF}},
     "run.prices_usd_per_accelerator_hour.spot"),
    ({"run__phases": {"pretraining": NAN}}, "run.phases.pretraining"),
    ({"prediction": {"table": [[0.5, NAN, 1.0, 2.0]]}}, "prediction.table[0]"),
    ({"prediction": {"form": {**FORM, "E": NAN}}}, "prediction.form.E"),
    ({"prediction": {"form": {**FORM, "band": INF}}}, "prediction.form.band"),
    ({"health": [{"id": "grad_norm", "rule": "max > 1e999"}]}, "health[0].rule"),
    ({"health": [{"id": "mfu", "window": NAN}]}, "health[0].window"),
    ({"risks": [{**RISK, "watch": [0.0, INF]}]}, "risks[0].watch"),
    ({"risks": [{**RISK, "window": -INF}]}, "risks[0].window"),
    ({"claims": [{**CLAIM, "value": INF}]}, "claims[0].value"),
    ({"claims": [{**CLAIM, "tolerance": NAN}]}, "claims[0].tolerance"),
])
def test_nan_and_infinity_are_refused_everywhere(overrides: dict[str, Any], path: str) -> None:
    found = problems_of(config_dict(**overrides))
    assert len(found) == 1 and found[0].startswith(f"{path}: expected "), found


def test_a_nan_gap_no_longer_disables_downtime_detection_silently() -> None:
    found = problems_of(config_dict(failures__gap_minutes=NAN))
    assert found == ["failures.gap_minutes: expected a positive number (e.g. 10), got .nan "
                     "(NaN and infinity are not numbers a chronicle can use)"]


@pytest.mark.parametrize(("overrides", "message"), [
    ({"run__start": "2026-02-30"}, "run.start: expected a date like 2026-08-20, got "
                                   "'2026-02-30' (day is out of range for month)"),
    ({"run__start": date(1, 1, 1)}, "run.start: expected a date like 2026-08-20, got "
                                    "0001-01-01 (outside 1970 to 2100)"),
    ({"run__start": "9999-12-31"}, "run.start: expected a date like 2026-08-20, got "
                                   "'9999-12-31' (outside 1970 to 2100)"),
    ({"run__planned_days": 3651}, "run.planned_days: expected a whole number from 1 to "
                                  "3,650, got 3651"),
    ({"run__planned_days": True}, "run.planned_days: expected a whole number from 1 to "
                                  "3,650, got True"),
    ({"simulated__days": 10**12}, "simulated.days: expected a whole number from 1 to 3,650, "
                                  "got 1000000000000"),
    ({"simulated__seed": -1}, "simulated.seed: expected a whole number from 0 to "
                              "4,294,967,295, got -1"),
    ({"claims": [{**CLAIM, "when": "2026-13-01"}]},
     "claims[0].when: expected a date like 2026-08-20, got '2026-13-01' "
     "(month must be in 1..12)"),
    ({"wandb__timeout_seconds": 10**9}, "wandb.timeout_seconds: expected a whole number from "
                                        "1 to 3,600, got 1000000000"),
])
def test_dates_and_sizes_are_bounded(overrides: dict[str, Any], message: str) -> None:
    assert problems_of(config_dict(**overrides)) == [message]


def test_the_bounds_themselves_are_accepted() -> None:
    config = parse_config(config_dict(run__planned_days=3650, simulated__days=3650,
                                      simulated__seed=0, run__start="1970-01-01"), Path("."))
    assert (config.run.planned_days, config.simulated.days, config.simulated.seed) == (
        3650, 3650, 0)
    assert config.run.start == date(1970, 1, 1)


@pytest.mark.parametrize("url", [
    'https://example.org/"><script>alert(1)</script>',
    "https://example.org/c/'onload='x",
    "https://example.org/a b/",
    "https://user:pw@example.org/c/",
    "https://example.org/c/?utm=1",
    "https://example.org/c/#top",
    "https://example.org\\c",
    "ftp://example.org/c/",
    "javascript:alert(1)//",
    "https://",
    "https:///c/",
])
def test_site_url_must_be_a_plain_http_url(url: str) -> None:
    found = problems_of(config_dict(site__url=url))
    assert len(found) == 1 and found[0].startswith("site.url: expected a plain http(s) URL")


@pytest.mark.parametrize(("url", "stored"), [
    ("https://example.org/c", "https://example.org/c/"),
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/"),
    ("https://marin-community.github.io/chronicle/v1.2/~x/", None),
])
def test_plain_site_urls_are_accepted(url: str, stored: str | None) -> None:
    assert parse_config(config_dict(site__url=url), Path(".")).site.url == (stored or url)


@pytest.mark.parametrize("doi", [
    "https://doi.org/10.5281/zenodo.1234567", "doi:10.5281/zenodo.1234567", "10.5281",
    "zenodo.1234567", "10.5281/zenodo {x}", "10.5281/a\\b", 1234567, ["10.5281/zenodo.1"],
])
def test_site_doi_must_be_a_doi_name(doi: Any) -> None:
    found = problems_of(config_dict(site__doi=doi))
    assert len(found) == 1 and found[0].startswith(
        "site.doi: expected a DOI, e.g. 10.5281/zenodo.1234567 (the name alone, without "
        "https://doi.org/), got "), found


def test_site_doi_is_optional_and_kept_as_written() -> None:
    assert parse_config(config_dict(), Path(".")).site.doi is None
    assert parse_config(config_dict(site__doi=" 10.5281/zenodo.1234567 "),
                        Path(".")).site.doi == "10.5281/zenodo.1234567"


def test_every_problem_in_every_section_at_once() -> None:
    data = config_dict(run__start="2026-02-30", wandb__mfu_unit="percnt",
                       site__url="https://x.org/?a",
                       health=[{"id": "grad_norm", "rule": "median > 2"}],
                       claims=[{**CLAIM, "against": "config.accelerator"}],
                       prediction={"table": [[2.0, 1.0]]})
    data["sourse"] = "live"
    found = problems_of(data)
    assert [p.split(":")[0] for p in found] == [
        "sourse", "run.start", "wandb.mfu_unit", "site.url", "prediction.table[0]",
        "health[0].rule", "claims[0].against"]
    assert "got 'percnt' (did you mean 'percent'?)" in found[2]


def test_the_unknown_key_message_is_the_same_everywhere() -> None:
    found = problems_of(config_dict(health=[{"id": "x", "metric": "loss", "rule": "max > 1",
                                             "severty": "warn"}],
                                    run__accelerators={"kind": "GB200", "count": 1, "cont": 2},
                                    prediction={"table": [[1.0, 2.0]], "metirc": "eval_loss"}))
    assert found == [
        "run.accelerators.cont: unknown key (did you mean 'count'?); allowed here: kind, count",
        "prediction.metirc: unknown key (did you mean 'metric'?); allowed here: metric, table, "
        "form, registered, source",
        "health[0].severty: unknown key (did you mean 'severity'?); allowed here: id, metric, "
        "rule, window, severity, reason, enabled",
    ]


def test_a_missing_key_says_what_it_is() -> None:
    data = config_dict()
    del data["run"]["start"]
    assert problems_of(data) == ["run.start: missing (required): UTC date of day 1"]
    data = config_dict(health=[{"id": "memory", "metric": "memory_peak_gib"}])
    assert problems_of(data) == [
        "health[0].rule: missing (required for a new check): <stat> <op> <number>"]


def test_a_bad_value_is_echoed_cut_to_80_characters() -> None:
    data = config_dict(run__planned_days="y" * 100_000, run__name=["x" * 10_000] * 1000)
    found = problems_of(data)
    assert [p.split(":")[0] for p in found] == ["run.name", "run.planned_days"]
    assert all(len(p) < 250 for p in found), [len(p) for p in found]


def test_a_thousand_bad_rows_print_fifty_lines() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(config_dict(prediction={"table": [["x"]] * 1000}), Path("."))
    assert len(err.value.problems) == 1000
    text = str(err.value)
    assert text.count("\n  - ") == 51 and "... and 950 more (fix these first)" in text


@pytest.mark.parametrize("name", ["../failures.yml", "/etc/passwd", "..", "a/../../b.yml"])
def test_failures_file_stays_inside_the_chronicle_folder(name: str) -> None:
    found = problems_of(config_dict(failures__file=name))
    assert found == [f"failures.file: expected a file inside the chronicle folder, e.g. "
                     f"failures.yml, got {name!r}"]


def test_defaults_come_from_the_one_declaration() -> None:
    data = config_dict()
    del data["simulated"]
    config = parse_config(data, Path("."))
    assert config.simulated.seed == 535 and config.simulated.days == 100
    assert config.failures.file is None and config.failures.path == "failures.yml"
    assert config.failures.gap_minutes == 10.0
    assert config.site.title == "Test run: a chronicle" and config.site.author == "chronicle"
    assert config.wandb.keys == DEFAULT_KEYS and config.wandb.timeout_seconds == 30
    assert len(config.watch.health) == 12 and config.watch.prediction is None


def test_every_declared_key_has_a_doc() -> None:
    from chronicle.config import CONFIG
    from chronicle.config.fields import walk

    undocumented = [path for path, option in walk(CONFIG.schema) if len(option.doc) < 5]
    assert not undocumented
    assert "run.start" in declared_keys() and "claims.tolerance" in declared_keys()


def test_config_keys_default_to_levanter_and_merge_overrides() -> None:
    default = parse_config(config_dict(), Path("."))
    assert default.wandb.config_keys == {
        "sequence_length": "model.max_seq_len",
        "train_steps": "trainer.trainer.num_train_steps",
        "batch_size": "trainer.trainer.train_batch_size"}
    data = config_dict(wandb__config_keys={"train_steps": "trainer.num_train_steps"})
    merged = parse_config(data, Path(".")).wandb.config_keys
    assert merged["train_steps"] == "trainer.num_train_steps"
    assert merged["sequence_length"] == "model.max_seq_len"
    bad = config_dict(wandb__config_keys={"seq_len": "model.max_seq_len", "batch_size": "a..b"})
    with pytest.raises(ConfigError) as err:
        parse_config(bad, Path("."))
    text = str(err.value)
    assert "wandb.config_keys.seq_len: unknown config name" in text
    assert "did you mean 'sequence_length'" in text
    assert "wandb.config_keys.batch_size: expected a dotted path" in text


def test_github_pulls_are_optional_paths_and_labels() -> None:
    assert not parse_config(config_dict(), Path(".")).github.pulls.configured
    pulls = parse_config(config_dict(github__pulls={"paths": ["experiments/*"]}), Path("."))
    assert pulls.github.pulls.paths == ("experiments/*",) and pulls.github.pulls.configured
    with pytest.raises(ConfigError, match=r"github\.pulls\.lables: unknown key"):
        parse_config(config_dict(github__pulls={"lables": ["x"]}), Path("."))


def test_a_risk_needs_a_window_or_a_change_and_rebound_needs_after() -> None:
    risk = {"id": "r", "metric": "drop_fraction", "rule": "rebound > 2"}
    with pytest.raises(ConfigError) as err:
        parse_config(config_dict(risks=[risk]), Path("."))
    assert "risks[0].watch: missing" in str(err.value)
    assert "risks[0].after: the rebound stat compares" in str(err.value)
    ok = parse_config(config_dict(risks=[{**risk, "after": "sequence_length"}]), Path("."))
    assert ok.watch.risks[0].watch == (0.0, 1.0) and ok.watch.risks[0].after == "sequence_length"
    with pytest.raises(ConfigError, match=r"risks\[0\]\.after: expected one of config"):
        parse_config(config_dict(risks=[{**risk, "after": "context"}]), Path("."))


def test_site_titles_give_each_edition_its_title_and_the_default_is_translated() -> None:
    from chronicle.render.i18n import ENGLISH, language, site_title

    zh = language("zh")
    config = parse_config(config_dict(), Path("."))
    name = config.run.name
    assert site_title(config, ENGLISH) == config.site.title == f"{name}: a chronicle"
    assert site_title(config, zh) == f"{name} 训练纪事"
    own = parse_config(config_dict(site__title="My run", site__titles={"zh": "我的训练"}),
                       Path("."))
    assert (site_title(own, ENGLISH), site_title(own, zh)) == ("My run", "我的训练")
    written = parse_config(config_dict(site__title="My run"), Path("."))
    assert site_title(written, zh) == "My run"  # an operator's title stays as written
    with pytest.raises(ConfigError) as err:
        parse_config(config_dict(site__titles={"en": "x", "zh": ""}), Path("."))
    assert "site.titles.en" in str(err.value) and "site.titles.zh" in str(err.value)
