"""A sealed day shown in another language, rendered at build time (render stage, pure).

The sealed English page and its JSON are the record and never change. A translated day
page is rendered from the sealed JSON with the same template as the sealed page: the
summary is written again from the day's numbers, generated sentences stored in the JSON
(detected failures, verdicts, default health reasons, the title) are translated from the
catalog, and text people wrote (issue threads, failure records, config reasons) stays as
written. It says which sealed entry it renders, with that entry's sha256, and links it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, cast

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.render import fmt_date, fmt_time, render
from chronicle.render.day import render_day_markdown
from chronicle.render.i18n import gettext as _
from chronicle.render.prose import write_summary
from chronicle.render.translate import translate_spec, translate_svg, translate_text


def localized_day(day: DaySummary) -> DaySummary:
    """Return a copy of a sealed day's JSON with its generated text in the current
    language (numbers and people's text unchanged)."""
    out = cast(dict[str, Any], copy.deepcopy(day))
    out["title"] = translate_text(day["title"])
    out["summary"] = write_summary(day)
    for f in out.get("failures") or []:
        f["what"] = translate_text(f["what"])
    for check in (out.get("health") or {}).get("checks") or []:
        check["reason"] = translate_text(check.get("reason") or "")
    verdict = (out.get("prediction") or {}).get("inference")
    if verdict:
        for key in ("statement", "basis", "falsified_by"):
            verdict[key] = translate_text(verdict[key])
    for c in out.get("corrections") or []:
        c["reason"] = translate_text(c.get("reason") or "")
    return cast(DaySummary, out)


def record_url(path: str) -> str:
    """Return the English record's `path` (relative to the site root) from a translated
    day page (<lang>/days/<date>.html): two folders up."""
    return "../../" + path


def translated_charts(date: str, specs: Mapping[str, bytes], svgs: Mapping[str, bytes]
                      ) -> tuple[dict[str, dict[str, Any]], dict[str, str | bytes]]:
    """Return a sealed day's charts translated: (specs by name, files by path).

    A translated spec reads its data from the sealed English spec (no copy of the data);
    its URL is relative to the page that draws it, <lang>/days/<date>.html.
    """
    charts: dict[str, dict[str, Any]] = {}
    files: dict[str, str | bytes] = {}
    for name in sorted(specs):
        english = json.loads(specs[name])
        spec = translate_spec(english, data_url=record_url(f"days/{date}/{name}.vl.json"))
        charts[name] = spec
        files[f"days/{date}/{name}.vl.json"] = json.dumps(
            spec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        if name in svgs:
            files[f"days/{date}/{name}.svg"] = translate_svg(svgs[name].decode("utf-8"))
    return charts, files


def edition_day_page(day: DaySummary, charts: Mapping[str, Mapping[str, Any]],
                     config: RunConfig, entry: Mapping[str, Any], cite: str,
                     next_day: str | None) -> str:
    """Return a translated day page: the sealed entry it renders, then the page itself.

    `entry` names the sealed record (snapshot, sha256 of the sealed page); `cite` is the
    citation block of the record.
    """
    local = localized_day(day)
    # Where each figure comes from and the data files are tables of paths, method ids and
    # sha256s, the same in every language: the translation links the record's own tables
    # instead of repeating them (~40% of a day page's Markdown conversion time).
    cast(dict[str, Any], local).pop("provenance", None)
    body = render_day_markdown(local, charts, config)
    note = render("edition_note.md.j2", date=day["date"], date_text=fmt_date(day["date"]),
                  snapshot=entry["snapshot"], sha256=entry["sha256"],
                  sealed_at=fmt_time(day["sealed_at"]), page=record_url(f"days/{day['date']}.html"),
                  source=record_url(f"days/{day['date']}.md"),
                  json=record_url(f"api/days/{day['date']}.json"))
    # The note goes under the title: a reader sees first which record this page renders.
    head, sep, rest = body.partition("\n# ")
    title_line, _nl, after = rest.partition("\n")
    page = f"{head}{sep}{title_line}\n\n{note}{after}" if sep else note + body
    page = page.rstrip("\n") + "\n\n" + cite
    if next_day:
        page = page.rstrip("\n") + "\n\n" + _("[Next day: {date} →]({link})").format(
            date=fmt_date(next_day), link=f"{next_day}.md") + "\n"
    return page
