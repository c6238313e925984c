"""The config's strings are text everywhere (site/engines/mkdocs/plugin.py, the theme's
<title>, render/cite.py, site/publish/daily_feed.py): a chronicle.yml whose run.name,
site.title and site.author are markup builds a site in which no page, feed, citation or
search entry carries an element or an event handler from them, and each shows them as
typed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.support.site_factory import chronicle_build, make_chronicle

RUN = '</title><script>alert("xss-run")</script><img src=x onerror=alert("xss-run2") '
TITLE = '"><img src=x onerror=alert("xss-title")></title><script>alert("xss-title2")</script>'
AUTHOR = '<b onmouseover=alert("xss-author")>A</b>\n```\n<script>alert("xss-author2")</script>'
MARK = "xss-"


class _Injected(HTMLParser):
    """Collect what a browser would run from a page: script text, event handlers."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.text: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") and MARK in (value or ""):
                self.found.append(f"<{tag} {name}={value}>")
        if tag in ("img", "b") and MARK in str(attrs):
            self.found.append(f"<{tag}> {attrs}")

    def handle_endtag(self, tag: str) -> None:
        self._script = False

    def handle_data(self, data: str) -> None:
        if self._script and MARK in data:
            self.found.append(f"<script>{data}")
        self.text.append(data)


def _injected(markup: str) -> list[str]:
    parser = _Injected()
    parser.feed(markup)
    parser.close()
    return parser.found


def _text(markup: str) -> str:
    parser = _Injected()
    parser.feed(markup)
    parser.close()
    return " ".join("".join(parser.text).split())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = make_chronicle(tmp_path_factory.mktemp("text") / "c", nights=3,
                          languages=("en", "zh"))
    path = made.root / "chronicle.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["run"]["name"] = RUN
    config["site"].update(title=TITLE, author=AUTHOR)
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return chronicle_build(made.root, made.root / "site")


def test_no_page_feed_citation_or_search_entry_carries_markup_from_the_config(
        site: Path) -> None:
    found: dict[str, list[str]] = {}
    checked = 0
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site).as_posix()
        fragments: list[str] = []
        if path.suffix in (".html", ".svg"):
            fragments = [path.read_text(encoding="utf-8")]
        elif path.suffix == ".xml" and path.name.startswith("feed"):
            root = ET.parse(path).getroot()  # well-formed, whatever the config holds
            # An item's description is HTML; the channel's title and description are text.
            fragments = [el.text or "" for item in root.iter("item") for el in item
                         if el.tag in ("description", "{http://purl.org/rss/1.0/modules/"
                                                      "content/}encoded")]
        elif path.suffix == ".json" and path.name.startswith("feed"):
            fragments = [i.get("content_html") or "" for i in json.loads(
                path.read_text(encoding="utf-8"))["items"]]
        elif path.name == "search_index.json":  # Material shows titles and text as HTML
            fragments = [d.get(k) or "" for d in json.loads(path.read_text(
                encoding="utf-8"))["docs"] for k in ("title", "text")]
        checked += bool(fragments)
        hits = [hit for fragment in fragments for hit in _injected(fragment)]
        if hits:
            found[rel] = hits
    assert checked > 60 and found == {}


def test_the_config_strings_show_as_typed(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    [title] = re.findall(r"<title>(.*?)</title>", home, re.DOTALL)
    assert _text(title) == f"{TITLE} - {TITLE}"  # escaped once: text, not markup
    [footer] = re.findall(r'<div class="md-copyright__highlight">(.*?)</div>', home, re.DOTALL)
    assert _text(footer) == " ".join(f"{AUTHOR} · CC-BY-4.0".split())
    day = (site / "days" / "2026-08-20.html").read_text(encoding="utf-8")
    citation = " ".join(AUTHOR.split()) + f". \u201c{' '.join(RUN.split())}: Day 1"
    assert citation in _text(day)
    rss = ET.parse(site / "feed_rss_created.xml").getroot()
    assert rss.findtext("channel/title") == TITLE
    assert rss.findtext("channel/image/title") == TITLE
    feed = json.loads((site / "zh" / "feed_json_created.json").read_text(encoding="utf-8"))
    assert feed["title"] == TITLE and feed["authors"] == [{"name": AUTHOR}]
    assert RUN.strip() in feed["description"]
    cff = yaml.safe_load((site / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["title"] == TITLE and cff["authors"] == [{"name": AUTHOR}]
