"""A sealed day in another language: its edition, sealed beside the record (render stage,
pure).

The English page and the day JSON are the record. Each other language of the site gets
its own page of the day, rendered by the same template and sentence builders as the
English one, in that language, from the same facts: the day JSON (figures, verdicts, the
records' facts behind each generated sentence, render/record_text.py) and, for the
charts, the data the English charts were drawn from, drawn by the same chart builders.
Nothing is translated from English output; text people wrote (issue threads, failure
records) stays as written. The page is sealed like the record (the snapshot that seals the
day seals both; an edition of a day sealed before it is sealed later by a snapshot of its
own, and says so) and never changes: it names the record it renders, with its sha256.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from markupsafe import Markup

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.render import render
from chronicle.render.day import chart_files, render_day_markdown
from chronicle.render.i18n import Language

# From an edition's day page (<lang>/days/<date>.html) to the English record's root.
RECORD_ROOT = "../../"
EDITION_META = "edition"  # the front matter key an edition's page says what it is under


def record_url(path: str) -> str:
    """Return the English record's `path` (relative to the site root) from an edition's day
    page: two folders up."""
    return RECORD_ROOT + path


def edition_folder(date: str, code: str) -> str:
    """Return where `date`'s edition in language `code` is sealed, relative to docs/:
    days/<code>/<date> (its page is that path plus .md, its charts in that folder)."""
    return f"days/{code}/{date}"


def edition_day_page(day: DaySummary, charts: Mapping[str, Mapping[str, Any]],
                     config: RunConfig, record: Mapping[str, Any], lang: Language,
                     pngs: Collection[str] = ()) -> str:
    """Return the sealed page of `day` in `lang`: a note naming the record it renders,
    then the page itself.

    `charts` are the day's charts drawn in `lang`; `record` names the English record
    (`snapshot` that sealed it, `sha256` of its page) and, for an edition sealed after the
    day, the snapshot that seals it (`sealed_later`). The front matter says which words
    rendered it (`lang.fingerprint`), so `verify --recompute` compares its bytes only
    under the same ones.
    """
    date = day["date"]
    later = record.get("sealed_later")
    note = render("edition_note.md.j2", lang, date=date, date_text=lang.date(date),
                  snapshot=record["snapshot"], sha256=record["sha256"],
                  sealed_at=lang.time(day["sealed_at"]), later=later,
                  page=record_url(f"days/{date}.html"),
                  source=record_url(f"days/{date}.md"),
                  json=record_url(f"api/days/{date}.json"))
    meta = {EDITION_META: {"language": lang.code, "record": {
        "snapshot": record["snapshot"], "sha256": record["sha256"]},
        "sealed_later": later, "words": lang.fingerprint}}
    # The note goes under the title: a reader sees first which record this page renders.
    return render_day_markdown(day, charts, config, lang, pngs, record=RECORD_ROOT,
                               note=Markup(note), extra_meta=meta)


def edition_day_files(day: DaySummary, charts: dict[str, dict[str, Any]],
                      svgs: Mapping[str, str], config: RunConfig,
                      record: Mapping[str, Any], lang: Language,
                      pngs: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """Return the sealed files of `day`'s edition in `lang` (path relative to docs/): its
    page, and its charts' specs, SVGs and feed PNG (render/day.py `chart_files`)."""
    folder = edition_folder(day["date"], lang.code)
    pngs = pngs or {}
    files = {f"{folder}.md": edition_day_page(day, charts, config, record, lang,
                                              set(pngs)).encode()}
    files.update(chart_files(folder, charts, svgs, pngs))
    return files
