"""Real browser: charts become vega-embed SVGs, no console errors, no third-party request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.support.browser import CHROMIUM, chromium, record_problems, serve
from tests.support.site_factory import build_site, chronicle_build, make_chronicle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason="needs Debian chromium at /usr/bin/chromium (apt install chromium)"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("browser")
    made = make_chronicle(root / "c", nights=3)
    site = build_site(made.root, root / "site")
    # Served under a sub-path, like a project site on GitHub Pages.
    with serve(site, under="chronicle") as url:
        yield url


@pytest.fixture(scope="module")
def served_editions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("editions")
    made = make_chronicle(root / "c", nights=3, languages=("en", "zh"))
    with serve(chronicle_build(made.root, root / "site"), under="chronicle") as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    pytest.importorskip("playwright.sync_api")
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize("path", ["index.html", "days/2026-08-21.html", "threads/101.html",
                                  "charts.html"])
def test_page_renders_offline(served: str, browser: Any, path: str) -> None:
    page = browser.new_page()
    try:
        errors, foreign = record_problems(page, urlparse(served).netloc)
        page.goto(served + path, wait_until="load")
        charts = page.locator(".chronicle-chart")
        n = charts.count()
        if path.startswith(("days/", "charts")):
            assert n >= 3
        for i in range(n):
            charts.nth(i).locator(".chronicle-vega svg").first.wait_for(timeout=20_000)
        if n:
            assert page.locator(".chronicle-chart--live").count() == n
            # The palette toggle redraws with the dark theme and keeps the charts.
            assert page.locator(".chronicle-chart[data-theme=light]").count() == n
            page.evaluate("document.body.setAttribute('data-md-color-scheme', 'slate')")
            page.wait_for_function(
                "n => document.querySelectorAll('.chronicle-chart[data-theme=dark]')"
                ".length === n", arg=n, timeout=20_000)
            assert page.locator(".chronicle-chart[data-theme=dark] svg").count() == n
    finally:
        page.context.close()
    assert errors == []
    assert foreign == []


def test_instant_navigation_draws_charts(served: str, browser: Any) -> None:
    errors: list[str] = []
    page = browser.new_page()
    try:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served + "index.html", wait_until="load")
        # (the first such link may be in "since you last read", hidden on a first visit)
        page.locator("article a[href$='days/2026-08-22.html']:visible").first.click()
        page.wait_for_url("**/days/2026-08-22.html")
        page.locator(".chronicle-chart .chronicle-vega svg").first.wait_for(timeout=20_000)
        # Material swapped the page in place: the first document's scripts ran once.
        assert page.evaluate("typeof window.vegaEmbed") == "function"
    finally:
        page.context.close()
    assert errors == []


def test_a_chinese_day_page_draws_its_charts_and_switches_language(
        served_editions: str, browser: Any) -> None:
    page = browser.new_page()
    try:
        errors, foreign = record_problems(page, urlparse(served_editions).netloc)
        page.goto(served_editions + "zh/days/2026-08-21.html", wait_until="load")
        assert page.locator("html").get_attribute("lang") == "zh"
        charts = page.locator(".chronicle-chart")
        assert charts.count() == 4
        for i in range(4):
            charts.nth(i).locator(".chronicle-vega svg").first.wait_for(timeout=20_000)
        # The live chart speaks Chinese too: its title comes from the translated spec.
        title = charts.nth(0).locator(".chronicle-vega svg .role-title-text").first
        text = title.text_content() or ""
        assert "2026年8月21日" in text and "损失" in text, text
        page.locator("a.md-select__link[hreflang=en]").first.dispatch_event("click")
        page.wait_for_url("**/chronicle/days/2026-08-21.html")
        assert page.locator("html").get_attribute("lang") == "en"
    finally:
        page.context.close()
    assert errors == []
    assert foreign == []


@pytest.mark.parametrize(("query", "page"), [("丢弃率", "days/"), ("预测", "prediction.html")])
def test_chinese_search_finds_pages(served_editions: str, browser: Any, query: str,
                                    page: str) -> None:
    tab = browser.new_page()
    try:
        tab.goto(served_editions + "zh/index.html", wait_until="load")
        tab.locator("input.md-search__input").click()
        # Typed characters arrive as text input; Material searches on the key that follows.
        tab.keyboard.type(query)
        tab.keyboard.press("End")
        results = tab.locator(".md-search-result__item a")
        results.first.wait_for(timeout=20_000)
        # Read every link in one go: Material may render the list again meanwhile, and a
        # count followed by one read per index waited 30 s for an item that had gone.
        links = results.evaluate_all("els => els.map(e => e.getAttribute('href') || '')")
    finally:
        tab.context.close()
    assert any(page in link for link in links), links
