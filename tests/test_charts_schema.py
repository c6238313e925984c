"""Every chart the site can draw is a valid Vega-Lite spec.

Charts are built with Altair without its checks at run time (render/vega.py `unchecked`:
two thirds of a chart's cost); here every spec a chronicle publishes, in both languages,
sealed or built, and the edge cases (no data, one point, smoothing, log axes, a run
with every signal configured) is validated against the Vega-Lite JSON schema Altair
ships, offline.
"""

from __future__ import annotations

import html
import importlib.resources
import json
import re
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import altair as alt
import jsonschema
import numpy as np
import pytest

from chronicle.config import load_config
from chronicle.render import vega
from chronicle.render.charts import Axis, Event, Options, Span, line_chart
from chronicle.render.day_charts import day_charts
from chronicle.render.i18n import ENGLISH, language
from chronicle.render.panels import health_heatmap, regime_chart, residual_chart, risk_timeline
from chronicle.render.vega import SCHEMA, no_data
from chronicle.site.outputs.inputs import load_inputs
from chronicle.site.outputs.pages import site_files
from tests.support.site_factory import simulated_chronicle

ZH = language("zh")
START = date(2026, 8, 20)
NIGHTS = 4


@cache
def _validator() -> jsonschema.Draft7Validator:
    path = importlib.resources.files("altair") / "vegalite/v6/schema/vega-lite-schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def _errors(spec: dict[str, Any]) -> list[str]:
    # Rows of a dataset are alike: a few of each stand for all (the schema checks each row
    # against every kind of inline data, ~0.3 s for a 2,000-point chart).
    if isinstance(spec.get("datasets"), dict):
        spec = spec | {"datasets": {k: rows[:3] for k, rows in spec["datasets"].items()}}
    found = sorted(_validator().iter_errors(spec), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in found[:5]]


def test_the_schema_is_the_one_the_specs_name() -> None:
    # Altair writes the schema it validates against; the site draws that release.
    assert alt.SCHEMA_URL == SCHEMA
    assert _validator().schema["$schema"].startswith("http://json-schema.org/draft-07")


def test_the_validation_catches_a_broken_spec() -> None:
    spec = no_data("t", "d", ENGLISH)
    assert _errors(spec) == []
    spec["mark"] = {"type": "lines"}  # no such mark
    assert _errors(spec)


@pytest.fixture(scope="module")
def chronicle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_chronicle(tmp_path_factory.mktemp("schema"), NIGHTS, START).config.root


def _built_specs(chronicle: Path) -> dict[str, dict[str, Any]]:
    """Every spec a build of `chronicle` makes: run-wide and day charts, both languages."""
    config = load_config(chronicle)
    inputs = load_inputs(config)
    specs: dict[str, dict[str, Any]] = {}
    for lang in (ENGLISH, ZH):
        built = site_files(inputs, lang, bundle=False)
        specs |= {f"{lang.code}/{path}": json.loads(text) for path, text in built.items()
                  if path.endswith(".vl.json")}
        # A translated day's charts are drawn from the store in its language.
        for day in inputs.days:
            charts = day_charts(date.fromisoformat(day["date"]), inputs.series,
                                inputs.failures, config, lang)
            specs |= {f"{lang.code}/days/{day['date']}/{k}": s for k, s in charts.items()}
    return specs


def test_every_published_spec_is_valid_vega_lite(chronicle: Path) -> None:
    config = load_config(chronicle)
    sealed = sorted(config.docs_dir.glob("days/*/*.vl.json"))
    specs = {str(p.relative_to(config.docs_dir)): json.loads(p.read_text()) for p in sealed}
    specs |= _built_specs(chronicle)
    kinds = {path.rsplit("/", 1)[-1] for path in specs}
    # Day charts, the signals' panels and pages, the run-wide charts, the health matrix.
    assert {"loss.vl.json", "prediction.vl.json", "dropping.vl.json", "risks.vl.json",
            "health.vl.json"} <= kinds, kinds
    assert len(specs) > 4 * NIGHTS * 2
    invalid = {path: errs for path, spec in specs.items() if (errs := _errors(spec))}
    assert invalid == {}
    for path, spec in specs.items():
        assert spec["$schema"] == SCHEMA, path
        assert spec["description"], path  # every chart has a text alternative
        layers = spec.get("layer", [spec])
        # Data travels as named datasets, each one given: no inline copy Altair checked.
        for layer in layers:
            data = layer.get("data") or spec.get("data") or {}
            assert "values" not in data, path
            assert data.get("name") in spec.get("datasets", {}), (path, data)


def test_layers_handed_over_give_the_bytes_of_altairs_own_copies(
        chronicle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `layered` hands its layers to alt.LayerChart without the two deep copies Altair's
    # constructor makes of each (render/vega.py `_HandedOver`); every spec of the site
    # must be what Altair's own copies give, byte for byte (sealed specs are compared so
    # by `verify --recompute`).
    handed = {path: json.dumps(spec) for path, spec in _built_specs(chronicle).items()}

    def deep_copied(layers: list[alt.Chart], title: str, description: str, lang: Any,
                    subtitle: str | None = None, height: int = 260,
                    **extra: Any) -> alt.LayerChart:
        return alt.LayerChart(layer=list(layers), **vega.top_level(
            title, description, lang, subtitle, height), **extra)

    monkeypatch.setattr(vega, "layered", deep_copied)
    copied = {path: json.dumps(spec) for path, spec in _built_specs(chronicle).items()}
    assert len(handed) > 4 * NIGHTS * 2
    assert [p for p in handed if handed[p] != copied.get(p)] == []
    assert handed.keys() == copied.keys()


def _series(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(n, dtype=float) * 60 + 1.76e9
    y = 3 + np.sin(np.arange(n) / 50.0)
    y[::97] = np.nan
    return x, y


@pytest.mark.parametrize("lang", [ENGLISH, ZH], ids=["en", "zh"])
def test_edge_cases_are_valid_vega_lite(lang: Any) -> None:
    x, y = _series(3000)
    t0 = float(x[0])
    full = Options(events=[Event(t0 + 600, "phase", "phase 2"), Event(t0 + 900, "restart", "r"),
                           Event(t0 + 9e9, "odd_kind", "outside")],
                   spans=[Span(t0 + 100, t0 + 2000, "gap"), Span(t0 + 1500, t0 + 2500, "b")],
                   highlight=(t0, t0 + 86400), rules=[(3.5, "alert"), (float("nan"), "x")],
                   smooth=["loss"], gap_seconds=600,
                   bands={"band": (x[::10], y[::10] - 0.1, y[::10] + 0.1)})
    specs = {
        "full": line_chart({"loss": (x, y), "other": (x, y * 2), "none": None}, title="T",
                           description="d", x=Axis("time", time=True),
                           y=Axis("loss", kind="si", unit="tok/s"), lang=lang, options=full,
                           subtitle="s"),
        "log": line_chart({"loss": (x, y)}, title="", description="d",
                          x=Axis("tokens", kind="si"), y=Axis("y", log=True, domain=(2.5, 4)),
                          lang=lang),
        "one point": line_chart({"loss": (x[:1], y[:1])}, title="T", description="d",
                                x=Axis("step"), y=Axis("fraction", kind="fraction"), lang=lang),
        "empty": line_chart({"loss": (x[:0], y[:0])}, title="T", description="d",
                            x=Axis("step"), y=Axis("y"), lang=lang),
        "residual": residual_chart([(0.1, 0.01, ""), (0.2, 0.3, "loss spike to 2.1 at step 7")],
                                   [(0.0, -0.1, 0.1)],
                                   title="", description="d", lang=lang),
        "residual empty": residual_chart([], [], title="t", description="d", lang=lang),
        "regime": regime_chart([{"f": 0.1, "p50": 0.03, "regime": "4K", "date": "2026-08-21"}],
                               "regime", [(0.05, "alert")], title="t", description="d",
                               lang=lang),
        "risks": risk_timeline([{"title": "a", "lo": 0.1, "hi": 0.3, "status": "triggered",
                                 "at": 0.2}, {"title": "b", "lo": 0.5, "hi": 0.9,
                                              "status": "upcoming", "at": None}], 0.25,
                               title="t", description="d", lang=lang),
        "health": health_heatmap([{"date": "2026-08-21", "day": 1, "checks": [
            {"id": "loss_spike", "status": "warn", "value_text": "3", "rule": "r"}]}],
            ["loss_spike"], title="t", description="d", lang=lang),
    }
    assert {k: e for k, s in specs.items() if (e := _errors(s))} == {}
    assert specs["full"]["params"][0]["name"] == "smoothed"


def test_the_same_inputs_give_the_same_spec_bytes() -> None:
    # Sealed specs are compared byte for byte by `verify --recompute`: nothing in a spec
    # may depend on what was built before it in the process (Altair's counters, say).
    x, y = _series(500)
    opts = Options(events=[Event(float(x[10]), "phase", "p")], smooth=["loss"])

    def build() -> str:
        return json.dumps(line_chart({"loss": (x, y)}, title="T", description="d",
                                     x=Axis("time", time=True), y=Axis("loss"),
                                     lang=ENGLISH, options=opts))

    first = build()
    residual_chart([(0.1, 0.0, "")], [], title="t", description="d", lang=ENGLISH)
    assert build() == first


def _said(markdown: str) -> str:
    """Markdown's text as a reader reads it: escapes and emphasis dropped, lines joined."""
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", markdown)
    return re.sub(r"\s+", " ", text.replace("**", ""))


def test_each_signal_says_one_verdict_on_its_card_page_and_feed_item(chronicle: Path) -> None:
    # With every watcher configured (prediction, risks, the dropping alert), the home
    # card, the signal's own page and the newest day's feed item say the verdict of
    # api/signals.json word for word, in each language.
    from chronicle.site.publish.daily_feed import item_html

    config = load_config(chronicle)
    inputs = load_inputs(config)
    for lang in (ENGLISH, ZH):
        built = site_files(inputs, lang, bundle=False)
        data = json.loads(built["api/signals.json"])
        assert data["prediction"]["residual"] is not None and data["risks"]["points"]
        newest = list(item_html(inputs, lang).values())[-1]
        item = _said(html.unescape(re.sub(r"<[^>]+>", " ", newest)))
        for name, page in (("prediction", "prediction.md"), ("dropping", "throughput.md"),
                           ("risks", "risks.md")):
            verdict = data[name]["verdict"]
            assert verdict in _said(str(built["index.md"])), (lang.code, name)
            assert verdict in _said(str(built[page])), (lang.code, name)
            assert verdict in item, (lang.code, name)
        for point in data["risks"]["points"]:
            assert point["verdict"] in _said(str(built["risks.md"])), point


def test_the_verdicts_of_sealed_days_are_read_not_computed_again(chronicle: Path) -> None:
    # A build shows each day's prediction, health and risks as its JSON sealed them: a
    # later chronicle.yml (here: no watcher at all) changes no sealed day's verdict.
    from dataclasses import replace

    inputs = load_inputs(load_config(chronicle))
    sealed = [{k: d.get(k) for k in ("prediction", "health", "risks")} for d in inputs.days]
    assert [{k: h[k] for k in ("prediction", "health", "risks")} for h in inputs.history] \
        == sealed
    bare = replace(inputs.config, watch=replace(inputs.config.watch, health=(), risks=(),
                                                prediction=None))
    again = replace(inputs, config=bare)
    assert [{k: h[k] for k in ("prediction", "health", "risks")} for h in again.history] \
        == sealed


def test_each_days_feed_title_verdict_is_said_in_each_language(chronicle: Path) -> None:
    from chronicle.site.publish.daily_feed import item_verdicts

    inputs = load_inputs(load_config(chronicle))
    for lang, words in ((ENGLISH, "the prediction"), (ZH, "预测")):
        verdicts = item_verdicts(inputs, lang)
        # Each day whose eval was compared with the prediction says how the loss is.
        compared = [f"{inputs.config.site.url}{'zh/' if lang is ZH else ''}days/{d['date']}.html"
                    for d in inputs.days
                    if (d.get("prediction") or {}).get("outside_band") is not None]
        assert compared and all(words in verdicts[url] for url in compared), verdicts
