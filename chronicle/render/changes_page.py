"""The Changes page, the changes feed's items and api/changes.json (render stage, pure).

Everything the run changed mid-flight, newest first: config, context length, token
budget, data mixture and the merged pull requests behind them (analysis/changes.py).
Feed items are dated when a snapshot first recorded the change, so a rebuild
re-announces nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from html import escape
from typing import Any

from chronicle.analysis.changes import RunChanges
from chronicle.config import RunConfig
from chronicle.models import parse_time
from chronicle.render import anchor, href, render
from chronicle.render.change_text import KIND_TITLES, change_row, describe
from chronicle.render.feeds import Item
from chronicle.render.i18n import Language

SCHEMA = "chronicle-changes/1"


def changes_page(known: RunChanges, sealed: Mapping[str, int], config: RunConfig,
                 lang: Language, decisions: Sequence[Mapping[str, Any]] = ()) -> str:
    """Return the Changes page: a timeline of every change, newest first, by day.

    `sealed` maps each sealed day (YYYY-MM-DD) to its day number: a change links it;
    `decisions` (the ledger's decision events) mark the changes decided at a risk point.
    """
    _ = lang.gettext
    decided = {link.removeprefix("change:"): d for d in decisions for link in d["links"]}
    days: dict[str, list[dict[str, Any]]] = {}
    for c in reversed(known.changes):
        when = parse_time(c["time"])
        day = when.date().isoformat() if when else _("unknown")
        row = change_row(c, lang)
        row["evidence"] = [e for e in c["evidence"] if e.get("path")]
        row["run"] = c.get("run")
        d = decided.get(c["id"])
        row["decision"] = None if d is None else _(
            "Decided at the risk point “{title}” ({date}).").format(
            title=d["facts"].get("title") or d["facts"]["risk"],
            date=lang.date(d["facts"]["risk_day"]))
        days.setdefault(day, []).append(row)
    counts = Counter(c["kind"] for c in known.changes)
    return render(
        "changes.md.j2", lang, days=list(days.items()), sealed=sealed,
        counts=[(_(KIND_TITLES[k]), counts.get(k, 0)) for k in KIND_TITLES],
        implied=known.implied_budget, configured=config.run.token_budget,
        keys=sorted(config.wandb.config_keys.items()),
        pulls=config.github.pulls, total=len(known.changes))


def change_items(changes: Sequence[Mapping[str, Any]], site_url: str,
                 lang: Language) -> list[Item]:
    """Return one feed item per change, dated when a snapshot first recorded it."""
    _ = lang.gettext
    out = []
    for c in changes:
        recorded = parse_time(c.get("recorded_at")) or parse_time(c.get("time"))
        if recorded is None:
            continue
        row = change_row(c, lang)
        when = parse_time(c.get("time"))
        link = f"{site_url}changes.html#{c['id']}"
        html = f"<p>{escape(row['text'])}</p>"
        if when is not None:
            day = when.date().isoformat()
            html += "<p>" + _("It took effect on {day}; recorded by snapshot {snapshot}.").format(
                day=f'<a href="{site_url}days/{day}.html">{escape(lang.date(day))}</a>',
                snapshot=escape(str(c.get("recorded_by")))) + "</p>"
        if href(row["url"]):
            html += f"<p>{anchor(row['url'], row['url'])}</p>"
        out.append(Item(link, recorded, f"{row['title']}: {_short(c, lang)}", link, html))
    return sorted(out, key=lambda i: (i.published, i.guid))


def _short(c: Mapping[str, Any], lang: Language) -> str:
    text = describe(c, lang)
    return text if len(text) <= 120 else text[:119] + "…"


def changes_json(known: RunChanges, config: RunConfig, sealed: Mapping[str, int]) -> str:
    """Return api/changes.json: every change, the budgets, and each change's day page."""
    known_days = set(sealed)
    changes = []
    for c in known.changes:
        when = parse_time(c["time"])
        day = when.date().isoformat() if when else None
        page = f"{config.site.url}days/{day}.html" if day in known_days else None
        changes.append({**c, "day": day, "day_page": page})
    doc = {
        "schema": SCHEMA, "run": config.run.name,
        "budget": {"configured": config.run.token_budget, "implied": known.implied_budget},
        "sequence_lengths": dict(sorted(known.sequence_lengths.items())),
        "changes": changes,
    }
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def sealed_dates(days: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Return each sealed day's date and day number (what a change may link)."""
    return {date.fromisoformat(d["date"]).isoformat(): int(d["day"]) for d in days}
