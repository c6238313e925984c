"""Build a small chronicle with mkdocs --strict and read the site back like a reader would."""

from __future__ import annotations

import hashlib
import html
import json
import re
import time
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import feedparser
import pytest

from tests.support.site_factory import SEARCH_WORD, SITE_URL, Built, build_site, make_chronicle

NIGHTS = 4
DATES = ["2026-08-20", "2026-08-21", "2026-08-22", "2026-08-23"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path, Path, float]:
    root = tmp_path_factory.mktemp("chronicle")
    made = make_chronicle(root / "c", nights=NIGHTS)
    started = time.perf_counter()
    first = build_site(made.root, root / "site1")
    seconds = time.perf_counter() - started
    second = build_site(made.root, root / "site2")
    return made, first, second, seconds


@pytest.fixture(scope="module")
def stale_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path]:
    root = tmp_path_factory.mktemp("stale")
    made = make_chronicle(root / "c", nights=NIGHTS, failed_source="github")
    return made, build_site(made.root, root / "site")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.article_text: list[str] = []
        self._in_article = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "data-spec") and value:
                self.urls.append(value)
        if tag == "article":
            self._in_article += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._in_article -= 1

    def handle_data(self, data: str) -> None:
        if self._in_article:
            self.article_text.append(data)


def parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def text_of(path: Path) -> str:
    return " ".join(" ".join(parse(path).article_text).split())


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_two_builds_are_byte_identical(built: tuple[Built, Path, Path, float]) -> None:
    _, first, second, _ = built
    a, b = digest(first), digest(second)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    assert "sitemap.xml.gz" in a and "feed_rss_created.xml" in a


def test_feed_has_one_item_per_sealed_day(built: tuple[Built, Path, Path, float]) -> None:
    made, site, _, _ = built
    feed = feedparser.parse((site / "feed_rss_created.xml").read_bytes())
    assert not feed.bozo, feed.get("bozo_exception")
    entries = sorted(feed.entries, key=lambda e: e.id)
    assert [e.id for e in entries] == [f"{SITE_URL}days/{d}.html" for d in DATES]
    for entry, day in zip(entries, DATES, strict=True):
        sealed = json.loads((made.config.docs_dir / "days" / f"{day}.json").read_text())
        when = datetime(*entry.published_parsed[:6], tzinfo=UTC)
        assert when.strftime("%Y-%m-%dT%H:%M:%SZ") == sealed["sealed_at"]
        # The item is HTML with absolute links: summary, chart, key figures, verdicts.
        assert sealed["summary"] in html.unescape(entry.summary)
        assert f'src="{SITE_URL}days/{day}/loss.svg"' in entry.summary
        assert "Key figures" in entry.summary and "Token dropping" in entry.summary
        assert 'href="days/' not in entry.summary  # no relative link leaves the feed
        (enc,) = entry.enclosures
        assert enc.href == f"{SITE_URL}days/{day}/loss.svg" and enc.type == "image/svg+xml"
        assert int(enc.length) == (site / "days" / day / "loss.svg").stat().st_size
    jfeed = json.loads((site / "feed_json_created.json").read_text())
    assert len(jfeed["items"]) == NIGHTS
    for item in jfeed["items"]:
        day = item["id"].rsplit("/", 1)[1].removesuffix(".html")
        sealed = json.loads((made.config.docs_dir / "days" / f"{day}.json").read_text())
        assert item["summary"] == sealed["summary"]
        assert "<h3>The three signals</h3>" in item["content_html"]


def test_home_shows_the_run_at_a_glance(built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    text = text_of(site / "index.html")
    assert "Day 4 of 10" in text
    assert "Data as of 2026-08-23 23:" in text and "snapshot 2026-08-24T031700Z" in text
    assert "Stale data" not in text
    assert "Checkpoint writes are slow" in text  # the open incident
    assert all(f"Day {n} · {d}" in text for n, d in enumerate(DATES, 1))
    raw = (site / "index.html").read_text()
    assert 'class="chronicle-progress"' in raw and 'style="width: ' in raw
    # The first card, the largest paint on a phone, is fetched at once; the others as the
    # reader nears them.
    tags = re.findall(r'<img src="home/(\w+)\.svg"[^>]*?(loading="\w+"[^>]*)>', raw)
    assert tags == [("prediction", 'loading="eager" fetchpriority="high"'),
                    ("dropping", 'loading="lazy"'), ("risks", 'loading="lazy"')]


def test_stale_banner_names_source_and_last_good_snapshot(
        stale_site: tuple[Built, Path]) -> None:
    _, site = stale_site
    text = text_of(site / "index.html")
    assert "Stale data: github failed." in text
    assert "since 2026-08-23 03:17 UTC" in text and "rate limited" in text
    assert "snapshot 2026-08-22T031700Z" in text  # the last good github data
    latest = json.loads((site / "api" / "latest.json").read_text())
    assert latest["stale_sources"][0]["source"] == "github"
    assert latest["stale_sources"][0]["last_good_snapshot"] == "2026-08-22T031700Z"


def test_search_index_finds_a_comment_on_its_thread_page(
        built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    docs = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    hits = {d["location"].split("#")[0] for d in docs if SEARCH_WORD in d["text"]}
    assert "threads/101.html" in hits


def test_hostile_comment_is_inert_and_contained(built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    page = site / "threads" / "101.html"
    raw = page.read_text()
    article = raw[raw.index("<article"):raw.index("</article>")]
    assert "<script" not in article and "onerror" not in article
    assert not any(u.lower().startswith(("javascript:", "data:")) for u in parse(page).urls)
    text = text_of(page)
    assert "{{ config.site_name }}" in text and "{% raw %}" in text  # shown, not evaluated
    assert "title: owned" in text  # the leading --- is text, not front matter
    # After the unclosed fence, the next comment still renders as its own paragraph.
    assert re.search(r"<p>The " + SEARCH_WORD + " dashboard agrees.</p>", article)
    assert "<title>#101 [Hero Run] Test Run 7B status - " in raw  # no markup in <title>


def test_edits_are_kept_on_the_thread_page(built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    text = text_of(site / "threads" / "101.html")
    assert "Status: rack 3 down, restarted." in text
    assert "Earlier text" in text and "Status: all racks up." in text
    assert "status:start" not in text  # bot markers are HTML comments: stripped


def test_links_are_relative_and_resolve(built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":
            continue  # mkdocs gives the 404 page site-root paths: it is served at any depth
        for url in parse(page).urls:
            if url.startswith(("http://", "https://", "mailto:", "#")):
                continue
            assert not url.startswith("/"), f"{page}: absolute path {url}"
            target = (page.parent / url.split("#")[0].split("?")[0]).resolve()
            assert target.exists(), f"{page.relative_to(site)} links to missing {url}"


def test_day_pages_link_back_and_forth(built: tuple[Built, Path, Path, float]) -> None:
    _, site, _, _ = built
    middle = parse(site / "days" / "2026-08-21.html").urls
    assert "2026-08-20.html" in middle and "2026-08-22.html" in middle
    last = parse(site / "days" / "2026-08-23.html").urls
    assert "2026-08-24.html" not in last
    assert all(u in middle for u in ("2026-08-21/loss.svg", "2026-08-21/loss.vl.json"))


def test_api_matches_the_sealed_files(built: tuple[Built, Path, Path, float]) -> None:
    made, site, _, _ = built
    index = json.loads((site / "api" / "index.json").read_text())
    assert [d["date"] for d in index["days"]] == DATES
    for entry in index["days"]:
        md = made.config.docs_dir / "days" / f"{entry['date']}.md"
        assert entry["sha256"] == hashlib.sha256(md.read_bytes()).hexdigest()
        assert entry["permalink"] == f"{SITE_URL}days/{entry['date']}.html"
        assert (site / "api" / "days" / f"{entry['date']}.json").read_bytes() == \
            (made.config.docs_dir / "days" / f"{entry['date']}.json").read_bytes()
    assert (site / "assets" / "javascripts" / "vega-bundle.js").stat().st_size > 100_000


def test_pages_stay_light_and_nav_is_short(built: tuple[Built, Path, Path, float]) -> None:
    made, site, _, seconds = built
    day_page = site / "days" / "2026-08-22.html"
    assert day_page.stat().st_size < 60_000
    nav = re.findall(r'class="md-nav__link[^"]*"', (site / "index.html").read_text())
    # Thirteen sections and the home page's own headings, never one entry per day.
    assert len(nav) < 30
    assert not (site / "gen_pages.py").exists() and not (site / "hooks.py").exists()
    # The store is published: a day page links the snapshot files it was built from.
    assert sorted(p.name for p in (site / "data").iterdir()) == sorted(
        p.name for p in (made.config.docs_dir / "data").iterdir())
    sizes = {p: (site / p).stat().st_size for p in
             ("index.html", "days/2026-08-22.html", "threads/101.html", "charts.html",
              "search/search_index.json")}
    print(f"\nbuild {seconds:.1f} s; sizes: {sizes}")


def test_an_older_scaffold_nav_still_builds_strict(tmp_path: Path) -> None:
    from chronicle.site.outputs.pages import SECTIONS, complete_nav

    root = tmp_path / "old"
    make_chronicle(root, nights=2)
    mk = root / "mkdocs.yml"
    # A nav written before the watch pages existed, plus a page of the user's own.
    (root / "docs" / "notes.md").write_text("# Notes\n")
    old_nav = ("nav:\n  - Home: index.md\n  - Archive: archive.md\n  - Charts: charts.md\n"
               "  - Threads: threads/index.md\n  - Failures: failures.md\n"
               "  - Notes: notes.md\n  - About: about.md\n")
    mk.write_text(mk.read_text() + old_nav)
    site = build_site(root)
    assert (site / "health.html").is_file() and (site / "corrections.html").is_file()
    assert 'href="claims.html"' in (site / "index.html").read_text()
    full = complete_nav([{"Home": "index.md"}])
    assert [next(iter(d.values())) for d in full] == [s.path for s in SECTIONS]
    assert 'href="notes.html"' in (site / "index.html").read_text()
