"""render/metrics.py: metric labels and units in one place; alert lines from the
configured health checks, never from constants in chart code."""

from __future__ import annotations

from chronicle.render.i18n import ENGLISH, language
from chronicle.render.metrics import alert_rules, axis_for, check_value, display, show
from tests.support.config import make_config


def test_default_alert_lines_follow_the_default_checks() -> None:
    config = make_config()
    assert alert_rules(config, "grad_norm", ENGLISH) == [(2.0, "alert 2.0")]
    assert alert_rules(config, "drop_fraction", ENGLISH) == [(0.07, "alert 7.0% (p50, 60 min)")]
    assert alert_rules(config, "tokens_per_second", ENGLISH) == [
        (2.0e6, "alert 2M tok/s (p50, 60 min)")]
    assert alert_rules(config, "router_bias_max", ENGLISH) == [
        (-400.0, "alert −400"), (400.0, "alert 400")]
    assert alert_rules(config, "loss", ENGLISH) == []  # loss checks count spikes and NaNs: no line


def test_a_configured_threshold_moves_the_line() -> None:
    config = make_config(health=[{"id": "grad_norm", "rule": "max > 3.0"},
                                 {"id": "mfu", "enabled": False},
                                 {"id": "lr_floor", "metric": "optim/learning_rate",
                                  "rule": "min < 1e-5"}])
    assert alert_rules(config, "grad_norm", ENGLISH) == [(3.0, "alert 3.0")]
    assert alert_rules(config, "mfu", ENGLISH) == []
    # A check may name the W&B key: the line lands on the canonical metric's chart.
    assert alert_rules(config, "learning_rate", ENGLISH) == [(1e-5, "alert 1e−5")]


def test_display_and_mfu_units() -> None:
    assert display("tokens_per_second", None, ENGLISH).unit == "tok/s"
    assert show("drop_fraction", 0.0312, None, ENGLISH) == "3.1%"
    assert show("tokens_per_second", 2.5e6, None, ENGLISH) == "2.5M tok/s"
    assert show("mfu", 21.2, make_config(), ENGLISH) == "21.2%"
    fraction = make_config(wandb__mfu_unit="fraction")
    assert show("mfu", 0.212, fraction, ENGLISH) == "21.2%"
    assert axis_for("mfu", fraction, ENGLISH).kind == "fraction"
    assert display("some_new_metric", None, ENGLISH).label == "some new metric"


def test_check_values_read_in_their_metric_format() -> None:
    config = make_config()
    assert check_value({"value": 1.9e6, "rule": "p50 < 2e6", "metric": ["tokens_per_second"]},
                       config, ENGLISH) == "1.9M tok/s"
    # A silence is a length of time, written as every duration (not "460 min", "25.25 min").
    gap = {"rule": "gap_minutes > 10", "metric": ["telemetry"]}
    assert check_value({**gap, "value": 51.5}, config, ENGLISH) == "52 min"
    assert check_value({**gap, "value": 460}, config, ENGLISH) == "7 h 40 min"
    assert check_value({**gap, "value": 460}, config, language("zh")) == "7 小时 40 分钟"
    # A count is a whole number ("2", never "2.0"), with its separators.
    assert check_value({"value": 2, "rule": "count > 0", "metric": ["failures.loss_spike"]},
                       config, ENGLISH) == "2"
    assert check_value({"value": 4096.0, "rule": "nan_count > 0", "metric": ["loss"]},
                       config, ENGLISH) == "4,096"
