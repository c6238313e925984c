"""The Charts page: run-wide curves with downtime shaded and forks, failures and phase
changes marked (render stage, pure).

Training curves (loss, gradient norm, learning rate) are drawn against tokens processed,
as the scaling-law papers do; operational ones (tokens, throughput, MFU, token dropping)
against UTC time, where downtime has a width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render import render
from chronicle.render.charts import Options, line_chart
from chronicle.render.day_charts import Marks, run_marks, run_so_far_chart, time_axis
from chronicle.render.embed import publish
from chronicle.render.i18n import N_, Language
from chronicle.render.metrics import alert_rules, axis_for, display, show

RUN_POINTS = 2000
LOSS_NOTE = N_("Train loss includes the z-loss; eval loss is a held-out macro average. "
               "They are different statistics: compare each with itself only.")
THROUGHPUT_NOTE = N_("The gap between the compute-step rate and the sustained rate is time "
                     "lost to restarts, checkpoints, data loading and downtime.")


def _noon(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp() + 43200.0


def daily(days: Sequence[Mapping[str, Any]], section: str, key: str,
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """Return (noon of each day, value) of one day-JSON figure, for the days that have it."""
    pts = [(_noon(d["date"]), d[section][key]) for d in days
           if (d.get(section) or {}).get(key) is not None]
    if not pts:
        return None
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts], dtype=float)


def time_chart(lines: Mapping[str, tuple[np.ndarray, np.ndarray] | None], name: str,
               title: str, what: str, config: RunConfig, marks: Marks, lang: Language,
               smooth: Sequence[str] = (), rules: Sequence[tuple[float, str]] | None = None,
               ) -> dict[str, Any]:
    """Return a run-wide chart of metric `name` against UTC time, downtime shaded."""
    _ = lang.gettext
    present = {k: xy for k, xy in lines.items() if xy is not None}
    latest = []
    for label, (t, y) in present.items():
        i = int(np.argmax(t))
        when = datetime.fromtimestamp(float(t[i]), tz=UTC)
        latest.append(_("{series} {value} at {time}").format(
            series=label, value=show(name, y[i], config, lang), time=lang.time(when)))
    description = _("{what}. {latest}").format(what=what, latest=(
        _("Latest: {values}.").format(values=_("; ").join(latest)) if latest
        else _("No data yet.")))
    return line_chart(
        present, title=title, description=description, x=time_axis(lang),
        y=axis_for(name, config, lang), target=RUN_POINTS, lang=lang,
        options=Options(events=marks.events, spans=marks.spans,
                        rules=alert_rules(config, name, lang) if rules is None else rules,
                        smooth=smooth, gap_seconds=config.failures.gap_minutes * 60))


def charts_page(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
                days: Sequence[Mapping[str, Any]], lang: Language,
                changes: Sequence[Mapping[str, Any]] = ()) -> dict[str, str | bytes]:
    """Return charts.md and its run-wide chart specs and SVGs (forks, failures, phase
    changes and the run's context, mixture and budget changes drawn as markers), in
    `lang`."""
    _ = lang.gettext
    specs = _specs(config, series, failures, days, changes, lang)
    out: dict[str, str | bytes] = {}
    listed = []
    for name, heading, spec, note in specs:
        if "layer" not in spec:  # a "no data" chart: the page lists only what was logged
            continue
        listed.append((heading, publish(out, f"charts/{name}", spec, name),
                       _(note) if note else ""))
    last_t = float(series.timestamp.max()) if len(series) else None
    out["charts.md"] = render(
        "charts.md.j2", lang, charts=listed,
        data_as_of=datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None)
    return out


def _specs(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
           days: Sequence[Mapping[str, Any]], changes: Sequence[Mapping[str, Any]],
           lang: Language) -> list[tuple[str, str, dict[str, Any], str]]:
    """Return (name, heading, spec, note) of every run-wide chart, in `lang`."""
    _ = lang.gettext
    marks = run_marks(series, failures, config, lang, changes)
    budget = config.run.token_budget
    budget_text = show("total_tokens", budget, config, lang)
    drop = display("drop_fraction", config, lang).label
    return [
        ("loss", _("Loss"), run_so_far_chart(
            "loss", {"eval loss": "eval_loss"}, _("Loss against tokens processed"), series,
            marks, config, None, RUN_POINTS,
            _("Line chart of train and eval loss against tokens processed, the whole run"),
            lang), LOSS_NOTE),
        ("tokens", _("Tokens processed"), time_chart(
            {display("total_tokens", config, lang).label: series.finite("total_tokens")},
            "total_tokens", _("Tokens processed against the budget"),
            _("Line chart of the tokens processed over time, with the token budget of "
              "{budget}").format(budget=budget_text), config, marks, lang,
            rules=[(budget, _("budget {value}").format(value=budget_text))]), ""),
        ("throughput", _("Throughput"), time_chart(
            {_("compute-step tokens/s"): series.finite("tokens_per_second"),
             _("sustained tokens/s (daily)"): daily(days, "throughput",
                                                    "sustained_tokens_per_second")},
            "tokens_per_second", _("Throughput"), _("Line chart of the compute-step "
            "throughput and the daily sustained throughput, tokens per second"), config,
            marks, lang), THROUGHPUT_NOTE),
        ("mfu", _("Model FLOPs utilisation"), time_chart(
            {display("mfu", config, lang).label: series.finite("mfu")}, "mfu",
            _("Model FLOPs utilisation"),
            _("Line chart of model FLOPs utilisation over time"), config, marks, lang), ""),
        ("drop_fraction", _("MoE token drop fraction"), time_chart(
            {drop: series.finite("drop_fraction")}, "drop_fraction",
            _("MoE token drop fraction"), _("Line chart of the fraction of tokens the MoE "
            "router dropped over time"), config, marks, lang, smooth=[drop]), ""),
        ("grad_norm", _("Gradient norm"), run_so_far_chart(
            "grad_norm", {}, _("Gradient norm against tokens processed"), series, marks,
            config, None, RUN_POINTS,
            _("Line chart of the gradient norm against tokens processed"), lang), ""),
        ("learning_rate", _("Learning rate"), run_so_far_chart(
            "learning_rate", {}, _("Learning rate against tokens processed"), series, marks,
            config, None, RUN_POINTS,
            _("Line chart of the learning rate against tokens processed"), lang), ""),
    ]
