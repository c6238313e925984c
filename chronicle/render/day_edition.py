"""A sealed day in another language, rendered at build time (render stage, pure).

The sealed English page and its JSON are the record and never change. Another
language's page is rendered by the same template and sentence builders as the sealed
page, in that language, from the same facts: the sealed day JSON (figures, verdicts, the
records' facts behind each generated sentence, render/record_text.py) and, for the
charts, the stored data as of the day's figures (the caller passes the series and
failure records a timely seal saw), drawn by the same chart builders. Nothing is
translated from English output. Text people wrote (issue threads, failure records,
config reasons) stays as written. The page says which sealed entry it renders, with
that entry's sha256, and links it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from markupsafe import Markup

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.render import render
from chronicle.render.day import render_day_markdown
from chronicle.render.i18n import Language

# From a translated day page (<lang>/days/<date>.html) to the English record's root.
RECORD_ROOT = "../../"


def record_url(path: str) -> str:
    """Return the English record's `path` (relative to the site root) from a translated
    day page: two folders up."""
    return RECORD_ROOT + path


def edition_day_page(day: DaySummary, charts: Mapping[str, Mapping[str, Any]],
                     config: RunConfig, entry: Mapping[str, Any], cite: str,
                     next_day: str | None, lang: Language, pngs: Collection[str] = ()) -> str:
    """Return a day page in `lang`: the sealed entry it renders, then the page itself.

    `charts` are the day's charts drawn in `lang`; `entry` names the sealed record
    (snapshot, sha256 of the sealed page); `cite` is the citation block of the record.
    """
    _ = lang.gettext
    note = render("edition_note.md.j2", lang, date=day["date"], date_text=lang.date(day["date"]),
                  snapshot=entry["snapshot"], sha256=entry["sha256"],
                  sealed_at=lang.time(day["sealed_at"]),
                  page=record_url(f"days/{day['date']}.html"),
                  source=record_url(f"days/{day['date']}.md"),
                  json=record_url(f"api/days/{day['date']}.json"))
    # The note goes under the title: a reader sees first which record this page renders.
    page = render_day_markdown(day, charts, config, lang, pngs, record=RECORD_ROOT,
                               note=Markup(note))
    page = page.rstrip("\n") + "\n\n" + cite
    if next_day:
        page = page.rstrip("\n") + "\n\n" + _("[Next day: {date} →]({link})").format(
            date=lang.date(next_day), link=f"{next_day}.md") + "\n"
    return page
