"""Charts: downsampling, spec shape and strictness, static SVG, offline JS bundle."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronicle.render.charts import (
    HOVER_LAYER,
    SERIES_COLORS,
    SVG_WIDTH,
    Event,
    downsample_minmax,
    line_chart,
)
from chronicle.render.svg import javascript_bundle, render_svg

T0 = 1787097600.0  # 2026-08-19T00:00:00Z, day 1 of the run
DAY = 86400.0
ROOT = Path(__file__).resolve().parents[1]


def _loss(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = T0 + np.arange(n) * 19.0  # a step every ~19 s
    return x, 2.6 - np.log1p(np.arange(n)) / 20 + rng.normal(0, 0.01, n)


def _dumps(spec: dict[str, Any]) -> str:
    return json.dumps(spec, allow_nan=False, separators=(",", ":"))


def _layers(spec: dict[str, Any], mark: str) -> list[dict[str, Any]]:
    found = []
    for layer in spec.get("layer", []):
        kind = layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        if kind == mark:
            found.append(layer)
    return found


def _chart(**kw: Any) -> dict[str, Any]:
    x, y = _loss(5000)
    args: dict[str, Any] = {"title": "Train loss", "y_title": "loss"}
    args.update(kw)
    return line_chart({"train/loss": (x, y)}, **args)


# --- downsampling -------------------------------------------------------------------


def test_downsample_keeps_spikes_and_endpoints_and_caps() -> None:
    n = 100_000
    x = np.arange(n, dtype=float)
    y = np.sin(x / 5000.0)
    y[43_210] = 50.0  # a one-step loss spike
    y[77_777] = -50.0  # and a one-step dip
    dx, dy = downsample_minmax(x, y, 2000)
    assert len(dx) <= 2000
    assert np.all(np.diff(dx) > 0)
    assert dx[0] == 0 and dx[-1] == n - 1
    assert 43_210.0 in dx and 77_777.0 in dx
    assert dy.max() == 50.0 and dy.min() == -50.0
    for target in (2, 3, 4, 10, 501):
        assert len(downsample_minmax(x, y, target)[0]) <= target


def test_downsample_drops_non_finite_values() -> None:
    x = np.array([0.0, 1.0, 2.0, np.nan, 4.0, 5.0, np.inf])
    y = np.array([1.0, np.nan, np.inf, 3.0, -np.inf, 6.0, 7.0])
    dx, dy = downsample_minmax(x, y, 100)
    assert dx.tolist() == [0.0, 5.0]
    assert dy.tolist() == [1.0, 6.0]
    assert downsample_minmax(np.array([1.0]), np.array([np.nan]))[0].size == 0


def test_downsample_sorts_and_keeps_the_last_value_of_a_repeated_x() -> None:
    x = np.array([3.0, 1.0, 2.0, 2.0, 0.0])
    y = np.array([30.0, 10.0, 20.0, 21.0, 0.0])  # step 2 was logged again after a restart
    dx, dy = downsample_minmax(x, y, 100)
    assert dx.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert dy.tolist() == [0.0, 10.0, 21.0, 30.0]

    bx, by = _loss(50_000)
    perm = np.random.default_rng(1).permutation(bx.size)
    sx, sy = downsample_minmax(bx, by, 1000)
    ux, uy = downsample_minmax(bx[perm], by[perm], 1000)
    assert np.array_equal(sx, ux) and np.array_equal(sy, uy)


def test_downsample_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        downsample_minmax(np.arange(3.0), np.arange(4.0))


# --- specs --------------------------------------------------------------------------


def test_spec_is_strict_json_with_bad_values_everywhere() -> None:
    x, y = _loss(1500)  # below the 2,000-point target: every finite point is kept
    y[::7] = np.nan
    y[5] = np.inf
    bx = np.array([x[0], x[100], np.nan])
    spec = line_chart(
        {"train/loss": (x, y)},
        title="Loss",
        y_title="loss",
        events=[Event(float("nan"), "restart", "lost"), Event(x[50], "failure", "OOM")],
        bands={"forecast": (bx, np.array([2.0, np.nan, 2.0]), np.array([3.0, 3.0, 3.0]))},
        rules=[(float("inf"), "never"), (2.0, "alert")],
        target=10_000,
    )
    text = _dumps(spec)  # raises on NaN or inf
    rows = spec["datasets"]["series"]
    assert len(rows) == sum(1 for v in y if np.isfinite(v))
    assert len(spec["datasets"]["bands"]) == 1
    assert "never" not in text and "alert" in text and "OOM" in text


def test_spec_is_deterministic_and_independent_of_input_order() -> None:
    x, y = _loss(20_000)
    perm = np.random.default_rng(3).permutation(x.size)
    kw: dict[str, Any] = {"title": "Loss", "y_title": "loss", "events": [Event(x[9], "fork", "f")]}
    first = _dumps(line_chart({"a": (x, y)}, **kw))
    assert _dumps(line_chart({"a": (x, y)}, **kw)) == first
    assert _dumps(line_chart({"a": (x[perm], y[perm])}, **kw)) == first


def test_time_axis_is_utc_in_epoch_ms() -> None:
    spec = _chart()
    line = _layers(spec, "line")[0]
    assert line["encoding"]["x"]["type"] == "temporal"
    assert line["encoding"]["x"]["scale"] == {"type": "utc"}
    assert spec["datasets"]["series"][0]["x"] == int(T0 * 1000)
    hover = next(lay for lay in spec["layer"] if lay.get("name") == HOVER_LAYER)
    time_tip = next(t for t in hover["encoding"]["tooltip"] if t["field"] == "x")
    assert time_tip["timeUnit"].startswith("utc")


def test_quantitative_axis_keeps_steps_as_integers() -> None:
    steps = np.arange(0, 30_000, 10, dtype=float)
    spec = line_chart(
        {"loss": (steps, np.linspace(3, 2, steps.size))},
        title="Loss by step",
        y_title="loss",
        x_kind="quantitative",
        x_title="step",
    )
    line = _layers(spec, "line")[0]
    assert line["encoding"]["x"]["type"] == "quantitative"
    assert line["encoding"]["x"]["title"] == "step"
    assert all(isinstance(r["x"], int) for r in spec["datasets"]["series"])
    with pytest.raises(ValueError, match="x_kind"):
        line_chart({}, title="t", y_title="y", x_kind="steps")


def test_events_highlight_bands_and_rules_are_layers() -> None:
    x, _ = _loss(5000)
    day = (T0 + DAY / 4, T0 + DAY / 2)
    spec = _chart(
        events=[
            Event(x[10], "restart", "preempted slice"),
            Event(x[20], "config", "lr warmup ends"),
            Event(T0 + 400 * DAY, "phase", "far outside the data"),
        ],
        highlight=day,
        bands={"train/loss": (x[::100], np.full(50, 2.0), np.full(50, 2.2))},
        rules=[(2.5, "loss jump")],
    )
    rect = _layers(spec, "rect")[0]
    assert rect["data"]["values"] == [{"x": int(day[0] * 1000), "x2": int(day[1] * 1000)}]
    event_rule = next(r for r in _layers(spec, "rule") if "stroke" in r["encoding"])
    labels = [v["label"] for v in event_rule["data"]["values"]]
    assert labels == ["preempted slice", "lr warmup ends"]  # the far event is clipped
    assert event_rule["encoding"]["stroke"]["scale"]["domain"] == ["restart", "config"]
    assert {t["field"] for t in event_rule["encoding"]["tooltip"]} >= {"kind", "label"}
    threshold = next(r for r in _layers(spec, "rule") if "y" in r["encoding"])
    assert threshold["mark"]["strokeDash"]
    area = _layers(spec, "area")[0]
    assert area["encoding"]["y2"] == {"field": "hi"}
    # A band named like a series shares its colour scale (one legend entry, one colour).
    assert area["encoding"]["color"]["scale"]["domain"] == ["train/loss"]


def test_spec_is_light_at_100k_points_per_series() -> None:
    one = line_chart({"loss": _loss(100_000)}, title="Loss", y_title="loss")
    assert one["usermeta"]["chronicle"]["series"]["loss"] == {
        "points_in": 100_000,
        "points_out": 2000,
    }
    bx, by = _loss(100_000)
    three = line_chart(
        {f"s{i}": _loss(100_000, seed=i) for i in range(3)},
        title="Loss",
        y_title="loss",
        bands={"forecast": (bx, by - 0.05, by + 0.05)},
    )
    assert len(three["datasets"]["series"]) + len(three["datasets"]["bands"]) <= 2000
    assert len(_dumps(one).encode()) < 150_000
    assert len(_dumps(three).encode()) < 150_000


def test_spec_keeps_colours_neutral_and_background_transparent() -> None:
    spec = _chart(events=[Event(T0 + 60, "gap", "no telemetry")])
    assert spec["background"] == "transparent"
    assert spec["width"] == "container"
    assert "#000" not in _dumps(spec).lower()


def test_log_scale_drops_values_it_cannot_place() -> None:
    x = np.arange(5, dtype=float)
    spec = line_chart(
        {"grad norm": (x, np.array([1.0, 0.0, -2.0, 0.5, 4.0]))},
        title="Grad norm",
        y_title="norm",
        x_kind="quantitative",
        log_y=True,
        rules=[(0.0, "floor"), (2.0, "alert")],
    )
    assert [r["y"] for r in spec["datasets"]["series"]] == [1, 0.5, 4]
    assert _layers(spec, "line")[0]["encoding"]["y"]["scale"] == {"type": "log"}
    assert "floor" not in _dumps(spec) and "alert" in _dumps(spec)


@pytest.mark.parametrize(
    "series",
    [{}, {"loss": (np.array([]), np.array([]))}, {"loss": (np.arange(3.0), np.full(3, np.nan))}],
)
def test_empty_series_give_a_no_data_chart(series: dict[str, Any]) -> None:
    spec = line_chart(series, title="Eval loss", y_title="loss", events=[Event(T0, "gap", "g")])
    assert spec["mark"]["type"] == "text"
    assert "no data" in _dumps(spec)
    svg = render_svg(spec)
    assert "no data" in svg and "Eval loss" in svg


# --- static SVG ---------------------------------------------------------------------


def test_render_svg_is_static_white_fixed_width_and_self_contained() -> None:
    spec = _chart(title="Loss & <spikes>", events=[Event(T0 + 3600, "failure", "node lost")])
    before = _dumps(spec)
    svg = render_svg(spec)
    assert svg.startswith("<svg")
    assert "Loss &amp; &lt;spikes&gt;" in svg
    assert 'fill="white"' in svg
    assert f"h{SVG_WIDTH}v260" in svg  # the plot frame: fixed width, requested height
    assert _dumps(spec) == before  # the page spec keeps its container width
    assert "mark-line" in svg and "role-mark" in svg
    assert "mark-symbol role-mark" not in svg  # the invisible hover targets are dropped
    # Only XML namespace names may mention http; nothing is fetched by a reader.
    assert set(re.findall(r"https?://[^\"'\s)]+", svg)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }
    assert "href=" not in svg and "url(http" not in svg and "@import" not in svg
    assert render_svg(spec) == svg


def test_series_names_with_quotes_and_unicode_keep_their_colours() -> None:
    x = np.arange(10.0)
    names = ['eval "paloma" \\ </script>', "perte ü €"]
    spec = line_chart(
        {names[0]: (x, x), names[1]: (x, x + 1)},
        title="Two",
        y_title="y",
        x_kind="quantitative",
    )
    assert "perte" not in _dumps(spec["datasets"])  # rows carry an index, not the name
    svg = render_svg(spec)
    assert "eval &quot;paloma&quot;" in svg or 'eval "paloma"' in svg
    assert "perte ü €" in svg
    lines = svg[svg.index("mark-line role-mark") :]
    strokes = re.findall(r'stroke="(#\w+)"', lines)[:2]
    assert strokes == list(SERIES_COLORS[:2])


def test_render_svg_does_not_depend_on_the_machine_time_zone(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(_dumps(_chart(highlight=(T0 + 3600, T0 + 7200))))
    code = (
        "import json, sys; from chronicle.render.svg import render_svg;"
        "sys.stdout.write(render_svg(json.load(open(sys.argv[1]))))"
    )
    outputs = []
    for tz in ("UTC", "Pacific/Auckland"):
        env = {**os.environ, "TZ": tz, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(spec_file)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0].startswith("<svg") and outputs[0] == outputs[1]


# --- offline JS bundle --------------------------------------------------------------


@pytest.fixture(scope="module")
def bundle_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        javascript_bundle()
        yield cache


def test_bundle_is_cached_on_disk_and_defines_vega_embed(
    bundle_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(bundle_cache))
    (cached,) = (bundle_cache / "chronicle").glob("vega-bundle-*.js")
    assert not list((bundle_cache / "chronicle").glob("*.tmp"))
    text = javascript_bundle()
    assert text == cached.read_text(encoding="utf-8")
    assert "window.vegaEmbed" in text or "vegaEmbed" in text
    assert len(text) > 500_000
    # URLs in the bundle are names (namespaces, schema ids, an editor link), none is loaded.
    hosts = set(re.findall(r"https?://([^/\"'\s`)]+)", text))
    assert hosts <= {"www.w3.org", "vega.github.io", "github.com"}
    # A second call reads the file rather than rebuilding: it returns what the file holds.
    cached.write_text(text + "\n// marker: vegaEmbed from cache\n", encoding="utf-8")
    assert javascript_bundle().endswith("// marker: vegaEmbed from cache\n")
    # A damaged cache file (no vegaEmbed) is rebuilt instead of being served.
    cached.write_text("truncated", encoding="utf-8")
    assert javascript_bundle() == text
    assert cached.read_text(encoding="utf-8") == text


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium")
def test_bundle_renders_a_spec_in_a_browser_without_network(
    bundle_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("XDG_CACHE_HOME", str(bundle_cache))
    x, _ = _loss(5000)
    spec = _chart(
        events=[Event(x[100], "restart", "preempted")],
        highlight=(x[10], x[400]),
        bands={"forecast": (x[::50], np.full(100, 2.0), np.full(100, 2.3))},
        rules=[(2.5, "jump")],
    )
    page_html = (
        "<html><body><div id='c' style='width:700px'></div>"
        f"<script>{javascript_bundle()}</script>"
        f"<script>vegaEmbed('#c', {_dumps(spec)}, {{renderer: 'svg'}})"
        ".then(() => document.body.dataset.done = '1')"
        ".catch(e => document.body.dataset.error = String(e));</script></body></html>"
    )
    hovered = datetime.fromtimestamp(spec["datasets"]["series"][-1]["x"] / 1000, tz=UTC)
    when = f"{hovered:%b} {hovered.day}, {hovered:%Y %H:%M}"  # Vega's default, in UTC
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(timezone_id="Pacific/Auckland")  # not UTC on purpose
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_content(page_html)
            page.wait_for_selector("body[data-done], body[data-error]", timeout=20_000)
            assert page.get_attribute("body", "data-error") is None
            assert page.locator("#c svg .mark-line path").count() == 1
            assert page.locator("#c svg .mark-rule line").count() >= 2
            # The invisible hover targets carry the tooltip, with the time in UTC.
            page.locator("#c svg .mark-symbol.role-mark path").last.hover()  # drawn last: on top
            tip = page.locator("#vg-tooltip-element")
            tip.wait_for(state="visible", timeout=5_000)
            assert "time (UTC)" in tip.inner_text()
            assert "train/loss" in tip.inner_text()
            assert when in tip.inner_text()
        finally:
            browser.close()
    assert errors == []
    assert [u for u in requests if not u.startswith(("about:", "data:"))] == []
