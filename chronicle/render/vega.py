"""Vega-Lite building blocks shared by every chart: the spec's frame, colours, marker
styles, axes and tooltips in the site's number formats, downsampling and smoothing
(render stage, pure).

Charts are Altair charts; a spec is Altair's Vega-Lite 6.4 (the release vl-convert and
the site's bundle draw), its data attached as named datasets. Colours stay mid-tone and
the background transparent: the page applies its light or dark vega-embed theme at
display time; only the static SVG paints a white background. Same inputs, same JSON bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, ParamSpec, TypeVar

import altair as alt
import numpy as np
from altair.utils.schemapi import debug_mode

from chronicle.render.formats import vega_format
from chronicle.render.i18n import N_, Language

P = ParamSpec("P")
R = TypeVar("R")
VEGA_LITE: Final = "6.4"
SCHEMA: Final = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
SVG_WIDTH: Final = 720
# Below this width a legend wraps into rows of two: the legend's `columns` is an
# expression of the chart's width, so a live chart in a phone's column (width
# "container") and a static SVG drawn narrow both wrap, and no entry is cut off.
NARROW_WIDTH: Final = 560
Y_DIGITS: Final = 6  # significant digits kept for y: far below a pixel, and it halves a spec
X_DIGITS: Final = 10
HOVER_LAYER: Final = "chronicle-hover"  # invisible tooltip targets; dropped from static renders
NEUTRAL: Final = "#888888"  # rules and strokes (3:1 on white and on slate); never text
# Text drawn on a chart (names of markers, alert lines, risk points): 7:1 on white. In
# dark mode chronicle.js draws the live chart's text marks light instead, and a static
# SVG sits on a white card (chronicle.css): SVG text is not seen by axe, so the tests
# measure it (tests/test_site_accessibility.py).
TEXT: Final = "#595959"
# What a chart is drawn on: white (a static SVG sits on a white card; a live chart's
# background is transparent, and chronicle.js gives a name's outline the colour of what
# the chart sits on, the slate page in dark mode).
BACKGROUND: Final = "#ffffff"
# Mid-tone colours that keep 3:1 against white and against Material's slate background.
SERIES_COLORS: Final = ("#4c78a8", "#2f8f83", "#8a6fbf", "#9d755d", "#607d8b")
# Legend names are msgids: a chart says them in its language (`Language.gettext`).
HIGHLIGHT = (N_("this day"), "#e0b000")
LEGEND_COLUMNS = 4
DOWNTIME = (N_("downtime"), "#9d9d9d")


# kind -> (legend label, colour, labelled on the chart). Kinds from other stages (the
# changes of issue #11: config, sequence_length, mixture, budget, pull_request) are drawn
# as they come; an unknown kind gets a neutral marker and its own name in the legend.
EVENT_STYLES: Final[dict[str, tuple[str, str, bool]]] = {
    "fork": (N_("fork"), "#b05fb5", False),
    "restart": (N_("restart"), "#d62728", False),
    "failure": (N_("failure"), "#e6550d", False),
    "gap": (DOWNTIME[0], DOWNTIME[1], False),
    "phase": (N_("phase change"), "#8c6d31", True),
    "config": (N_("config change"), "#e377c2", True),
    "pull_request": (N_("config change"), "#e377c2", True),
    "sequence_length": (N_("context length change"), "#c49c00", True),
    "context": (N_("context length change"), "#c49c00", True),
    "mixture": (N_("data-mixture switch"), "#7f6b00", True),
    "budget": (N_("budget change"), "#17a2b8", True),
}
# d3's zh-CN locale: a Chinese chart's time axis and numbers (a spec's `config.locale`,
# which vl-convert and vega-embed both apply, so the static SVG and the live chart agree).
ZH_LOCALE: Final[dict[str, Any]] = {
    "number": {"decimal": ".", "thousands": ",", "grouping": [3], "currency": ["", " 美元"]},
    "time": {"dateTime": "%x %A %X", "date": "%Y年%-m月%-d日", "time": "%H:%M:%S",
             "periods": ["上午", "下午"],
             "days": ["星期日", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六"],
             "shortDays": ["周日", "周一", "周二", "周三", "周四", "周五", "周六"],
             "months": ["一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月",
                        "十月", "十一月", "十二月"],
             "shortMonths": ["1月", "2月", "3月", "4月", "5月", "6月", "7月", "8月", "9月",
                             "10月", "11月", "12月"]},
}


def event_style(kind: str) -> tuple[str, str, bool]:
    """Return (legend label, colour, labelled) of an event kind; unknown kinds are neutral."""
    return EVENT_STYLES.get(kind, (kind.replace("_", " "), NEUTRAL, True))


def num(value: float, digits: int = Y_DIGITS) -> float | int:
    """Return `value` rounded to `digits` significant digits (an int when whole)."""
    rounded = float(f"{value:.{digits}g}")
    if rounded.is_integer() and abs(rounded) < 2**53:
        return int(rounded)
    return rounded


def x_value(value: float, time: bool) -> float | int:
    """Return an x position: epoch milliseconds on a time axis (Vega reads numbers as ms)."""
    return round(value * 1000.0) if time else num(value, X_DIGITS)


def downsample_minmax(
    x: np.ndarray, y: np.ndarray, target: int = 2000
) -> tuple[np.ndarray, np.ndarray]:
    """Return at most `target` finite points, x ascending, keeping endpoints and bucket extremes."""
    xs = np.asarray(x, dtype=float).ravel()
    ys = np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x and y differ in length: {xs.size} != {ys.size}")
    if target < 2:
        raise ValueError(f"target must be at least 2, got {target}")
    ok = np.isfinite(xs) & np.isfinite(ys)
    order = np.argsort(xs[ok], kind="stable")
    xs, ys = xs[ok][order], ys[ok][order]
    if xs.size:
        # A restart re-logs steps: for a repeated x the value given last wins (stable sort).
        last = np.ones(xs.size, dtype=bool)
        last[:-1] = xs[1:] != xs[:-1]
        xs, ys = xs[last], ys[last]
    n = xs.size
    if n <= target:
        return xs, ys
    buckets = (target - 2) // 2
    if buckets < 1:
        return xs[[0, -1]], ys[[0, -1]]
    # Buckets split the x range (not the index range) so they match screen columns and a
    # gap in logging stays a gap instead of being stretched over many buckets.
    inner_x, inner_y = xs[1:-1], ys[1:-1]
    span = xs[-1] - xs[0]
    b = np.minimum(((inner_x - xs[0]) / span * buckets).astype(np.int64), buckets - 1)
    by_bucket_then_y = np.lexsort((inner_y, b))
    sorted_b = b[by_bucket_then_y]
    starts = np.flatnonzero(np.r_[True, sorted_b[1:] != sorted_b[:-1]])
    ends = np.r_[starts[1:], sorted_b.size] - 1
    keep = np.unique(np.r_[0, by_bucket_then_y[starts] + 1, by_bucket_then_y[ends] + 1, n - 1])
    return xs[keep], ys[keep]


def thin(n: int, target: int) -> np.ndarray:
    """Return the indices of an even stride of at most `target` of `n` points."""
    if n <= target:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, target).round().astype(np.int64))


def ema(x: np.ndarray, y: np.ndarray, weight: float) -> np.ndarray:
    """Return W&B's debiased exponential moving average of y (x ascending, finite values).

    Each point is weighted by `weight` per point behind it, and the first points are
    divided by the weight mass seen so far, so the curve starts on the data, not at zero.
    """
    if not 0 < weight < 1:
        raise ValueError(f"smoothing weight must be in (0, 1), got {weight}")
    # A recurrence, so a loop; over a list, not numpy items: ~2x faster, the same floats
    # (it runs over the whole run so far for every sealed day's run-so-far charts).
    keep = 1 - weight
    out: list[float] = []
    append = out.append
    acc, mass = 0.0, 0.0
    for value in np.asarray(y, dtype=float).tolist():
        acc = acc * weight + keep * value
        mass = mass * weight + keep
        append(acc / mass)
    return np.array(out, dtype=float)


# Advance widths (em) by class, wider on average than Liberation Sans (the sans-serif a
# static SVG is measured in, chronicle/workers/draw.py: lowercase ~0.5-0.56 em there), so a name
# cut to fit ends a little short of its width rather than past it.
_NARROW, _WIDE = set("fijlrt.,:;'|!()[] "), set("mwMW@%")


def _em(char: str) -> float:
    if char in _NARROW:
        return 0.33
    if char in _WIDE:
        return 0.92
    if char.isdigit() or char.islower():
        return 0.62
    return 0.72 if char.isascii() else 1.0  # capitals; arrows, CJK and the like


def fit_label(text: str, px: float, font_size: float) -> str:
    """Return `text`, cut with an ellipsis to about `px` pixels at `font_size`.

    The same as a text mark's `limit`, decided here: Vega measures each limited label
    exactly, which in vl-convert costs ~25% of drawing a chart with a few labels.
    """
    budget = px / font_size
    if sum(_em(c) for c in text) <= budget:
        return text
    budget -= _em("…")
    out = ""
    for char in text:
        budget -= _em(char)
        if budget < 0:
            break
        out += char
    return out.rstrip() + "…"


def axis(kind: str, title: str | None, lang: Language, unit: str = "",
         **extra: Any) -> alt.Axis:
    """Return a quantitative axis labelled in the site's number format for `kind`."""
    if kind == "fraction":
        extra["format"] = ".2~%"  # 5%, 12.5%: an axis needs no trailing zeros
    elif kind in ("si", "sci"):
        extra["labelExpr"] = vega_format(kind, "datum.value", zh=lang.zh)
    elif kind == "percent":
        extra["labelExpr"] = "format(datum.value, '~r') + '%'"
    return alt.Axis(title=title, **extra)


def time_axis(title: str | None, span_seconds: float, lang: Language) -> alt.Axis:
    """Return a UTC time axis: hours for a day, dates for longer spans (24-hour clock;
    9月15日 in Chinese)."""
    fmt = "%H:%M" if span_seconds <= 2 * 86400 else "%-m月%-d日" if lang.zh else "%b %-d"
    # The scale is UTC, so the format is applied in UTC (formatType "utc" would undo it).
    return alt.Axis(title=title, format=fmt, labelOverlap="greedy", tickCount=8)


def label_calc(kind: str, field: str, lang: Language, unit: str = "",
               as_: str | None = None) -> dict[str, str]:
    """Return {name: expression} for `transform_calculate`: `field` formatted like the
    text (for tooltips)."""
    return {as_ or f"{field}_text": vega_format(kind, f"datum.{field}", unit, zh=lang.zh)}


def color_scale(domain: Sequence[str], colors: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(domain), range=list(colors))


def legend(n_entries: int) -> alt.Legend | None:
    """Return the one legend of a chart (None when a single series explains itself)."""
    if n_entries < 2:
        return None
    # Rows of four (one row when they fit), rows of two on a narrow chart: never a legend
    # wider than the chart (a phone cut "failure" and "phase change" off the loss legend,
    # whose columns were fixed in the spec where the page could not change them).
    wide = LEGEND_COLUMNS if n_entries > LEGEND_COLUMNS else 0
    columns = alt.ExprRef(f"width < {NARROW_WIDTH} ? 2 : {wide}") if n_entries > 2 else \
        alt.Undefined
    return alt.Legend(orient="top", title=None, symbolType="stroke", symbolStrokeWidth=3,
                      symbolOpacity=1, labelLimit=160, columnPadding=12, columns=columns)


def halo(text: alt.Chart, **mark: Any) -> list[alt.Chart]:
    """Return a text layer as two: its words outlined in the background colour, then the
    words. Vega text has no background box, so a name drawn across another marker's rule
    or a data line was struck through by it; the outline interrupts whatever passes
    behind the letters (a map's label halo). The outline draws no fill (`fillOpacity` 0),
    so it is not text a reader or a contrast check sees, and is hidden from screen readers.
    """
    outline = text.mark_text(**mark, stroke=BACKGROUND, strokeWidth=4, strokeJoin="round",
                             fillOpacity=0, aria=False)
    return [outline, text.mark_text(**mark)]


# The prediction's band around zero: a tint, edged by a line in its colour (3.9:1 on
# white, 4.1:1 on slate). The tint alone (1.4:1 on white, 1.5:1 on slate) all but vanished
# on the dark page.
BAND_OPACITY: Final = 0.3


def band_layers(band: alt.Chart, x: alt.X, color: str) -> list[alt.Chart]:
    """Return a band (rows with "lo" and "hi") as its tint and its two edges."""
    return [band.mark_area(opacity=BAND_OPACITY, color=color).encode(
                x=x, y=alt.Y("lo:Q"), y2="hi"),
            band.mark_line(color=color, strokeWidth=1).encode(x=x, y=alt.Y("lo:Q")),
            band.mark_line(color=color, strokeWidth=1).encode(x=x, y=alt.Y("hi:Q"))]


def unchecked(builder: Callable[P, R]) -> Callable[P, R]:
    """Build a chart without Altair's checks at run time.

    By default Altair validates every object it is given against the Vega-Lite schema
    as it is made (its "debug mode"): two thirds of the cost of a day chart. The tests
    validate every spec the site can draw instead (tests/test_charts_schema.py).
    """

    @functools.wraps(builder)
    def build(*args: P.args, **kwargs: P.kwargs) -> R:
        with debug_mode(False):
            return builder(*args, **kwargs)

    return build


class Datasets:
    """A chart's data, by name: layers refer to a dataset by name (`alt.NamedData`) and
    the rows join the spec once, as its top-level `datasets`, after Altair has built it.

    Altair copies and checks inline values row by row (most of a large chart's cost);
    named data costs it nothing, and a dataset two layers share is written once.
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def add(self, name: str, rows: list[dict[str, Any]]) -> alt.NamedData:
        """Return the named data of `rows` (a name is given once per chart)."""
        if name in self.rows:
            raise ValueError(f"dataset {name!r} given twice")
        self.rows[name] = rows
        return alt.NamedData(name=name)


def config(lang: Language) -> alt.Config:
    """Return the chart config every spec shares (d3's locale of `lang`: Chinese dates)."""
    # No per-mark ARIA: the spec's description names the whole chart (the page puts it on
    # the image and the live chart); Vega's own labels read raw numbers point by point.
    return alt.Config(
        aria=False, mark=alt.MarkConfig(aria=False), view=alt.ViewConfig(stroke=None),
        axis=alt.AxisConfig(labelFontSize=11, titleFontSize=11, labelOverlap="greedy",
                            labelSeparation=6),
        title=alt.TitleConfig(fontSize=14, subtitleFontSize=11),
        locale=alt.Locale(**ZH_LOCALE) if lang.zh else alt.Undefined)


def top_level(title: str, description: str, lang: Language, subtitle: str | None = None,
              height: int = 260, width: int | str = "container") -> dict[str, Any]:
    """Return a spec's top-level properties: title (+ subtitle; none when the page heads
    the chart), text alternative, size, background and config."""
    top: dict[str, Any] = {}
    if title:
        top["title"] = alt.Title(text=title, anchor="start", subtitle=subtitle or alt.Undefined)
    return top | {
        "description": description, "width": width, "height": height,
        # The plot and its axes together fill the column (not the plot alone).
        "autosize": alt.AutoSizeParams(type="fit-x", contains="padding"),
        "background": "transparent", "config": config(lang)}


def layered(layers: Sequence[alt.Chart], title: str, description: str, lang: Language,
            subtitle: str | None = None, height: int = 260,
            **extra: Any) -> alt.LayerChart:
    """Return `layers` as one chart with a spec's top level (`top_level`).

    Given to the constructor at once: `.properties()` and each `.configure_*()` validate
    and copy every layer again (for every layer of a day chart). The layers are
    handed over (`_HandedOver`): the caller does not use them again.
    """
    return alt.LayerChart(layer=[_HandedOver(*layer._args, **layer._kwds) for layer in layers],
                          **top_level(title, description, lang, subtitle, height), **extra)


class _HandedOver(alt.Chart):
    """A layer given to `alt.LayerChart`, whose deep copy is a copy of its top level only.

    The constructor deep-copies every layer twice (Altair 6.3: `_remove_duplicate_params`,
    `_combine_subchart_params`), each object with every property its class has, most of
    them Undefined: a third of the time a run-wide page's charts took. What it then changes
    on a copy is the copy's own top level (data, params, name, height, width, view), so a
    copy of the top level keeps the layers as they were given, and the spec is the same
    bytes (tests/test_charts_schema.py builds every chart both ways). Altair calls `__deepcopy__`
    for a schema object that has one (`altair.utils.schemapi._deep_copy`).
    """

    def __deepcopy__(self, memo: Any = None) -> _HandedOver:
        return self.copy(deep=False)


def framed(chart: alt.Chart, title: str, description: str, lang: Language,
           height: int = 260) -> alt.Chart:
    """Return a one-mark chart with a spec's top level (`top_level`)."""
    out = chart.copy(deep=False)
    for key, value in top_level(title, description, lang, height=height).items():
        setattr(out, key, value)
    return out


def to_spec(chart: alt.Chart | alt.LayerChart, data: Datasets | None = None) -> dict[str, Any]:
    """Return the Vega-Lite spec of a framed chart, its datasets attached.

    Not validated here (a third of the cost of a spec); every spec the site can draw is
    validated against the Vega-Lite schema Altair ships, in the tests.
    """
    spec: dict[str, Any] = chart.to_dict(validate=False)
    if data is not None and data.rows:
        spec["datasets"] = data.rows
    return spec


@unchecked
def no_data(title: str, description: str, lang: Language,
            height: int = 260) -> dict[str, Any]:
    """Return a chart that says "no data" (the same frame, so the page keeps its layout)."""
    data = Datasets()
    chart = alt.Chart(data.add("empty", [{"t": lang.gettext("no data")}])).mark_text(
        color=TEXT, fontSize=14).encode(text=alt.Text("t:N"))
    return to_spec(framed(chart, title, description, lang, height), data)
