"""The Charts page: run-wide curves with forks and failures as marks (render stage, pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.series import Series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render import charts as ch
from chronicle.render import render
from chronicle.render.change_text import change_events
from chronicle.render.day import chart_embed, chart_title
from chronicle.render.day_charts import events_for
from chronicle.render.svg import render_svg


def _sustained(days: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray] | None:
    pts = [(datetime.fromisoformat(d["date"]).replace(tzinfo=UTC).timestamp() + 43200.0,
            d["throughput"]["sustained_tokens_per_second"])
           for d in days if d["throughput"].get("sustained_tokens_per_second") is not None]
    if not pts:
        return None
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts], dtype=float)


def charts_page(config: RunConfig, series: Series, failures: Sequence[FailureRecord],
                days: Sequence[Mapping[str, Any]],
                changes: Sequence[Mapping[str, Any]] = ()) -> dict[str, str | bytes]:
    """Return charts.md and its run-wide chart specs and SVGs (forks, failures and the
    context, mixture and budget changes drawn as markers)."""
    events = sorted(events_for(series, failures) + change_events(changes),
                    key=lambda e: (e.x, e.kind, e.label))
    mfu_note = "MFU in percent of peak accelerator FLOPs"
    wanted: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
        ("loss", {"train loss": series.finite("loss"),
                  "eval loss": series.finite("eval_loss")}, "loss",
         {"note": "Train loss includes the z-loss; eval loss is a held-out macro average. "
                  "They are different statistics: compare each with itself only."}),
        ("tokens", {"tokens processed": series.finite("total_tokens")}, "tokens",
         {"rules": [(config.run.token_budget, "token budget")]}),
        ("throughput", {"compute-step tokens/s": series.finite("tokens_per_second"),
                        "sustained tokens/s (daily)": _sustained(days)}, "tokens/s",
         {"note": "The gap between the compute-step rate and the sustained rate is time lost "
                  "to restarts, checkpoints, data loading and downtime."}),
        ("mfu", {"MFU (%)": series.finite("mfu")}, "MFU (percent)", {"note": mfu_note}),
        ("drop_fraction", {"drop fraction": series.finite("drop_fraction")},
         "fraction of tokens dropped", {"rules": [(0.07, "alert 7%")], "y_format": ".1%"}),
        ("grad_norm", {"grad norm": series.finite("grad_norm")}, "grad norm",
         {"rules": [(2.0, "alert 2.0")]}),
        ("learning_rate", {"learning rate": series.finite("learning_rate")},
         "learning rate", {}),
    ]
    titles = {"loss": "Loss", "tokens": "Tokens processed", "throughput": "Throughput",
              "mfu": "Model FLOPs utilisation", "drop_fraction": "MoE token drop fraction",
              "grad_norm": "Gradient norm", "learning_rate": "Learning rate"}
    out: dict[str, str | bytes] = {}
    listed = []
    for name, data, y_title, extra in wanted:
        data = {k: v for k, v in data.items() if v is not None}
        if not data:
            continue
        note = extra.pop("note", "")
        spec = ch.line_chart(data, title=titles[name], y_title=y_title, events=events, **extra)
        out[f"charts/{name}.vl.json"] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        out[f"charts/{name}.svg"] = render_svg(spec)
        title = chart_title(spec, titles[name])
        listed.append((titles[name], chart_embed(f"charts/{name}.vl.json",
                                                 f"charts/{name}.svg", title), note))
    last_t = float(series.timestamp.max()) if len(series) else None
    out["charts.md"] = render(
        "charts.md.j2", charts=listed,
        data_as_of=datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None)
    return out
