"""The daily feed's items as a follower reads them (site stage).

mkdocs-rss-plugin writes the daily feeds (RSS 2.0 and JSON Feed 1.1) with each day's
GUID and date; after it, this fills each item's HTML from the sealed day: summary, loss
chart (the PNG sealed next to its SVG, for readers that show no SVG), key figures and the
three signals' verdicts as of sealing, every link absolute. The feeds are read and written
as XML and JSON documents (never edited as text): only the items' descriptions change;
GUIDs, links and dates stay as the plugin wrote them.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.dom import minidom

import yaml

from chronicle.analysis.signals import prediction_facts, risks_facts
from chronicle.clean import load_json
from chronicle.render.feeds import day_item_html
from chronicle.render.i18n import Language
from chronicle.render.ledger_text import day_lines
from chronicle.render.signals import (
    dropping_verdict,
    prediction_verdict,
    risks_verdict,
    short_verdict,
)
from chronicle.site.outputs.citable import edition_url
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.store.files import MAX_JSON_BYTES

RSS_FEEDS = ("feed_rss_created.xml", "feed_rss_updated.xml")
IMAGE_TYPES = {"svg": "image/svg+xml", "png": "image/png"}
# A sealed day page's path in docs/ (and in an edition's sources).
DAY_PAGE = re.compile(r"^days/(\d{4}-\d{2}-\d{2})\.md$")
JSON_FEEDS = ("feed_json_created.json", "feed_json_updated.json")


def item_html(inputs: BuildInputs, lang: Language,
              files: Mapping[str, str | bytes | Path] | None = None) -> dict[str, str]:
    """Return {day permalink: the HTML of its feed item} for every sealed day, in `lang`
    (a translated edition's permalinks and charts are its own: `files`, its generated
    files, hold its day charts)."""
    _ = lang.gettext
    url = edition_url(inputs.config, lang.code)
    out = {}
    for i, day in enumerate(inputs.days):
        # As the home card said them the night the day was the newest (analysis/signals.py).
        upto = inputs.days[: i + 1]
        verdicts = []
        if "prediction" in day:
            verdicts.append((_("Prediction"), prediction_verdict(
                prediction_facts(upto, inputs.events), lang,
                configured=day.get("prediction") is not None)))
        verdicts.append((_("Token dropping"), dropping_verdict(inputs.dropping_by_day[i],
                                                              lang)))
        if "risks" in day:
            verdicts.append((_("Risk points"), risks_verdict(
                day.get("risks") or [], lang, risks_facts(upto, inputs.events)["run"])))
        image, alt = _image(inputs, day["date"], lang, files)
        lines = day_lines(inputs.told(day["date"]), lang, inputs.config, day["date"])
        out[f"{url}days/{day['date']}.html"] = day_item_html(day, url, image, alt, verdicts,
                                                             lang, lines)
    return out


def _image(inputs: BuildInputs, date: str, lang: Language,
           files: Mapping[str, str | bytes | Path] | None) -> tuple[str | None, str]:
    """Return the feed image of a day (a PNG where there is one, else its SVG) and its
    text alternative: the English record's sealed chart, or the edition's own."""
    alt = lang.gettext("Loss, run so far, to {date}").format(date=lang.date(date))
    if lang.english:
        folder = inputs.store.days / date
        spec = folder / "loss.vl.json"
        if spec.is_file():
            alt = _description(spec.read_bytes()) or alt
        present = {name for name in ("loss.png", "loss.svg") if (folder / name).is_file()}
    else:
        own = files or {}
        spec_text = own.get(f"days/{date}/loss.vl.json")
        # Written into the site already (site/outputs/editions.py).
        if isinstance(spec_text, Path):
            spec_text = spec_text.read_bytes()
        if spec_text is not None:
            alt = _description(spec_text) or alt
        present = {name for name in ("loss.png", "loss.svg") if f"days/{date}/{name}" in own}
    for name in ("loss.png", "loss.svg"):
        if name in present:
            return f"days/{date}/{name}", alt
    return None, alt


def item_images(sources: Mapping[str, str | bytes | Path], url: str) -> dict[str, str]:
    """Return {day permalink: the URL of its page's `image`} from the edition's day pages'
    front matter (what mkdocs-rss-plugin makes each item's enclosure of)."""
    out = {}
    for path, content in sources.items():
        match = DAY_PAGE.match(path)
        if match is None or not isinstance(content, str) or not content.startswith("---\n"):
            continue
        end = content.find("\n---\n", 4)
        meta = yaml.safe_load(content[4:end]) if end > 0 else None
        image = meta.get("image") if isinstance(meta, dict) else None
        if isinstance(image, str) and image and "://" not in image:
            out[f"{url}days/{match.group(1)}.html"] = url + image.lstrip("/")
    return out


def item_verdicts(inputs: BuildInputs, lang: Language) -> dict[str, str]:
    """Return {day permalink: its verdict in a few words} (render/signals.py
    short_verdict), for the day's feed item title; days with nothing to say are left out."""
    url = edition_url(inputs.config, lang.code)
    out = {}
    for i, day in enumerate(inputs.days):
        verdict = short_verdict(day, inputs.dropping_by_day[i], lang)
        if verdict:
            out[f"{url}days/{day['date']}.html"] = verdict
    return out


def fill_daily_feeds(site_dir: Path, items: Mapping[str, str],
                     images: Mapping[str, str] | None = None,
                     verdicts: Mapping[str, str] | None = None,
                     as_of: datetime | None = None) -> None:
    """Replace each daily item's text with its HTML in the feeds the engine wrote, add its
    verdict in a few words to its title (the page's title, as the engine wrote it); give an
    item with no enclosure its day's image (Zensical's feeds carry none; its length is
    measured by site/publish/finish.py). With `as_of` (the newest snapshot's time), the
    channel's pubDate and lastBuildDate say it, as mkdocs-rss-plugin writes them from
    SOURCE_DATE_EPOCH: Zensical 0.0.73 writes the clock's time, so a feed changed with
    every build, and a build from the same store was not the same bytes."""
    for name in RSS_FEEDS:
        path = site_dir / name
        if path.is_file():
            path.write_text(_fill_rss(path.read_text(encoding="utf-8"), items, images or {},
                                      verdicts or {}, as_of), encoding="utf-8")
    for name in JSON_FEEDS:
        path = site_dir / name
        if path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps(_fill_json(doc, items, verdicts or {}),
                                       ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _description(spec: bytes | str) -> str | None:
    """Return a chart spec's text alternative (None: it has none, or is not a spec)."""
    try:
        found = load_json(spec, MAX_JSON_BYTES)
    except ValueError:
        return None  # a sealed file verify would name: the feed keeps its own words
    text = found.get("description") if isinstance(found, dict) else None
    return text if isinstance(text, str) and text else None


def _titled(title: str, verdict: str | None) -> str:
    return f"{title} · {verdict}" if verdict else title


def _fill_rss(text: str, items: Mapping[str, str], images: Mapping[str, str],
              verdicts: Mapping[str, str], as_of: datetime | None = None) -> str:
    """Return an RSS 2.0 document with each known item's <description> replaced by its
    HTML (carried as text, which the XML writer escapes), an enclosure where an item
    has none and its day has an image, and the channel's dates `as_of` (if given)."""
    doc = minidom.parseString(text.encode("utf-8"))
    if as_of is not None:
        # RFC 822 in UTC, as mkdocs-rss-plugin writes it.
        stamp = as_of.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S -0000")
        for channel in doc.getElementsByTagName("channel")[:1]:
            for node in channel.childNodes:
                if node.nodeType == node.ELEMENT_NODE and node.tagName in (
                        "pubDate", "lastBuildDate"):
                    for child in list(node.childNodes):
                        node.removeChild(child)
                    node.appendChild(doc.createTextNode(stamp))
    for item in doc.getElementsByTagName("item"):
        guid = _child_text(item, "guid")
        image = images.get(guid.strip()) if guid is not None else None
        if image is not None and not item.getElementsByTagName("enclosure"):
            enclosure = doc.createElement("enclosure")
            enclosure.setAttribute("url", image)
            enclosure.setAttribute("type", IMAGE_TYPES.get(image.rsplit(".", 1)[-1],
                                                           "application/octet-stream"))
            enclosure.setAttribute("length", "")
            item.appendChild(enclosure)
        verdict = verdicts.get(guid.strip()) if guid is not None else None
        for title in item.getElementsByTagName("title")[:1]:
            if verdict:
                text_of = "".join(t.data for t in title.childNodes if t.nodeType == t.TEXT_NODE)
                for child in list(title.childNodes):
                    title.removeChild(child)
                title.appendChild(doc.createTextNode(_titled(text_of, verdict)))
        body = items.get(guid.strip()) if guid is not None else None
        if body is None:
            continue
        for old in item.getElementsByTagName("description"):
            item.removeChild(old)
        description = doc.createElement("description")
        description.appendChild(doc.createTextNode(body))
        item.appendChild(description)
    return doc.toxml(encoding="UTF-8").decode("utf-8")


def _child_text(node: Any, tag: str) -> str | None:
    found = node.getElementsByTagName(tag)
    if not found:
        return None
    return "".join(t.data for t in found[0].childNodes if t.nodeType == t.TEXT_NODE)


def _fill_json(doc: dict[str, Any], items: Mapping[str, str],
               verdicts: Mapping[str, str]) -> dict[str, Any]:
    # JSON Feed's title, description and author names are plain text; the rss plugin wrote
    # the config's, which are HTML-escaped text for the pages
    # (site/engines/mkdocs/plugin.py).
    for key in ("title", "description"):
        if isinstance(doc.get(key), str):
            doc[key] = html.unescape(doc[key])
    for author in doc.get("authors") or []:
        if isinstance(author, dict) and isinstance(author.get("name"), str):
            author["name"] = html.unescape(author["name"])
    for item in doc.get("items") or []:
        key = str(item.get("id") or "")
        if key in verdicts and isinstance(item.get("title"), str):
            item["title"] = _titled(item["title"], verdicts[key])
        body = items.get(key)
        if body is not None:
            item["summary"] = item.get("content_html") or ""
            item["content_html"] = body
    return doc
