"""The charts a sealed day page carries, from the stitched series (render stage, pure).

Four charts: loss and gradient norm over the run so far against tokens processed (the
day shaded, the y axis fitted to the run after its warm-up), throughput and token
dropping over the day against UTC time (downtime shaded). The run-wide Charts page uses
`run_marks` too, so both mark forks, failures, phase changes and downtime alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from chronicle.analysis.series import Series, day_bounds, tokens_at
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render.change_text import change_events
from chronicle.render.charts import Axis, Event, Options, Span, line_chart
from chronicle.render.i18n import N_, Language
from chronicle.render.metrics import alert_rules, axis_for, display, show
from chronicle.render.record_text import failure_text

DAY_CHARTS = ("loss", "throughput", "moe", "grad_norm")
# A sealed day carries four charts forever (spec + SVG, ~100 sealed days in git): the
# run-so-far curves are thinner than the run-wide page's, which keeps ~2,000 points.
DAY_POINTS = 1000
# The first 2% of the token budget is warm-up: loss falls from ~12 to the run's regime,
# and an axis that shows it flattens everything after into a line at the bottom.
WARMUP_FRACTION = 0.02
TOKENS_TITLE = N_("tokens processed")
# A failure's text in a marker's or a span's tooltip (every chart carries the run's marks).
MARK_TEXT = 80
TIME_TITLE = N_("time (UTC)")


def tokens_axis(lang: Language) -> Axis:
    return Axis(lang.gettext(TOKENS_TITLE), "si", lang.gettext("tokens"))


def time_axis(lang: Language) -> Axis:
    return Axis(lang.gettext(TIME_TITLE), time=True)


@dataclass(frozen=True)
class Marks:
    """The run's events (markers) and downtime (spans), in epoch seconds."""

    events: tuple[Event, ...]
    spans: tuple[Span, ...]

    def between(self, start: float, end: float) -> Marks:
        return Marks(tuple(e for e in self.events if start <= e.x < end),
                     tuple(s for s in self.spans if s.x1 > start and s.x0 < end))

    def on_tokens(self, series: Series) -> tuple[Event, ...]:
        """Return the events placed on the tokens axis (downtime has no width there)."""
        xs = tokens_at(series, np.array([e.x for e in self.events], dtype=float))
        return tuple(Event(float(x), e.kind, e.label)
                     for x, e in zip(xs.tolist(), self.events, strict=True) if np.isfinite(x))


def run_marks(series: Series, failures: Sequence[FailureRecord], config: RunConfig,
              lang: Language, changes: Sequence[Mapping[str, Any]] = (),
              end: float = np.inf) -> Marks:
    """Return forks, failures, phase changes and the run's recorded changes (context
    length, data mixture, budget: analysis/changes.py records) as markers and downtime as
    spans, up to `end`, named in `lang`."""
    events = [Event(f.timestamp, "fork", lang.gettext("restart as {run} from step {step}")
                    .format(run=f.run, step=f"{f.step:,}"))
              for f in series.forks if f.timestamp < end]
    spans = []
    last = float(series.timestamp.max()) if len(series) else -np.inf
    for f in failures:
        t = f.start.timestamp()
        if t >= end:
            continue
        what = _cut(failure_text(f, lang), MARK_TEXT)
        if f.kind in ("gap", "fork"):
            # A gap still open lasts as long as its record says it had by then (its
            # `detail.seconds`): drawn from its last row, not a span of no width that the
            # legend would name but no reader could see.
            so_far = (f.detail or {}).get("seconds") if f.end is None else None
            stop = (f.end.timestamp() if f.end else
                    t + float(so_far) if isinstance(so_far, int | float) else max(last, t))
            spans.append(Span(t, min(stop, end), what))
        else:
            events.append(Event(t, "failure", what))
    events += [e for e in _phase_events(series, config, lang) if e.x < end]
    events += change_events(changes, lang, end=end)
    return Marks(tuple(sorted(events, key=lambda e: (e.x, e.kind, e.label))),
                 tuple(sorted(spans, key=lambda s: (s.x0, s.x1))))


def _cut(text: str, limit: int) -> str:
    """Return `text`, or its first words within `limit` characters and an ellipsis.

    Cut at a character count, a failure's text ended mid-number in its tooltip
    ("… (sigma 0.0" for sigma 0.0123); a text without spaces (Chinese) is cut before a
    number it would split, and an aside it would leave open is left out."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    space = head.rfind(" ")
    head = head[:space] if space > limit // 2 else re.sub(r"[\d.,]+$", "", head)
    if head.count("(") > head.count(")"):  # no aside left open
        head = head[:head.rindex("(")]
    return head.rstrip(" ,;:") + "…"


def _phase_events(series: Series, config: RunConfig, lang: Language) -> list[Event]:
    logged = series.finite("total_tokens")
    if logged is None:
        return []
    t, tokens = logged
    order = np.argsort(tokens, kind="stable")
    out = []
    for name, fraction in sorted(config.run.phases.items(), key=lambda kv: kv[1]):
        at = fraction * config.run.token_budget
        if fraction <= 0 or at > tokens.max():
            continue
        when = float(np.interp(at, tokens[order], t[order]))
        out.append(Event(when, "phase", lang.gettext("phase: {name}").format(
            name=lang.said(name))))
    return out


def fitted_domain(values: Sequence[tuple[np.ndarray, np.ndarray]], warmup_end: float,
                  ) -> tuple[tuple[float, float] | None, float | None]:
    """Return (y domain after warm-up, highest value during it) when cutting the warm-up
    reveals the current regime; (None, None) when the whole curve fits or the run is not
    yet twice as long as its warm-up (then the caller uses a log scale)."""
    xs = np.concatenate([x for x, _ in values]) if values else np.empty(0)
    if not xs.size or xs.max() < 2 * warmup_end:
        return None, None
    after = np.concatenate([y[x >= warmup_end] for x, y in values])
    before = np.concatenate([y[x < warmup_end] for x, y in values])
    if after.size < 10 or not before.size:
        return None, None
    lo, hi = float(after.min()), float(after.max())
    peak = float(before.max())
    pad = max((hi - lo) * 0.05, abs(hi) * 1e-3)
    if peak <= hi + 4 * pad:
        return None, None  # the warm-up does not dwarf the run: show everything
    return (lo - pad, hi + pad), peak


def _on_tokens(series: Series, names: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for label, name in names.items():
        xy = series.finite(name)
        if xy is None:
            continue
        tokens = tokens_at(series, xy[0])
        ok = np.isfinite(tokens)
        if ok.any():
            out[label] = (tokens[ok], xy[1][ok])
    return out


def _token_span(so_far: Series, lines: dict[str, tuple[np.ndarray, np.ndarray]],
                highlight: tuple[float, float]) -> tuple[float, float] | None:
    """Return the tokens processed at a time span's ends, clamped to the plotted data;
    None when the span is after the last row (a day without metrics shades nothing)."""
    xs = np.concatenate([xy[0] for xy in lines.values()]) if lines else np.empty(0)
    logged = so_far.finite("total_tokens")
    if not xs.size or logged is None or highlight[0] > float(logged[0].max()):
        return None
    a, b = tokens_at(so_far, np.array(highlight, dtype=float)).tolist()
    return (a if np.isfinite(a) else float(xs.min()), b if np.isfinite(b) else float(xs.max()))


def _latest(name: str, xy: tuple[np.ndarray, np.ndarray] | None, config: RunConfig,
            where: Callable[[float], str], lang: Language) -> str:
    label = display(name, config, lang).label
    if xy is None or not xy[1].size:
        return lang.gettext("no {metric} logged").format(metric=label)
    i = int(np.argmax(xy[0]))
    return lang.gettext("latest {metric} {value}{where}").format(
        metric=label, value=show(name, xy[1][i], config, lang), where=where(xy[0][i]))


def _sentence(texts: Sequence[str], lang: Language) -> str:
    text = lang.gettext("; ").join(texts)
    return text[:1].upper() + text[1:] + lang.gettext(".")


def run_so_far_chart(name: str, extra: dict[str, str], title: str, so_far: Series,
                     marks: Marks, config: RunConfig, highlight: tuple[float, float] | None,
                     points: int, what: str, lang: Language) -> dict:
    """Return a run-so-far chart of metric `name` (+ `extra` metrics, by canonical name)
    against tokens, its words in `lang` (`title` and `what` already are)."""
    _ = lang.gettext
    shown = display(name, config, lang)
    labels = {shown.label: name} | {display(m, config, lang).label: m for m in extra.values()}
    lines = _on_tokens(so_far, labels)
    if not lines and so_far.finite(name) is not None:
        # Tokens were never logged: the same curve against time.
        return _run_so_far_on_time(name, extra, title, so_far, marks, config, highlight, what,
                                   lang)
    smooth = [shown.label] if name in ("loss", "grad_norm") else []
    warm = WARMUP_FRACTION * config.run.token_budget
    domain, peak, log = None, None, False
    if name == "loss" and lines:
        domain, peak = fitted_domain(list(lines.values()), warm)
        ys = np.concatenate([y for _y, y in lines.values()])
        log = domain is None and bool(ys.min() > 0) and ys.max() > 3 * ys.min()
    subtitle = (_("fitted after warm-up (first {tokens} tokens, peak {value})").format(
        tokens=lang.si(warm), value=show(name, peak, config, lang)) if domain and peak else
                _("log scale: the warm-up falls steeply") if log else None)
    day_tokens = _token_span(so_far, lines, highlight) if highlight else None

    def at(x: float) -> str:
        return _(" at {tokens} tokens").format(tokens=lang.si(x))

    texts = [_latest(m, lines.get(display(m, config, lang).label), config, at, lang)
             for m in [name, *extra.values()]]
    description = _("{what}. {latest}").format(what=what, latest=_sentence(texts, lang))
    return line_chart(
        lines, title=title, description=description, x=tokens_axis(lang),
        y=axis_for(name, config, lang, domain=domain, log=log), subtitle=subtitle,
        target=points, lang=lang,
        options=Options(events=marks.on_tokens(so_far), highlight=day_tokens,
                        rules=alert_rules(config, name, lang), smooth=smooth))


def _run_so_far_on_time(name: str, extra: dict[str, str], title: str, so_far: Series,
                        marks: Marks, config: RunConfig, highlight: tuple[float, float] | None,
                        what: str, lang: Language) -> dict:
    _ = lang.gettext
    shown = display(name, config, lang)
    metrics = {shown.label: name} | {display(m, config, lang).label: m for m in extra.values()}
    lines = {label: xy for label, m in metrics.items() if (xy := so_far.finite(m)) is not None}

    def at(t: float) -> str:
        return _(" at {time}").format(time=lang.time(datetime.fromtimestamp(t, tz=UTC)))

    texts = [_latest(m, lines.get(display(m, config, lang).label), config, at, lang)
             for m in [name, *extra.values()]]
    return line_chart(
        # `what` was said for a chart against tokens: this one is against time.
        lines, title=title, description=_("{what}. {latest}").format(
            what=what.replace(_(TOKENS_TITLE), _("time")), latest=_sentence(texts, lang)),
        x=time_axis(lang),
        y=axis_for(name, config, lang), target=DAY_POINTS, lang=lang,
        options=Options(events=marks.events, spans=marks.spans, highlight=highlight,
                        rules=alert_rules(config, name, lang),
                        smooth=[shown.label] if name in ("loss", "grad_norm") else []))


def day_chart(name: str, title: str, today: Series, marks: Marks, config: RunConfig,
              what: str, lang: Language) -> dict:
    """Return a chart of metric `name` over one day against UTC time."""
    _ = lang.gettext
    shown = display(name, config, lang)
    xy = today.finite(name)
    lines = {shown.label: xy} if xy is not None else {}

    def at(t: float) -> str:
        return _(" at {time} UTC").format(time=f"{datetime.fromtimestamp(t, tz=UTC):%H:%M}")

    description = _("{what}. {latest}").format(
        what=what, latest=_sentence([_latest(name, xy, config, at, lang)], lang))
    return line_chart(
        lines, title=title, description=description, x=time_axis(lang),
        y=axis_for(name, config, lang), lang=lang,
        options=Options(events=marks.events, spans=marks.spans,
                        rules=alert_rules(config, name, lang),
                        smooth=[shown.label] if name == "drop_fraction" else [],
                        gap_seconds=config.failures.gap_minutes * 60))


def day_charts(day: date, series: Series, failures: Sequence[FailureRecord],
               config: RunConfig, lang: Language,
               changes: Sequence[Mapping[str, Any]] = ()) -> dict[str, dict]:
    """Return the Vega-Lite specs of one day page in `lang`, keyed by name (see
    DAY_CHARTS); the run's changes are drawn as markers beside forks and failures."""
    _ = lang.gettext
    start, end = day_bounds(day)
    so_far = series.window(-np.inf, end)
    today = series.window(start, end)
    marks = run_marks(so_far, failures, config, lang, changes, end)
    label = lang.date(day)
    return {
        "loss": run_so_far_chart(
            "loss", {"eval loss": "eval_loss"},
            _("Loss, run so far ({date} shaded)").format(date=label), so_far, marks, config,
            (start, end), DAY_POINTS,
            _("Line chart of train and eval loss against tokens processed, from the start "
              "of the run to {date} (shaded)").format(date=label), lang),
        "throughput": day_chart(
            "tokens_per_second", _("Throughput on {date}").format(date=label), today,
            marks.between(start, end), config,
            _("Line chart of compute-step throughput in tokens per second on {date}, UTC, "
              "with downtime shaded").format(date=label), lang),
        "moe": day_chart(
            "drop_fraction", _("MoE token drop fraction on {date}").format(date=label), today,
            marks.between(start, end), config,
            _("Line chart of the fraction of tokens the MoE router dropped on {date}, "
              "UTC").format(date=label), lang),
        "grad_norm": run_so_far_chart(
            "grad_norm", {}, _("Gradient norm, run so far ({date} shaded)").format(date=label),
            so_far, marks, config, (start, end), DAY_POINTS,
            _("Line chart of the gradient norm against tokens processed, from the start of "
              "the run to {date} (shaded)").format(date=label), lang),
    }
