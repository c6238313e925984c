"""A reader's view of the demo site in Debian's chromium: axe-core finds no serious or
critical violation, no page scrolls sideways, no table needs to on a laptop, and every
chart is drawn and named, at 1280 px and 390 px, in both colour schemes.

One demo chronicle (12 simulated days) is built for the whole module and served from
127.0.0.1; these tests are marked browser and slow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chronicle.demo import run_demo
from tests.support.browser import (
    CHROMIUM,
    LAPTOP,
    PHONE,
    chromium,
    layout_problems,
    open_page,
    serious_violations,
    serve,
    svg_text_problems,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium"),
]
DAYS = 12
PAGES = ("index.html", "days/2026-08-27.html", "health.html", "prediction.html", "risks.html",
         "throughput.html", "threads/1.html", "failures.html",
         # the Chinese edition: its own templates' strings, CJK line breaking in tables
         "zh/index.html", "zh/days/2026-08-27.html", "zh/health.html", "zh/failures.html")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("reader") / "demo"
    run_demo(out, DAYS, echo=lambda _: None)
    with serve(out / "site") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    pytest.importorskip("playwright.sync_api")
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
@pytest.mark.parametrize("path", PAGES)
def test_page_is_accessible_and_fits(site: str, browser: Any, path: str,
                                     viewport: dict[str, int], scheme: str) -> None:
    page = open_page(browser, site + path, viewport, scheme)
    try:
        assert serious_violations(page) == []
        assert layout_problems(page, wide=viewport["width"] >= 1000) == []
        assert svg_text_problems(page) == []
    finally:
        page.context.close()


def test_home_shows_the_three_signals_above_the_fold(site: str, browser: Any) -> None:
    page = open_page(browser, site + "index.html", LAPTOP, "light")
    try:
        panels = page.locator(".chronicle-signal")
        assert panels.count() == 3
        for i in range(3):
            box = panels.nth(i).bounding_box()
            assert box is not None and box["y"] + box["height"] <= LAPTOP["height"], i
            assert panels.nth(i).locator(".chronicle-chart--live svg").count() == 1
            assert panels.nth(i).locator("a").count() >= 1  # to the signal's full page
        text = page.locator(".chronicle-signals").inner_text()
        assert "of the budget" in text and "risk point" in text
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280px", "390px"])
@pytest.mark.parametrize("edition", ["", "zh/"])
def test_every_section_is_one_click_from_home(site: str, browser: Any, edition: str,
                                              viewport: dict[str, int]) -> None:
    # The home page hides the navigation (its signals take the width): on a laptop, where
    # Material shows no drawer either, it must link every section itself.
    from chronicle.site.pages import SECTIONS

    page = open_page(browser, site + edition + "index.html", viewport, "light")
    try:
        for section in SECTIONS:
            if section.path == "index.md":
                continue
            target = section.path.removesuffix(".md") + ".html"
            links = page.locator(f'article a[href$="{target}"]')
            assert any(links.nth(i).is_visible() for i in range(links.count())), target
        assert page.locator('a[href$="feed_changes.xml"]').count() == 1
    finally:
        page.context.close()


@pytest.mark.parametrize(("edition", "query"), [
    ("", "2026-08-27"), ("", "Day 8"), ("zh/", "2026-08-27"), ("zh/", "2026年8月27日"),
    ("zh/", "8月27日"), ("zh/", "第8天"), ("zh/", "第 8 天"), ("zh/", "2026/8/27")])
def test_searching_a_date_offers_that_day_first(site: str, browser: Any, edition: str,
                                                query: str) -> None:
    # Material splits "2026-08-27" into 2026, 08 and 27 (every day whose title holds the
    # three ties with it, earliest first) and jieba splits 8月27日 into four words: the
    # day is offered above the results, in every form a reader types.
    page = open_page(browser, site + edition + "index.html", LAPTOP, "light")
    try:
        box = page.locator(".md-search__input")
        box.click()
        box.fill(query)
        offer = page.locator(".md-search-result .chronicle-search-day a")
        offer.wait_for(timeout=10_000)
        assert offer.get_attribute("href", timeout=1_000).endswith(
            edition + "days/2026-08-27.html")
        assert ("第 8 天" if edition else "Day 8") in offer.inner_text()
        first = page.locator(".md-search-result a").first
        assert first.get_attribute("href").endswith("days/2026-08-27.html")
        # A date, or a day number, that was never sealed offers nothing.
        for never in ("2031-01-01", "9月30日" if edition else "Day 13"):
            box.fill(never)
            page.wait_for_timeout(1_000)
            assert page.locator(".chronicle-search-day").count() == 0, never
    finally:
        page.context.close()


def _whole_word_pages(index: dict[str, Any], word: str) -> dict[str, int]:
    """How often each page of a Material index holds the word whole (its segmentation
    marks and markup taken out), as the reader would read it."""
    import re

    pages: dict[str, int] = {}
    for doc in index["docs"]:
        text = re.sub(r"<[^>]*>", "", doc["title"] + doc["text"]).replace("\u200b", "")
        text = re.sub(r"\s+", "", text)
        page_path = doc["location"].split("#")[0]
        pages[page_path] = pages.get(page_path, 0) + text.count(word)
    return {p: n for p, n in pages.items() if n}


def test_a_chinese_word_is_offered_whole_before_its_characters_apart(
        site: str, browser: Any) -> None:
    # Material's query segmenter never tries the whole Han query as one word: 预测区间
    # becomes 预测* and 区间*, which rank pages that hold the two apart. The pages that
    # hold the word whole are offered first, most occurrences first.
    import json
    from urllib.request import urlopen

    word = "预测区间"
    with urlopen(site + "zh/search/search_index.json") as answer:
        index = json.load(answer)
    whole = _whole_word_pages(index, word)
    apart = {doc["location"].split("#")[0] for doc in index["docs"]
             if "预测" in doc["text"] and "区间" in doc["text"]} - set(whole)
    assert whole and apart, "the demo holds the word whole on some pages, apart on others"
    page = open_page(browser, site + "zh/index.html", LAPTOP, "light")
    try:
        box = page.locator(".md-search__input")
        box.click()
        box.fill(word)
        offer = page.locator(".md-search-result .chronicle-search-whole")
        offer.wait_for(timeout=10_000)
        assert f"（{len(whole)} 页）" in offer.locator("p").inner_text()
        links = offer.locator("a")
        offered = [links.nth(i).get_attribute("href").split("zh/")[-1].split("#")[0]
                   for i in range(links.count())]
        assert offered and set(offered) <= set(whole)
        counts = [whole[p] for p in offered]
        assert counts == sorted(counts, reverse=True) and counts[0] == max(whole.values())
        # A word nowhere whole offers nothing; English queries are left to the engine.
        for query in ("区间预测", "prediction band"):
            box.fill(query)
            page.wait_for_timeout(1_000)
            assert page.locator(".chronicle-search-whole").count() == 0, query
    finally:
        page.context.close()


def test_a_heatmap_cell_opens_its_day(site: str, browser: Any) -> None:
    page = open_page(browser, site + "health.html", LAPTOP, "light")
    try:
        cell = page.locator(".chronicle-chart--heatmap .chronicle-vega svg path[href], "
                            ".chronicle-chart--heatmap .chronicle-vega svg a").first
        if cell.count():
            cell.click()
        else:  # vega attaches the link to the mark: click the first cell's position
            page.locator(".chronicle-chart--heatmap .mark-rect path").first.click()
        page.wait_for_url("**/days/*.html", timeout=10_000)
    finally:
        page.context.close()


def test_screenshots_target_writes_both_images(site: str, browser: Any, tmp_path: Path) -> None:
    from tests.support.screenshots import take

    written = take(site, tmp_path, browser)
    assert sorted(p.name for p in written) == ["day.png", "home.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)
