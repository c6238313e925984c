"""Charts: downsampling, spec shape and strictness, the field's conventions (spans, markers,
SI axes, smoothing, one legend), static SVG and PNG, offline JS bundle."""

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
    Axis,
    Event,
    Options,
    Span,
    downsample_minmax,
    line_chart,
)
from chronicle.render.i18n import ENGLISH
from chronicle.render.svg import javascript_bundle, render_png, render_svg, static_spec
from chronicle.render.vega import ema, fit_label
from tests.support.browser import CHROMIUM, chromium
from tests.support.specs import rows

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


TIME = Axis("time (UTC)", time=True)
LOSS = Axis("loss")


def chart(series: dict[str, Any], title: str = "Train loss", x: Axis = TIME, y: Axis = LOSS,
          target: int = 2000, **opts: Any) -> dict[str, Any]:
    return line_chart(series, title=title, description=f"{title}: what it shows.", x=x, y=y,
                      lang=ENGLISH,
                      options=Options(**opts), target=target)


def _chart(title: str = "Train loss", **opts: Any) -> dict[str, Any]:
    return chart({"train/loss": _loss(5000)}, title=title, **opts)


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
    spec = chart(
        {"train/loss": (x, y)}, title="Loss", target=10_000,
        events=[Event(float("nan"), "restart", "lost"), Event(x[50], "failure", "OOM")],
        bands={"forecast": (bx, np.array([2.0, np.nan, 2.0]), np.array([3.0, 3.0, 3.0]))},
        rules=[(float("inf"), "never"), (2.0, "alert")],
    )
    text = _dumps(spec)  # raises on NaN or inf
    rows = spec["datasets"]["series"]
    assert len(rows) == sum(1 for v in y if np.isfinite(v))
    assert len(spec["datasets"]["bands"]) == 1
    assert "never" not in text and "alert" in text and "OOM" in text


def test_spec_is_deterministic_and_independent_of_input_order() -> None:
    x, y = _loss(20_000)
    perm = np.random.default_rng(3).permutation(x.size)
    kw: dict[str, Any] = {"events": [Event(x[9], "fork", "f")], "smooth": ["a"]}
    first = _dumps(chart({"a": (x, y)}, **kw))
    assert _dumps(chart({"a": (x, y)}, **kw)) == first
    assert _dumps(chart({"a": (x[perm], y[perm])}, **kw)) == first


def test_every_spec_says_what_it_shows_and_fills_its_column() -> None:
    spec = _chart()
    assert spec["description"] == "Train loss: what it shows."
    assert spec["width"] == "container"
    assert spec["autosize"] == {"type": "fit-x", "contains": "padding"}
    empty = chart({}, title="Eval loss")
    assert empty["description"] and empty["mark"]["type"] == "text"


def test_time_axis_is_utc_in_epoch_ms_with_a_24_hour_clock() -> None:
    spec = _chart()
    line = _layers(spec, "line")[0]
    assert line["encoding"]["x"]["type"] == "temporal"
    assert line["encoding"]["x"]["scale"] == {"type": "utc"}
    assert line["encoding"]["x"]["axis"]["format"] == "%H:%M"  # ~1 day of data
    assert spec["datasets"]["series"][0]["x"] == int(T0 * 1000)
    hover = next(lay for lay in spec["layer"] if lay.get("name") == HOVER_LAYER)
    time_tip = next(t for t in hover["encoding"]["tooltip"] if t["field"] == "x")
    assert time_tip["timeUnit"].startswith("utc")


def test_axes_and_tooltips_use_si_prefixes() -> None:
    tokens = np.linspace(1e9, 3.69e12, 500)
    spec = chart({"tok/s": (tokens, np.full(500, 2.5e6))},
                 x=Axis("tokens processed", "si", "tokens"), y=Axis("tokens/s", "si", "tok/s"))
    line = _layers(spec, "line")[0]
    for axis in (line["encoding"]["x"]["axis"], line["encoding"]["y"]["axis"]):
        assert "'.3~s'" in axis["labelExpr"] and "'G', 'B'" in axis["labelExpr"]
    hover = next(lay for lay in spec["layer"] if lay.get("name") == HOVER_LAYER)
    calcs = [t["calculate"] for t in hover["transform"] if "calculate" in t]
    assert any("tok/s" in c and "'.3~s'" in c for c in calcs)
    svg = render_svg(spec)
    assert ">2.5M<" in svg and ">3T<" in svg and "2,500,000" not in svg


def test_quantitative_axis_keeps_steps_as_integers() -> None:
    steps = np.arange(0, 30_000, 10, dtype=float)
    spec = chart({"loss": (steps, np.linspace(3, 2, steps.size))}, x=Axis("step"))
    line = _layers(spec, "line")[0]
    assert line["encoding"]["x"]["type"] == "quantitative"
    assert line["encoding"]["x"]["axis"]["title"] == "step"
    assert all(isinstance(r["x"], int) for r in spec["datasets"]["series"])


def test_downtime_is_one_span_layer_not_one_rule_per_gap() -> None:
    x, _ = _loss(5000)
    gaps = [Span(x[i], x[i] + 900) for i in range(100, 4000, 100)]
    gaps.append(Span(x[150], x[150] + 3600))  # overlaps two others: merged into one
    spec = _chart(spans=gaps, gap_seconds=600)
    rects = _layers(spec, "rect")
    assert len(rects) == 1
    shaded = rows(spec, rects[0])
    assert len(shaded) < len(gaps) and all(r["k"] == "downtime" for r in shaded)
    assert not [r for r in _layers(spec, "rule") if "downtime" in _dumps(r)]


def test_lines_break_across_downtime() -> None:
    x, y = _loss(400)
    x = np.concatenate([x[:200], x[200:] + 3 * 3600])  # three hours without a row
    spec = chart({"loss": (x, y)}, gap_seconds=600)
    nulls = [r for r in spec["datasets"]["series"] if r["y"] is None]
    assert len(nulls) == 1
    line = _layers(spec, "line")[0]
    assert line["mark"]["invalid"] == "break-paths-show-domains"


def test_a_long_run_downsampled_breaks_only_where_logging_stopped() -> None:
    # 40 days of a row every 19 s drawn with ~1,000 points: the rows drawn are ~1 h apart,
    # far more than the 10 minutes that mark a stop. Breaking wherever drawn rows were that
    # far apart cut the line after every pair of rows (the Charts page's throughput drew
    # scattered ticks); only the one real stop breaks it, the raw line and the smoothed one.
    n = int(40 * DAY / 19)
    x = T0 + np.arange(n) * 19.0
    x[n // 2:] += 3 * 3600  # three hours without a row
    y = 2.5e6 + np.sin(np.arange(n) / 300.0) * 1e5
    spec = chart({"tok/s": (x, y)}, gap_seconds=600, smooth=["tok/s"])
    series = spec["datasets"]["series"]
    for i in (0, 1):  # the raw line, then its smoothed line
        line = [r for r in series if r["i"] == i]
        nulls = [k for k, r in enumerate(line) if r["y"] is None]
        assert len(nulls) == 1, (i, len(nulls))
        before, after = line[nulls[0] - 1]["x"] / 1000, line[nulls[0] + 1]["x"] / 1000
        assert before <= x[n // 2 - 1] and after >= x[n // 2]
        assert len(line) > 400


def test_a_daily_figure_is_a_line_broken_only_where_a_day_is_missing() -> None:
    # One row a day (the sustained throughput, at noon): its cadence is a day, so rows a day
    # apart are one line, and a missing day breaks it.
    noon = T0 + DAY / 2 + np.arange(20) * DAY
    noon = np.delete(noon, 12)
    spec = chart({"sustained": (noon, np.full(noon.size, 2.2e6))}, gap_seconds=600)
    line = spec["datasets"]["series"]
    assert [r["x"] / 1000 for r in line if r["y"] is None] == [(noon[11] + noon[12]) / 2]
    assert sum(r["y"] is not None for r in line) == noon.size


def test_markers_and_spans_share_one_legend_with_the_series() -> None:
    x, _ = _loss(5000)
    day = (T0 + DAY / 4, T0 + DAY / 2)
    spec = _chart(
        events=[
            Event(x[10], "fork", "restart as run-b"),
            Event(x[20], "sequence_length", "context 4,096 → 16,384"),
            Event(x[30], "brand_new_kind", "drawn anyway"),
            Event(T0 + 400 * DAY, "phase", "far outside the data"),
        ],
        highlight=day, spans=[Span(x[40], x[45])],
        bands={"train/loss": (x[::100], np.full(50, 2.0), np.full(50, 2.2))},
        rules=[(2.5, "alert 2.5")],
    )
    colors = [lay["encoding"]["color"] for lay in spec["layer"] if "color" in lay["encoding"]]
    legends = [c["legend"] for c in colors if c.get("legend")]
    assert all(c["scale"] == colors[0]["scale"] for c in colors)  # one scale: one legend
    domain = colors[0]["scale"]["domain"]
    assert domain[:1] == ["train/loss"]
    assert {"this day", "downtime", "fork", "context length change",
            "brand new kind"} <= set(domain)
    assert "phase change" not in domain  # the far event is clipped, and not in the legend
    assert legends and legends[0]["orient"] == "top"
    event_rule = next(r for r in _layers(spec, "rule") if "color" in r["encoding"])
    labels = [v["what"] for v in rows(spec, event_rule)]
    assert labels == ["restart as run-b", "context 4,096 → 16,384", "drawn anyway"]
    tags = next(lay for lay in _layers(spec, "text") if "tag" in str(lay["encoding"]))
    assert [v["tag"] for v in rows(spec, tags)] == ["context 4,096 → 16,384",
                                                          "drawn anyway"]
    # Named in the text colour (7:1 on white), not the kind's mid-tone (under 4.5:1).
    assert tags["mark"]["color"] == "#595959" and "color" not in tags["encoding"]
    threshold = next(r for r in _layers(spec, "rule") if "y" in r["encoding"])
    assert threshold["mark"]["strokeDash"]


def test_markers_and_alert_lines_are_drawn_under_the_data_and_their_names_over_it() -> None:
    # A failure's rule stands at the step the gradient norm spiked: drawn over the line,
    # it hid the spike. Rules go under the lines, the names written on the chart over them.
    x, y = _loss(5000)
    y[2500] = 3.4
    spec = chart({"grad norm": (x, y)}, smooth=["grad norm"], rules=[(2.0, "alert 2.0")],
                 events=[Event(x[2500], "failure", "grad norm spike"),
                         Event(x[100], "phase", "mid-training")])
    kinds = [(lay["mark"]["type"], lay["data"]["name"]) for lay in spec["layer"]]
    first_line = kinds.index(("line", "series"))
    assert kinds.index(("rule", "events")) < first_line
    assert kinds.index(("rule", "alerts")) < first_line
    assert [name for kind, name in kinds if kind == "text"]  # the names are written...
    assert all(kinds.index(k) > first_line for k in kinds if k[0] == "text")  # ...on top
    raw = _layers(spec, "line")[0]["encoding"]["opacity"]
    assert raw["condition"]["value"] >= 0.5  # the raw data reads under its smoothed line


def test_a_long_marker_name_is_cut_in_the_spec_and_whole_in_its_tooltip() -> None:
    x, _ = _loss(5000)
    long = "budget 18.000T tokens → 17.820T tokens (a reviewed change)"
    spec = _chart(events=[Event(x[10], "sequence_length", "context 4,096 → 16,384"),
                          Event(x[20], "budget", long)])
    tags = next(lay for lay in _layers(spec, "text") if "tag" in str(lay["encoding"]))
    cut = [v["tag"] for v in rows(spec, tags)]
    assert cut[0] == "context 4,096 → 16,384"  # fits: kept whole
    assert cut[1].endswith("…") and long.startswith(cut[1][:-1]) and len(cut[1]) < 30
    assert "limit" not in tags["mark"]  # cut here, so Vega measures nothing to cut it
    # On a phone-wide chart the names would overwrite each other: they are hidden there.
    def name_shown(svg: str) -> bool:
        # The name and its outline (drawn first): both shown, or both hidden.
        outline, element = re.findall(r"<text[^>]*>context 4,096 → 16,384</text>", svg)
        hidden = [re.search(r'\sopacity="0"', e) is not None for e in (outline, element)]
        assert hidden[0] == hidden[1]
        return not hidden[1]

    assert name_shown(render_svg(spec)) and not name_shown(render_svg({**spec, "width": 300}))
    rule = next(r for r in _layers(spec, "rule") if "color" in r["encoding"])
    assert [v["what"] for v in rows(spec, rule)][1] == long


def test_names_on_a_chart_are_outlined_so_no_rule_or_line_strikes_them_through() -> None:
    # Two markers 40 px apart: the second one's rule runs through the first one's name.
    x, _ = _loss(5000)
    spec = _chart(events=[Event(x[100], "mixture", "mixture stage 0 → 1"),
                          Event(x[140], "fork", "fork")], rules=[(2.3, "alert 2.3")])
    svg = render_svg(spec)
    for name in ("mixture stage 0 → 1", "alert 2.3"):
        outline, text = re.findall(rf"<text[^>]*>{name}</text>", svg)
        # The outline first (so the name is drawn over it), in the background colour,
        # without a fill of its own and hidden from screen readers; the name plain.
        assert 'stroke="#ffffff"' in outline and 'stroke-width="4"' in outline
        assert 'fill-opacity="0"' in outline and 'aria-hidden="true"' in svg
        assert "stroke=" not in text and 'fill="#595959"' in text
        assert svg.index(outline) < svg.index(text)


@pytest.mark.parametrize(("rising", "level", "below"),
                         [(False, 2.3, False), (True, 2.0, True), (False, 2.0, False)])
def test_an_alert_name_is_written_on_the_side_of_its_line_the_data_leaves_free(
        rising: bool, level: float, below: bool) -> None:
    # A loss falling from 2.6 to ~2.17 has its last quarter under a line at 2.3: the name
    # goes above. A metric rising from 1 to 3 has its last quarter over a line at 2.0: the
    # name goes below. A line under all the data is the chart's floor, with the axis
    # under it: its name goes above, whatever the data does.
    x, y = _loss(5000)
    if rising:
        y = np.linspace(1.0, 3.0, x.size)
    spec = chart({"metric": (x, y)}, rules=[(level, "alert")])
    [name] = [lay for lay in _layers(spec, "text") if "fillOpacity" not in lay["mark"]]
    assert name["mark"]["baseline"] == ("top" if below else "bottom")
    assert (name["mark"]["dy"] > 0) is below


def test_fit_label_measures_wide_and_narrow_letters() -> None:
    assert fit_label("i" * 30, 130, 10) == "i" * 30  # narrow letters fit
    assert fit_label("W" * 30, 130, 10).endswith("…")
    assert fit_label("W" * 30, 130, 10) != fit_label("a" * 30, 130, 10)
    assert fit_label("", 130, 10) == ""


def test_a_static_chart_over_the_whole_run_has_a_few_axis_labels() -> None:
    # 18T tokens on a 720 px SVG: Vega alone labels every 1T (17 labels, unreadable
    # when a phone shrinks the image); the axes ask for about 8 across and 6 up.
    tokens = np.linspace(4.6e7, 17.8e12, 600)
    spec = chart({"grad norm": (tokens, 0.3 + 0.05 * np.sin(tokens / 1e12))},
                 x=Axis("tokens processed", "si", "tokens"), y=Axis("gradient norm"))
    svg = render_svg(spec)
    x_labels = re.findall(r">(\d+(?:\.\d+)?T)</text>", svg)
    assert 4 <= len(x_labels) <= 9, x_labels


def test_smoothing_draws_an_ema_over_the_raw_data() -> None:
    spec = _chart(smooth=["train/loss"])
    lines = _layers(spec, "line")
    assert len(lines) == 2  # raw (faint while smoothing is on) and the EMA
    assert spec["params"][0]["bind"]["input"] == "checkbox"
    names = json.loads(lines[0]["transform"][0]["calculate"].split("[datum.i]")[0])
    assert names == ["train/loss", "train/loss (smoothed)"]
    scale = lines[0]["encoding"]["color"]["scale"]
    assert scale["range"][0] == scale["range"][1]  # the EMA keeps its series' colour
    assert lines[0]["encoding"]["color"]["legend"] is None  # one series: no legend
    raw = [r for r in spec["datasets"]["series"] if r["i"] == 0]
    smooth = [r for r in spec["datasets"]["series"] if r["i"] == 1]
    assert raw and smooth
    assert np.std(np.diff([r["y"] for r in smooth])) < np.std(np.diff([r["y"] for r in raw]))


def test_ema_is_debiased_like_wandb() -> None:
    y = np.array([1.0, 1.0, 1.0, 5.0])
    out = ema(np.arange(4.0), y, 0.5)
    assert out[0] == 1.0  # no pull towards zero at the start
    assert out[-1] == pytest.approx((0.5 * 5 + 0.25 + 0.125 + 0.0625) / (1 - 0.0625))
    with pytest.raises(ValueError, match="smoothing"):
        ema(np.arange(4.0), y, 1.0)


def test_a_fitted_domain_draws_nothing_outside_it() -> None:
    x, y = _loss(2000)
    spec = chart({"loss": (x, y)}, y=Axis("loss", domain=(2.2, 2.4)),
                 rules=[(2.3, "inside"), (5.0, "outside")])
    line = _layers(spec, "line")[0]
    assert line["encoding"]["y"]["scale"]["domain"] == [2.2, 2.4]
    ys = [r["y"] for r in spec["datasets"]["series"]]
    assert ys and all(2.2 <= v <= 2.4 for v in ys)
    assert "inside" in _dumps(spec) and "outside" not in _dumps(spec)
    # No clip paths: vl-convert numbers them per process, so the SVG would not be stable.
    assert "clip" not in _dumps(spec) and render_svg(spec) == render_svg(spec)


def test_spec_is_light_at_100k_points_per_series() -> None:
    one = chart({"loss": _loss(100_000)}, title="Loss")
    assert one["usermeta"]["chronicle"]["series"]["loss"] == {
        "points_in": 100_000,
        "points_out": 2000,
    }
    bx, by = _loss(100_000)
    three = chart({f"s{i}": _loss(100_000, seed=i) for i in range(3)}, title="Loss",
                  bands={"forecast": (bx, by - 0.05, by + 0.05)})
    assert len(three["datasets"]["series"]) + len(three["datasets"]["bands"]) <= 2000
    assert len(_dumps(one).encode()) < 150_000
    assert len(_dumps(three).encode()) < 150_000


def test_spec_keeps_colours_neutral_and_background_transparent() -> None:
    spec = _chart(events=[Event(T0 + 60, "gap", "no telemetry")])
    assert spec["background"] == "transparent"
    assert "#000" not in _dumps(spec).lower()


def test_log_scale_drops_values_it_cannot_place() -> None:
    x = np.arange(5, dtype=float)
    spec = chart({"grad norm": (x, np.array([1.0, 0.0, -2.0, 0.5, 4.0]))}, title="Grad norm",
                 x=Axis("step"), y=Axis("norm", log=True), rules=[(0.0, "floor"), (2.0, "alert")])
    assert [r["y"] for r in spec["datasets"]["series"]] == [1, 0.5, 4]
    assert _layers(spec, "line")[0]["encoding"]["y"]["scale"] == {"type": "log"}
    assert "floor" not in _dumps(spec) and "alert" in _dumps(spec)


@pytest.mark.parametrize(
    "series",
    [{}, {"loss": (np.array([]), np.array([]))}, {"loss": (np.arange(3.0), np.full(3, np.nan))}],
)
def test_empty_series_give_a_no_data_chart(series: dict[str, Any]) -> None:
    spec = chart(series, title="Eval loss", events=[Event(T0, "gap", "g")])
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
    assert f'width="{SVG_WIDTH}"' in svg  # the chart and its axes: a fixed width
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
    spec = chart({names[0]: (x, x), names[1]: (x, x + 1)}, title="Two", x=Axis("step"))
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


def test_bundle_is_cached_on_disk_signed_and_defines_vega_embed(
    bundle_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chronicle.cachekey import cache_secret, sign
    from chronicle.render.svg import BUNDLE_KIND

    monkeypatch.setenv("XDG_CACHE_HOME", str(bundle_cache))
    (cached,) = (bundle_cache / "chronicle").glob("vega-bundle-*.signed")
    assert not list((bundle_cache / "chronicle").glob("*.tmp"))
    text = javascript_bundle()
    secret, _ = cache_secret()
    assert secret is not None
    mac, _, body = cached.read_bytes().partition(b"\n")
    assert body.decode("utf-8") == text and mac.decode() == sign(secret, BUNDLE_KIND, body)
    assert "window.vegaEmbed" in text or "vegaEmbed" in text
    assert len(text) > 500_000
    # URLs in the bundle are names (namespaces, schema ids, an editor link), none is loaded.
    hosts = set(re.findall(r"https?://([^/\"'\s`)]+)", text))
    assert hosts <= {"www.w3.org", "vega.github.io", "github.com"}
    # A second call reads the file rather than rebuilding: it returns what the file holds,
    # under this user's signature.
    marked = (text + "\n// marker: vegaEmbed from cache\n").encode()
    cached.write_bytes(sign(secret, BUNDLE_KIND, marked).encode() + b"\n" + marked)
    assert javascript_bundle().endswith("// marker: vegaEmbed from cache\n")
    # A copy changed under its signature (any script: it says vegaEmbed all the same), or
    # one with no signature at all, is made again instead of being served on every page.
    forged = (text + "\nalert('forged vegaEmbed')\n").encode()
    for planted in (mac + b"\n" + forged, forged, b"truncated"):
        cached.write_bytes(planted)
        assert javascript_bundle() == text
        assert cached.read_bytes() == mac + b"\n" + body


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium")
def test_bundle_renders_a_spec_in_a_browser_without_network(
    bundle_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(bundle_cache))
    x, _ = _loss(5000)
    spec = _chart(
        events=[Event(x[100], "restart", "preempted")],
        highlight=(x[10], x[400]),
        bands={"forecast": (x[::50], np.full(100, 2.0), np.full(100, 2.3))},
        rules=[(2.5, "jump")],
        smooth=["train/loss"],
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
    with chromium() as browser:
        page = browser.new_page(timezone_id="Pacific/Auckland")  # not UTC on purpose
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_content(page_html)
        page.wait_for_selector("body[data-done], body[data-error]", timeout=20_000)
        assert page.get_attribute("body", "data-error") is None
        assert page.locator("#c svg .mark-line path").count() == 2  # raw and EMA
        assert page.locator("#c svg .mark-rule line").count() >= 2
        # The invisible hover targets carry the tooltip, with the time in UTC.
        page.locator("#c svg .mark-symbol.role-mark path").last.hover()  # drawn last: on top
        tip = page.locator("#vg-tooltip-element")
        tip.wait_for(state="visible", timeout=5_000)
        assert "time (UTC)" in tip.inner_text()
        assert "train/loss" in tip.inner_text()
        assert when in tip.inner_text()
    assert errors == []
    assert [u for u in requests if not u.startswith(("about:", "data:"))] == []


def _legend_box(svg: str) -> tuple[float, float]:
    m = re.search(r'role-legend".*?d="M0,0h([\d.]+)v([\d.]+)', svg)
    assert m, "no legend"
    return float(m.group(1)), float(m.group(2))


def test_a_legend_wraps_into_rows_of_two_on_a_narrow_chart() -> None:
    # Six entries: rows of four on a wide chart, of two on a phone. The columns are an
    # expression of the chart's width (a live chart's is its column's), so no entry is cut.
    x, _ = _loss(5000)
    spec = _chart(events=[Event(x[10], "fork", "f"), Event(x[20], "failure", "x"),
                          Event(x[30], "mixture", "stage 1"), Event(x[40], "budget", "b")],
                  highlight=(x[100], x[200]))
    [legend] = [e["color"]["legend"] for e in (lay.get("encoding", {}) for lay in spec["layer"])
                if "legend" in e.get("color", {})][:1]
    assert legend["columns"] == {"expr": "width < 560 ? 2 : 4"}
    wide = _legend_box(render_svg(spec))
    spec["usermeta"]["chronicle"]["static_width"] = 360
    narrow = _legend_box(render_svg(spec))
    assert narrow[0] < 300 < wide[0] and narrow[1] > wide[1]


def test_png_for_feed_readers_is_compressed_and_stable() -> None:
    svg = render_svg(_chart())
    png = render_png(svg)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width == SVG_WIDTH
    assert len(png) < 80_000  # vl-convert's own PNG of this chart is ~400 KB
    assert render_png(svg) == png


def test_a_chart_for_a_narrow_box_is_drawn_at_its_own_width() -> None:
    spec = _chart()
    spec["usermeta"]["chronicle"]["static_width"] = 360
    before = _dumps(spec)
    static = static_spec(spec)
    assert static["width"] == 360
    assert static_spec(_chart())["width"] == SVG_WIDTH  # others keep the fixed width
    assert _dumps(spec) == before
    assert 'width="360"' in render_svg(spec)


def test_a_failures_text_on_a_marker_is_cut_between_words_never_inside_a_number() -> None:
    # Cut at 80 characters, a loss spike's tooltip ended "(sigma 0.0" for a sigma of 0.0123.
    from chronicle.analysis.series import Series
    from chronicle.models import FailureRecord
    from chronicle.render.day_charts import MARK_TEXT, run_marks
    from tests.support.config import make_config

    ts = T0 + np.arange(10) * 60.0
    series = Series(step=np.arange(10) * 10, timestamp=ts,
                    run=np.array(["r"] * 10, dtype=object), values={})
    text = ("loss spike to 2 at step 311,960 over a trailing-hour baseline of 1.13 "
            "(sigma 0.0123), 7.1 sigma above it")
    spike = FailureRecord("spike-r-50", "loss_spike", datetime.fromtimestamp(ts[5], tz=UTC),
                          None, text, detail={})
    [marker] = [e for e in run_marks(series, [spike], make_config(), ENGLISH).events
                if e.kind == "failure"]
    assert len(marker.label) <= MARK_TEXT
    assert marker.label == "loss spike to 2 at step 311,960 over a trailing-hour baseline " \
        "of 1.13…"
