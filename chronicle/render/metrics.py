"""How each canonical metric is shown: its label, unit and number format, and the alert
lines a chart draws for it, read from the configured health checks (render stage, pure).

The one home for metric display: charts, pages and sentences ask here instead of
restating "tokens/s" or a threshold. Alert lines come from `config.watch.health` (the
defaults, overridden by chronicle.yml's `health:`), never from constants in chart code:
a chronicle that sets grad_norm's rule to `max > 3.0` sees "alert 3.0" on its charts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chronicle.config import RunConfig
from chronicle.render.charts import Axis
from chronicle.render.formats import fmt_count, fmt_plain
from chronicle.render.i18n import N_, Language

# Stats whose threshold is a value of the metric itself (a line on its chart); counts,
# gaps, increases and band excesses are not.
VALUE_STATS = ("max", "min", "abs_max", "mean", "last", "p10", "p50", "p90")


@dataclass(frozen=True)
class Display:
    """A metric's label in legends and text, its axis title, format kind and unit."""

    label: str
    axis: str
    kind: str = "number"  # si | fraction | percent | number | sci (render/formats.py)
    unit: str = ""


# Labels and axis titles are msgids: `display` says them in the language asked for.
DISPLAYS: dict[str, Display] = {
    "loss": Display(N_("train loss"), N_("loss")),
    "cross_entropy": Display(N_("train cross-entropy"), N_("loss")),
    "eval_loss": Display(N_("eval loss"), N_("loss")),
    "tokens_per_second": Display(N_("compute-step throughput"), N_("tokens/s"), "si",
                                 N_("tok/s")),
    "total_tokens": Display(N_("tokens processed"), N_("tokens"), "si", N_("tokens")),
    "mfu": Display(N_("MFU"), N_("MFU (% of peak FLOPs)"), "percent"),
    "step_duration": Display(N_("step time"), N_("seconds per step"), "number", "s"),
    "drop_fraction": Display(N_("token drop fraction"), N_("tokens dropped"), "fraction"),
    "grad_norm": Display(N_("grad norm"), N_("gradient norm")),
    "learning_rate": Display(N_("learning rate"), N_("learning rate"), "sci"),
    "run_progress": Display(N_("run progress"), N_("progress"), "fraction"),
    "router_entropy": Display(N_("router entropy"), N_("entropy (nats)"), "number", "nats"),
    "router_bias_max": Display(N_("router bias max"), N_("router bias")),
    "router_bias_min": Display(N_("router bias min"), N_("router bias")),
    "memory_peak_gib": Display(N_("peak memory"), "GiB", "number", "GiB"),
}
BUDGET_FRACTION = Display(N_("fraction of the token budget"), N_("fraction of the token budget"),
                          "fraction")
MFU_FRACTION_AXIS = N_("MFU (fraction of peak FLOPs)")


def display(name: str, config: RunConfig | None, lang: Language) -> Display:
    """Return how metric `name` is shown in `lang` (MFU follows `wandb.mfu_unit`)."""
    shown = DISPLAYS.get(name, Display(name.replace("_", " "), name.replace("_", " ")))
    if name == "mfu" and config is not None and config.wandb.mfu_unit == "fraction":
        shown = replace(shown, axis=MFU_FRACTION_AXIS, kind="fraction")
    if name not in DISPLAYS:
        return shown  # a metric the chronicle named itself: its own words
    def _(text: str) -> str:  # gettext("") is the catalog's header, not a word
        return lang.gettext(text) if text else text

    return replace(shown, label=_(shown.label), axis=_(shown.axis), unit=_(shown.unit))


def axis_for(name: str, config: RunConfig | None, lang: Language,
             domain: tuple[float, float] | None = None, log: bool = False) -> Axis:
    """Return the y axis of metric `name` (title, format, unit)."""
    shown = display(name, config, lang)
    return Axis(shown.axis, shown.kind, shown.unit, domain=domain, log=log)


def show(name: str, value: object, config: RunConfig | None, lang: Language) -> str:
    """Return a value of metric `name` as the site writes it (2.5M tok/s, 3.1%, 1.118)."""
    shown = display(name, config, lang)
    return lang.value(value, shown.kind, shown.unit)


def _names(name: str, config: RunConfig) -> set[str]:
    """Return the names a check may use for metric `name`: canonical and its W&B key."""
    key = config.wandb.metrics.get(name)
    return {name} | ({key} if key else set())


def alert_rules(config: RunConfig, name: str, lang: Language) -> list[tuple[float, str]]:
    """Return the (value, label) alert lines of metric `name` from the configured checks."""
    _ = lang.gettext
    out: list[tuple[float, str]] = []
    names = _names(name, config)
    for check in config.watch.health:
        if check.rule.stat not in VALUE_STATS or not names & set(check.metric):
            continue
        value = check.rule.threshold
        shown = show(name, value, config, lang)
        label = (_("alert {value} ({stat}, {minutes} min)").format(
            value=shown, stat=check.rule.stat, minutes=f"{check.window_minutes:g}")
            if check.window_minutes else _("alert {value}").format(value=shown))
        out.append((value, label))
        if check.rule.stat == "abs_max" and value:
            out.append((-value, _("alert {value}").format(
                value=show(name, -value, config, lang))))
    return sorted(set(out))


def check_value(record: Mapping[str, Any], config: RunConfig, lang: Language) -> str:
    """Return a health check's reading as the site writes its metric (counts, gaps and
    prediction excesses as plain numbers)."""
    value = record.get("value")
    stat = str(record.get("rule") or "").split(" ", 1)[0]
    if stat in ("count", "nan_count"):  # a count of rows or records: a whole number
        return fmt_count(value)
    if stat in ("band_excess", "residual", "increase"):
        return fmt_plain(value)
    if stat == "gap_minutes":  # a length of time, written as every duration is (7 h 40 min)
        return lang.duration(float(value) * 60.0) if isinstance(value, int | float) \
            else lang.value(value, "number")
    metric = (record.get("metric") or [""])[0]
    canonical = next((k for k, key in config.wandb.metrics.items() if key == metric), metric)
    return show(canonical, value, config, lang)
