"""Text that was written in English once (sealed, or rendered for the English edition)
shown in another language (render stage, pure).

The sealed record is English and never changes; a Chinese page shows it translated at
build time. The catalog is the dictionary: a sealed string is looked up as a msgid, and
every msgid with `{name}` placeholders (`Throughput on {date}`) is also a pattern that
matches the sentences it produced. A `{date}` is re-written the language's way; other
values are kept as written. Text that matches nothing (an issue title, a hand-written
reason) stays as written: user text is never translated.

Charts are translated twice over: the Vega-Lite spec (titles, axis titles, legends,
tooltips, series and event names) and its static SVG (its <text> elements), so the
chart drawn in the browser and the one in a feed reader say the same.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Callable
from typing import Any

from chronicle.models import parse_time
from chronicle.render import fmt_date, fmt_duration, fmt_si, fmt_time, i18n
from chronicle.render.i18n import N_

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# Reformatted values: placeholders whose value is a date or a duration in the English text.
_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?) h|(\d+) min)$")


def _pattern(msgid: str) -> re.Pattern[str] | None:
    parts = _PLACEHOLDER.split(msgid)
    if len(parts) < 3:
        return None
    out = []
    for i, part in enumerate(parts):
        out.append(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)")
    try:
        return re.compile("".join(out) + r"\Z", re.S)
    except re.error:  # a placeholder used twice in one msgid: no pattern
        return None


@functools.lru_cache(maxsize=8)
def _patterns(catalog: Any) -> list[tuple[str, re.Pattern[str], str]]:
    """Return (literal prefix, regex, msgid) for every catalog msgid with placeholders,
    longest first (the prefix is a cheap test before the regex)."""
    ids = [m for m in getattr(catalog, "_catalog", {}) if isinstance(m, str) and "{" in m
           # A pattern needs a word of its own: "{site}: {feed}" would match any "a: b".
           and re.search(r"[A-Za-z]{3,}", _PLACEHOLDER.sub("", m))]
    return [(m.split("{", 1)[0], p, m) for m in sorted(ids, key=len, reverse=True)
            if (p := _pattern(m))]


def _value(name: str, text: str) -> str:
    """Return a value found in English text as the current language writes it: dates,
    durations and SI numbers re-written, words that are msgids translated, the rest kept."""
    if name == "date" or name.endswith("_date"):
        return fmt_date(text)
    if name == "time" and parse_time(text) is not None:
        return fmt_time(text)
    if name == "duration":
        m = _DURATION.match(text)
        if m:
            seconds = float(m.group(1)) * 3600 if m.group(1) else float(m.group(2)) * 60
            return fmt_duration(seconds)
    return si_text(text) or translate_text(text)


# An SI reading as English pages write it: 2.5M, 3.69T tokens, 2.0M tok/s, −300K.
_SI_TEXT = re.compile(r"^([−-]?\d+(?:\.\d+)?)([KMBT])( tok/s| tokens)?$")
_SI_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_SI_UNITS = {" tok/s": N_(" tok/s"), " tokens": N_(" tokens")}


def si_text(text: str) -> str | None:
    """Return an English SI reading (2.5M tok/s) re-written in the current language
    (250万 token/秒), or None when `text` is not one."""
    m = _SI_TEXT.match(text)
    if m is None or i18n.language() == i18n.DEFAULT:
        return None
    value = float(m.group(1).replace("−", "-")) * _SI_SCALE[m.group(2)]
    unit = i18n.gettext(_SI_UNITS[m.group(3)]) if m.group(3) else ""
    return fmt_si(value, unit)


def translate_text(text: str) -> str:
    """Return English generated `text` in the current language (as written if unknown)."""
    if i18n.language() == i18n.DEFAULT or not text:
        return text
    return _translate(i18n.translations(), i18n.language(), text)


@functools.lru_cache(maxsize=65536)
def _translate(catalog: Any, code: str, text: str) -> str:
    # Cached: a run's charts repeat the same event labels on every day's charts. `code`
    # keys the dates' format (the catalog object alone would do; it is explicit).
    found: str = catalog.gettext(text)
    if found != text:
        return found
    for prefix, regex, msgid in _patterns(catalog):
        if not text.startswith(prefix):
            continue
        m = regex.match(text)
        if m is None:
            continue
        target: str = catalog.gettext(msgid)
        if target == msgid:
            continue
        return _fill(target, {k: _value(k, v) for k, v in m.groupdict().items()})
    return text


def _fill(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda g: values.get(g.group(1), g.group(0)), template)


# --- charts ------------------------------------------------------------------------------

# Vega's default time-axis labels ("Sep 02", "Wed 02", "September", "03 PM") in d3's
# zh-CN locale, which the translated specs also carry (`config.locale`) so that the chart
# drawn in the browser matches its static SVG.
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_ZH_MONTHS = ("一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月",
              "十一月", "十二月")
_ZH_DAYS = ("周日", "周一", "周二", "周三", "周四", "周五", "周六")
ZH_LOCALE = {
    "number": {"decimal": ".", "thousands": ",", "grouping": [3], "currency": ["", " 美元"]},
    "time": {"dateTime": "%x %A %X", "date": "%Y年%-m月%-d日", "time": "%H:%M:%S",
             "periods": ["上午", "下午"], "days": ["星期日", "星期一", "星期二", "星期三",
                                                 "星期四", "星期五", "星期六"],
             "shortDays": list(_ZH_DAYS), "months": list(_ZH_MONTHS),
             "shortMonths": list(_ZH_MONTHS)},
}
_TICK = re.compile(r"^(?:(?P<abbr>[A-Z][a-z]{2}) (?P<dd>\d\d)|(?P<month>[A-Z][a-z]+)"
                   r"|(?P<h>\d\d) (?P<ampm>AM|PM))$")


def _tick(text: str) -> str | None:
    m = _TICK.match(text)
    if m is None:
        return None
    months, days = [n[:3] for n in _MONTHS], [n[:3] for n in _DAYS]
    if m["abbr"] in months:
        return f"{_ZH_MONTHS[months.index(m['abbr'])]} {m['dd']}"
    if m["abbr"] in days:
        return f"{_ZH_DAYS[days.index(m['abbr'])]} {m['dd']}"
    if m["month"] in _MONTHS:
        return _ZH_MONTHS[_MONTHS.index(m["month"])]
    if m["ampm"]:
        return f"{m['h']} {'上午' if m['ampm'] == 'AM' else '下午'}"
    return None


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_SKIP_KEYS = frozenset({"datasets", "$schema", "field", "type", "mark", "format", "timeUnit",
                        "as", "scale", "name", "orient", "anchor", "range"})


def _expr(text: str, tr: Callable[[str], str]) -> str:
    """Translate the string literals of a Vega expression (series names: ["a", "b"][i])."""
    def one(m: re.Match[str]) -> str:
        literal = m.group(0)
        if literal.startswith("'"):  # 'this day' in a test: same text, same quotes
            inner = literal[1:-1]
            new = tr(inner)
            return literal if new == inner or "'" in new else f"'{new}'"
        try:
            value = json.loads(literal)
        except ValueError:
            return literal
        return json.dumps(tr(value), ensure_ascii=False)
    return _QUOTED.sub(one, text)


# The SI format of axes and tooltips (render/formats.py vega_si), and the same number
# counted in 万 / 亿 / 万亿 for Chinese (as fmt_zh: 2.5M is 250万).
_VEGA_SI = re.compile(r"replace\(replace\(format\(([^,()]+(?:\([^()]*\))?), '\.3~s'\), 'G', 'B'\), "
                      r"'k', 'K'\)")


def _zh_si(m: re.Match[str]) -> str:
    x = m.group(1)
    return (f"(abs({x}) >= 1e12 ? format({x} / 1e12, '.4~r') + '万亿' : abs({x}) >= 1e8 ? "
            f"format({x} / 1e8, '.4~r') + '亿' : abs({x}) >= 1e4 ? format({x} / 1e4, '.4~r') "
            f"+ '万' : format({x}, '.4~r'))")


def _walk(node: Any, tr: Callable[[str], str], key: str = "") -> Any:
    if isinstance(node, str):
        if key in ("labelExpr", "calculate") and i18n.is_chinese():
            node = _VEGA_SI.sub(_zh_si, node)
        return _expr(node, tr) if key in ("calculate", "expr", "test", "filter", "labelExpr") \
            else tr(node)
    if isinstance(node, list):
        return [_walk(v, tr, key) for v in node]
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k in _SKIP_KEYS and k != "scale":
                out[k] = v
            elif k == "bind" and isinstance(v, dict):  # a control's label
                out[k] = {bk: (tr(bv) if bk == "name" and isinstance(bv, str) else bv)
                          for bk, bv in v.items()}
            elif k == "scale" and isinstance(v, dict):
                # A scale's domain names series and event kinds: translated like the data.
                out[k] = {sk: (_walk(sv, tr, sk) if sk == "domain" else sv)
                          for sk, sv in v.items()}
            else:
                out[k] = _walk(v, tr, k)
        return out
    return node


def localized_alt(description: str, title: str) -> str:
    """Return a chart's text alternative in the current language: its description when
    the catalog knows its shape, else the chart's title ("Chart: Loss, run so far").

    A description reads out the latest values in a sentence built from parts; rather
    than a sentence half in English, a reader gets the title in their language.
    """
    text = translate_text(description)
    if text != description or i18n.language() == i18n.DEFAULT:
        return text
    return i18n.gettext("Chart: {title}").format(title=translate_text(title))


def translate_spec(spec: dict[str, Any], data_url: str | None = None) -> dict[str, Any]:
    """Return `spec` with its words in the current language and d3's locale for its axes.

    With `data_url` (the English spec's URL, relative to the page that draws it) the
    named datasets are read from that file instead of being copied: a translation never
    duplicates the published data.
    """
    out: dict[str, Any] = _walk(spec, translate_text)
    if i18n.is_chinese():
        config = dict(out.get("config") or {})
        config["locale"] = ZH_LOCALE
        out["config"] = config
    if isinstance(spec.get("description"), str):
        title = spec.get("title")
        text = title.get("text") if isinstance(title, dict) else title
        out["description"] = localized_alt(spec["description"], str(text or ""))
    datasets = spec.get("datasets")
    # One dataset is read from the English spec by URL. Vega reads a URL once, so two
    # datasets of one file (a line and its band) would both get the first: those stay.
    if data_url and isinstance(datasets, dict) and len(datasets) == 1:
        out.pop("datasets", None)
        out = _point_data(out, data_url, set(datasets))
    elif isinstance(datasets, dict):
        out["datasets"] = datasets
    return out


def _point_data(node: Any, url: str, names: set[str]) -> Any:
    if isinstance(node, list):
        return [_point_data(v, url, names) for v in node]
    if not isinstance(node, dict):
        return node
    data = node.get("data")
    out = {k: _point_data(v, url, names) for k, v in node.items() if k != "data"}
    if isinstance(data, dict) and data.get("name") in names:
        out["data"] = {"url": url, "format": {"type": "json",
                                              "property": f"datasets.{data['name']}"}}
    elif data is not None:
        out["data"] = data
    return out


_TEXT = re.compile(r"(<text\b[^>]*>)([^<]*)(</text>)")
_TITLE = re.compile(r"(<title>)([^<]*)(</title>)")


def translate_svg(svg: str) -> str:
    """Return a static chart with its <text> in the current language (still SVG text: the
    reader's own fonts draw it; no glyph is baked in at build time)."""
    if i18n.language() == i18n.DEFAULT:
        return svg

    def one(m: re.Match[str]) -> str:
        text = html.unescape(m.group(2))
        new = _tick(text) or si_text(text) or translate_text(text)
        if new == text:
            return m.group(0)
        return f"{m.group(1)}{html.escape(new, quote=False)}{m.group(3)}"

    return _TITLE.sub(one, _TEXT.sub(one, svg))
