"""The failures and corrections feeds (RSS 2.0 via feedgen, plus JSON Feed 1.1), and the
HTML of the daily feed's items (render stage).

The daily feed comes from mkdocs-rss-plugin (its GUIDs and dates); its items' HTML comes
from here. The failures and corrections feeds are built from the store. Pure:
every date comes from the store (a rebuild re-announces nothing), every GUID is a
record's stable id, and text from issues is escaped, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from feedgen.feed import FeedGenerator

from chronicle.analysis.day_model import DaySummary
from chronicle.clean import clean_text
from chronicle.models import FailureRecord, iso, parse_time
from chronicle.render import anchor, href
from chronicle.render.archive_pages import failure_anchor
from chronicle.render.day import key_figures
from chronicle.render.i18n import Language
from chronicle.render.ledger_text import headline, moved_text
from chronicle.render.prose import write_summary
from chronicle.render.record_text import failure_text

FEEDS = {
    "failures": ("feed_failures.xml", "feed_failures.json"),
    "corrections": ("feed_corrections.xml", "feed_corrections.json"),
    "changes": ("feed_changes.xml", "feed_changes.json"),
}


@dataclass(frozen=True)
class Item:
    """One feed item: a stable GUID, a date (UTC), a title, a link and an HTML summary."""

    guid: str
    published: datetime
    title: str
    link: str
    html: str


def failure_items(failures: Sequence[FailureRecord], first_seen: Mapping[str, datetime],
                  site_url: str, lang: Language) -> list[Item]:
    """Return one item per failure record, dated when a snapshot first recorded it, its GUID
    and link the record's anchor on the Failures page."""
    _ = lang.gettext
    out = []
    for f in failures:
        when = first_seen.get(f.id, f.start)
        end = lang.time(f.end) if f.end else _("ongoing")
        hours = (lang.hours(f.accelerator_hours_lost) if f.accelerator_hours_lost is not None
                 else _("unknown"))
        evidence = "".join(f"<li>{anchor(u, u)}</li>" for u in f.evidence if href(u))
        what = failure_text(f, lang)
        html = (f"<p>{escape(what)}</p><p>" + escape(_(
            "Kind: {kind}. Start {start}, end {end}. Accelerator-hours lost: {hours}.").format(
                kind=lang.term(f.kind, "failure kind"), start=lang.time(f.start), end=end,
                hours=hours)) + "</p>" + (f"<ul>{evidence}</ul>" if evidence else ""))
        # The record's anchor on the Failures page: its GUID (stable) and its link.
        page = f"{site_url}failures.html#{failure_anchor(f.id)}"
        out.append(Item(page, when, _("Failure {id}: {what}").format(id=f.id, what=what), page,
                        html))
    return sorted(out, key=lambda i: (i.published, i.guid))


def correction_items(corrections: Sequence[Mapping[str, Any]], site_url: str,
                     lang: Language) -> list[Item]:
    """Return one item per correction (render/ledger_text.py correction_rows), dated when
    it was found, linking the day it corrects; the figures one finding moved on one day
    (a fork found later moves four) are one item, its GUID the first figure's row."""
    _ = lang.gettext
    out = []
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for c in corrections:
        key = (str(c["day"]), str(c["found_by"])) if c.get("cause") == "found_later" \
            else (str(c["id"]),)
        groups.setdefault(key, []).append(c)
    for rows in groups.values():
        rows = sorted(rows, key=lambda r: str(r["id"]))
        c = {**rows[0]}
        if len(rows) > 1:
            c["text"] = moved_text(c["day"], c["why"], [
                (r["name"], r["previous"], r["corrected"]) for r in rows], lang)
            c["name"] = _(", ").join(r["name"] for r in rows)
        found = parse_time(c["found_at"])
        assert found is not None
        link = f"{site_url}days/{c['day']}.html"
        entry = c.get("announced_in")
        page = f'<a href="{link}">{escape(lang.date(c["day"]))}</a>'
        html = f"<p>{escape(c['text'])}</p><p>"
        if entry:
            html += _("The sealed page {page} is unchanged; the correction is announced in "
                      "the entry of {entry}.").format(
                page=page, entry=f'<a href="{site_url}days/{entry}.html">'
                                 f"{escape(lang.date(entry))}</a>")
        else:
            html += _("The sealed page {page} is unchanged.").format(page=page)
        html += "</p>"
        out.append(Item(f"{site_url}corrections.html#{c['id']}", found,
                        _("Correction to {day}: {figure}").format(
                            day=lang.date(c["day"]), figure=c["name"]), link, html))
    return sorted(out, key=lambda i: (i.published, i.guid))


def rss(items: Sequence[Item], title: str, description: str, page_url: str, feed_url: str,
        built: datetime, lang: Language) -> bytes:
    """Return an RSS 2.0 feed of the items, newest first."""
    fg = FeedGenerator()
    fg.title(title)
    fg.link(href=page_url, rel="alternate")
    fg.link(href=feed_url, rel="self")
    fg.description(description)
    fg.language(lang.code)
    fg.lastBuildDate(built)
    fg.generator("chronicle")
    for item in items:  # feedgen prepends: the newest ends up first
        fe = fg.add_entry()
        fe.guid(item.guid, permalink=False)
        # A store written before text was cleaned at the source may hold control
        # characters, which XML cannot carry: drop them here too.
        fe.title(clean_text(item.title))
        fe.link(href=item.link)
        fe.description(clean_text(item.html))
        fe.pubDate(item.published)
    return bytes(fg.rss_str(pretty=True))


def json_feed(items: Sequence[Item], title: str, description: str, page_url: str,
              feed_url: str) -> str:
    """Return a JSON Feed 1.1 of the items, newest first."""
    doc = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": title,
        "description": description,
        "home_page_url": page_url,
        "feed_url": feed_url,
        "items": [{"id": i.guid, "url": i.link, "title": i.title, "content_html": i.html,
                   "date_published": iso(i.published)} for i in reversed(items)],
    }
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def day_item_html(day: DaySummary, site_url: str, image: str | None, image_alt: str,
                  verdicts: Sequence[tuple[str, str]], lang: Language,
                  happened: Sequence[str] = ()) -> str:
    """Return a daily feed item's HTML, every link absolute: what happened that day (the
    day page's opening: `happened`, render/ledger_text.py day_lines), the summary, the
    loss chart (`image`: its path under the site; a PNG where there is one, linking the
    SVG), the key figures and the three signals' verdicts as of the day's sealing."""
    _ = lang.gettext
    # Words said outside the f-strings: the catalog's extractor does not look inside one.
    as_svg, key_title, figure, this_day, change_word, signals_title = (
        _("The chart as SVG"), _("Key figures"), _("Figure"), _("This day"), _("Change"),
        _("The three signals"))
    page = f"{site_url}days/{day['date']}.html"
    # The sealed summary is English; another language writes its own from the numbers.
    summary = str(day.get("summary") or "") if lang.english else write_summary(day, lang)
    parts = [f"<p><strong>{escape(headline(happened, day, lang))}</strong></p>"]
    if len(happened) > 1:
        parts.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in happened[1:])
                     + "</ul>")
    parts.append(f"<p>{escape(summary)}</p>")
    if image:
        svg = image.rsplit(".", 1)[0] + ".svg"
        parts.append(f'<p><a href="{escape(page)}"><img src="{escape(site_url + image)}" '
                     f'alt="{escape(image_alt)}" width="720"></a><br>'
                     f'<a href="{escape(site_url + svg)}">{escape(as_svg)}</a></p>')
    rows = "".join(f"<tr><td>{escape(label)}</td><td>{escape(now)}</td><td>{escape(change)}"
                   "</td></tr>" for label, now, _b, change in key_figures(day, lang) if now != "—")
    parts.append(f"<h3>{escape(key_title)}</h3><table><tr><th>{escape(figure)}"
                 f"</th><th>{escape(this_day)}</th><th>{escape(change_word)}</th></tr>"
                 f"{rows}</table>")
    if verdicts:
        items = "".join(f"<li><strong>{escape(name)}:</strong> {escape(text)}</li>"
                        for name, text in verdicts)
        parts.append(f"<h3>{escape(signals_title)}</h3><ul>{items}</ul>")
    parts.append(f'<p><a href="{escape(page)}">'
                 + escape(_("Read the entry for {date}").format(date=lang.date(day["date"])))
                 + "</a></p>")
    return "".join(parts)
