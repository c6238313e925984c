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
from chronicle.render.formats import SI_DIGITS, fmt_si
from chronicle.render.i18n import N_, Language

KIND_TITLES = {
    "config": N_("Config"),
    "sequence_length": N_("Context length"),
    "budget": N_("Token budget"),
    "mixture": N_("Data mixture"),
    "pull_request": N_("Pull request"),
}
# Chart marker kind (render/charts.py EVENT_KINDS) of the changes drawn on charts.
MARKERS = {"sequence_length": "context", "mixture": "mixture", "budget": "budget"}
UNKNOWN = N_("unknown")
MAX_SHOWN = 60  # a config value longer than this is cut in a sentence


def value_text(value: Any, lang: Language, tokens: bool = False) -> str:
    """Return a change's before/after value as text ("unknown" when absent)."""
    if value is None:
        return lang.gettext(UNKNOWN)
    if isinstance(value, Mapping) and "sha256" in value and "summary" in value:
        return f"{value['summary']} (sha256 {str(value['sha256'])[:12]}…)"
    if tokens and isinstance(value, int | float) and not isinstance(value, bool):
        return token_text(value, lang)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def token_text(value: float, lang: Language, digits: int = SI_DIGITS,
               unit: bool = True) -> str:
    """Return a token count the way the site writes one (18T tokens; 18万亿 token)."""
    number = fmt_si(value, zh=lang.zh, digits=digits)
    return number + (" token" if lang.zh else " tokens") if unit else number


def token_pair(before: Any, after: Any, lang: Language, unit: bool = True
               ) -> tuple[str, str]:
    """Return a budget change's two token counts with the site's three significant digits,
    or as many more as it takes to tell them apart (18T → 17.8T, not 18.000T → 17.820T)."""
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, after)):
        return (value_text(before, lang, tokens=True), value_text(after, lang, tokens=True))
    digits = SI_DIGITS
    while digits < 9 and fmt_si(before, zh=lang.zh, digits=digits) == \
            fmt_si(after, zh=lang.zh, digits=digits) and before != after:
        digits += 1
    return token_text(before, lang, digits, unit), token_text(after, lang, digits, unit)


def _where(c: Mapping[str, Any], lang: Language) -> str:
    _ = lang.gettext
    run = c.get("run")
    if c.get("parent"):
        return _(" in W&B run {run} (forked from {parent})").format(run=run, parent=c["parent"])
    return _(" in W&B run {run}").format(run=run) if run else ""


def _sentence(c: Mapping[str, Any], lang: Language) -> tuple[str, str]:
    """Return (what the change is, what follows the step) of a change's sentence."""
    _ = lang.gettext
    kind, where = c["kind"], _where(c, lang)
    before, after = value_text(c["before"], lang), value_text(c["after"], lang)
    if kind == "sequence_length":
        return _("Context length {before} → {after} tokens per sequence{where}").format(
            before=before, after=after, where=where), ""
    if kind == "budget":
        configured = (c.get("detail") or {}).get("configured")
        tail = _("; chronicle.yml says {budget}").format(
            budget=value_text(configured, lang, tokens=True)) if configured else ""
        return _("Implied token budget {before} → {after}{where}").format(
            before=token_pair(c["before"], c["after"], lang)[0],
            after=token_pair(c["before"], c["after"], lang)[1], where=where), tail
    if kind == "mixture":
        moved = (c.get("detail") or {}).get("movers") or []
        top = ", ".join(f"{m['key']} {m['before']:.3f} → {m['after']:.3f}" for m in moved[:3])
        text = _("Data-mixture stage {before} → {after}").format(before=before, after=after)
        return text + (_("; largest moves: {moves}").format(moves=top) if top else ""), ""
    if kind == "pull_request":
        pr = (c.get("detail") or {}).get("pull_request") or {}
        files = pr.get("files") or []
        touched = _(", changing {files}").format(
            files=", ".join(files[:3]) + ("…" if len(files) > 3 else "")) if files else ""
        return _("Pull request {key} merged: {title} (by {author}{touched})").format(
            key=c["key"], title=c["after"], author=pr.get("author", "?"), touched=touched), ""
    return _("Config {key}: {before} → {after}{where}").format(
        key=c["key"], before=before, after=after, where=where), ""


def describe(c: Mapping[str, Any], lang: Language) -> str:
    """Return one sentence saying what a change is (plain text, untrusted parts included)."""
    _ = lang.gettext
    text, tail = _sentence(c, lang)
    step = c.get("step")
    at = _(" at step {step}").format(step=f"{step:,}") if isinstance(step, int) else ""
    frac = c.get("budget_fraction")
    share = _(" ({share} of the budget)").format(share=fmt_pct(frac)) if frac is not None \
        else ""
    return f"{text}{at}{share}{tail}" + _(".")


def marker_label(c: Mapping[str, Any], lang: Language) -> str:
    """Return the short label of a change's chart marker."""
    _ = lang.gettext
    if c["kind"] == "sequence_length":
        return _("context {before} → {after}").format(
            before=value_text(c["before"], lang), after=value_text(c["after"], lang))
    if c["kind"] == "mixture":
        return _("mixture stage {before} → {after}").format(
            before=value_text(c["before"], lang), after=value_text(c["after"], lang))
    # A marker's name is short, or the chart cuts it: "budget 18T → 17.8T".
    before, after = token_pair(c["before"], c["after"], lang, unit=False)
    return _("budget {before} → {after}").format(before=before, after=after)


def change_events(changes: Sequence[Mapping[str, Any]], lang: Language,
                  start: float = -np.inf, end: float = np.inf) -> list[Event]:
    """Return chart markers for the context, mixture and budget changes in [start, end)."""
    out = []
    for c in changes:
        when = parse_time(c.get("time"))
        if c["kind"] in MARKERS and when is not None and start <= when.timestamp() < end:
            out.append(Event(when.timestamp(), MARKERS[c["kind"]], marker_label(c, lang)))
    return out


def change_row(c: Mapping[str, Any], lang: Language) -> dict[str, Any]:
    """Return what a list of changes shows of one: time, kind, sentence, PR link, id."""
    pr = (c.get("detail") or {}).get("pull_request") or {}
    title = KIND_TITLES.get(c["kind"])
    return {"id": c["id"], "time": c.get("time"), "kind": c["kind"],
            "title": lang.gettext(title) if title else c["kind"], "text": describe(c, lang),
            "url": pr.get("url") or ""}


def what_changed(day: Mapping[str, Any], lang: Language) -> list[dict[str, Any]] | None:
    """Return the rows of a day page's "What changed" section (None: sealed before changes
    were tracked, so the page has no such section)."""
    if "changes" not in day:
        return None
    return [change_row(c, lang) for c in day["changes"]]
