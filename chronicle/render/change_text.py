"""How a change of the run reads: one sentence, a chart marker (render stage, pure).

Shared by the Changes page, the changes feed, the "What changed" section of day pages and
the chart markers, so a change is described the same way everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chronicle.models import parse_time
from chronicle.render import fmt_pct
from chronicle.render.charts import Event

KIND_TITLES = {
    "config": "Config",
    "sequence_length": "Context length",
    "budget": "Token budget",
    "mixture": "Data mixture",
    "pull_request": "Pull request",
}
# Chart marker kind (render/charts.py EVENT_KINDS) of the changes drawn on charts.
MARKERS = {"sequence_length": "context", "mixture": "mixture", "budget": "budget"}
UNKNOWN = "unknown"
MAX_SHOWN = 60  # a config value longer than this is cut in a sentence


def value_text(value: Any, tokens: bool = False) -> str:
    """Return a change's before/after value as text ("unknown" when absent)."""
    if value is None:
        return UNKNOWN
    if isinstance(value, Mapping) and "sha256" in value and "summary" in value:
        return f"{value['summary']} (sha256 {str(value['sha256'])[:12]}…)"
    if tokens and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value / 1e12:.3f}T tokens"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def describe(c: Mapping[str, Any]) -> str:
    """Return one sentence saying what a change is (plain text, untrusted parts included)."""
    kind, run = c["kind"], c.get("run")
    tail = ""
    where = f" in W&B run {run}" if run else ""
    if c.get("parent"):
        where = f" in W&B run {run} (forked from {c['parent']})"
    if kind == "sequence_length":
        text = (f"Context length {value_text(c['before'])} → {value_text(c['after'])} "
                f"tokens per sequence{where}")
    elif kind == "budget":
        detail = c.get("detail") or {}
        configured = detail.get("configured")
        tail = f"; chronicle.yml says {value_text(configured, tokens=True)}" if configured \
            else ""
        text = (f"Implied token budget {value_text(c['before'], tokens=True)} → "
                f"{value_text(c['after'], tokens=True)}{where}")
    elif kind == "mixture":
        moved = (c.get("detail") or {}).get("movers") or []
        top = ", ".join(f"{m['key']} {m['before']:.3f} → {m['after']:.3f}" for m in moved[:3])
        text = (f"Data-mixture stage {value_text(c['before'])} → {value_text(c['after'])}"
                + (f"; largest moves: {top}" if top else ""))
    elif kind == "pull_request":
        pr = (c.get("detail") or {}).get("pull_request") or {}
        files = pr.get("files") or []
        touched = f", changing {', '.join(files[:3])}" + ("…" if len(files) > 3 else "") \
            if files else ""
        text = f"Pull request {c['key']} merged: {c['after']} (by {pr.get('author', '?')}{touched})"
    else:
        text = (f"Config {c['key']}: {value_text(c['before'])} → {value_text(c['after'])}"
                f"{where}")
    step = c.get("step")
    at = f" at step {step:,}" if isinstance(step, int) else ""
    frac = c.get("budget_fraction")
    share = f" ({fmt_pct(frac)} of the budget)" if frac is not None else ""
    return f"{text}{at}{share}{tail}."


def marker_label(c: Mapping[str, Any]) -> str:
    """Return the short label of a change's chart marker."""
    if c["kind"] == "sequence_length":
        return f"context {value_text(c['before'])} → {value_text(c['after'])}"
    if c["kind"] == "mixture":
        return f"mixture stage {value_text(c['before'])} → {value_text(c['after'])}"
    return (f"budget {value_text(c['before'], tokens=True)} → "
            f"{value_text(c['after'], tokens=True)}")


def change_events(changes: Sequence[Mapping[str, Any]], start: float = -np.inf,
                  end: float = np.inf) -> list[Event]:
    """Return chart markers for the context, mixture and budget changes in [start, end)."""
    out = []
    for c in changes:
        when = parse_time(c.get("time"))
        if c["kind"] in MARKERS and when is not None and start <= when.timestamp() < end:
            out.append(Event(when.timestamp(), MARKERS[c["kind"]], marker_label(c)))
    return out


def change_row(c: Mapping[str, Any]) -> dict[str, Any]:
    """Return what a list of changes shows of one: time, kind, sentence, PR link, id."""
    pr = (c.get("detail") or {}).get("pull_request") or {}
    return {"id": c["id"], "time": c.get("time"), "kind": c["kind"],
            "title": KIND_TITLES.get(c["kind"], c["kind"]), "text": describe(c),
            "url": pr.get("url") or ""}


def what_changed(day: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Return the rows of a day page's "What changed" section (None: sealed before changes
    were tracked, so the page has no such section)."""
    if "changes" not in day:
        return None
    return [change_row(c) for c in day["changes"]]
