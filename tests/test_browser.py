"""Real browser: charts become vega-embed SVGs when a reader reaches for them (and the
chart library loads only then), no console errors, no third-party request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.support.browser import (
    BUNDLE,
    CHROMIUM,
    PHONE,
    chromium,
    record_problems,
    serve,
    wake_charts,
)
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
        wake_charts(page)
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
        # The visible link: the home page's "since you last read" list holds one too, hidden
        # until the reader's second visit.
        page.locator("article a[href$='days/2026-08-22.html'] >> visible=true").first.click()
        page.wait_for_url("**/days/2026-08-22.html")
        # Material swapped the page in place: the first document's scripts ran once, and
        # the new page's charts wake as the first page's would.
        page.locator(".chronicle-chart").first.hover()
        page.locator(".chronicle-chart .chronicle-vega svg").first.wait_for(timeout=20_000)
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
        wake_charts(page)
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


def _asked(requests: list[str], what: str) -> list[str]:
    return [u for u in requests if u.endswith(what)]


_STATIC = """() => [...document.querySelectorAll('.chronicle-chart')].map(c => ({
  live: c.classList.contains('chronicle-chart--live'),
  shown: c.querySelector('img').getBoundingClientRect().height > 0,
  focusable: c.tabIndex === 0,
  named: !!c.getAttribute('aria-label')
         && c.getAttribute('aria-label') === c.querySelector('img').alt
}))"""


def _settled(page: Any) -> None:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1_000)


@pytest.mark.parametrize("path", ["index.html", "days/2026-08-21.html"])
def test_the_chart_library_loads_only_when_a_reader_reaches_for_a_chart(
        served: str, browser: Any, path: str) -> None:
    # The bundle, the heaviest file a page can ask for, used to load with every page that
    # has a chart and compete with the page's own bytes before its largest paint. Now the
    # static SVGs show and stay until a reader hovers, focuses, taps or clicks a chart:
    # then that chart goes live.
    page = browser.new_page()
    try:
        errors, foreign = record_problems(page, urlparse(served).netloc)
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(served + path, wait_until="load")
        _settled(page)
        charts = page.locator(".chronicle-chart")
        n = charts.count()
        assert n >= 3
        assert _asked(requests, BUNDLE) == [] and _asked(requests, ".vl.json") == []
        assert page.evaluate("typeof window.vegaEmbed") == "undefined"
        assert page.evaluate(_STATIC) == [
            {"live": False, "shown": True, "focusable": True, "named": True}] * n
        # The pointer comes over the first chart: the library loads, that chart goes live.
        charts.nth(0).hover()
        charts.nth(0).locator(".chronicle-vega svg").first.wait_for(timeout=20_000)
        assert len(_asked(requests, BUNDLE)) == 1
        assert [c["live"] for c in page.evaluate(_STATIC)] == [True] + [False] * (n - 1)
        # By keyboard: Tab reaches the next chart, which is drawn live and keeps the focus
        # (on its live SVG, named by the chart's description).
        alt = charts.nth(1).locator("img").get_attribute("alt")
        charts.nth(0).locator(".chronicle-vega svg").first.focus()
        for _ in range(30):
            page.keyboard.press("Tab")
            if charts.nth(1).evaluate("c => c.contains(document.activeElement)"):
                break
        charts.nth(1).locator(".chronicle-vega svg").first.wait_for(timeout=20_000)
        page.wait_for_function("() => document.activeElement.tagName === 'svg'")
        focused = page.evaluate("() => [document.activeElement.getAttribute('aria-label'), "
                                "!!document.activeElement.closest('.chronicle-chart--live')]")
        assert focused == [alt, True]
        assert len(_asked(requests, BUNDLE)) == 1  # loaded once a page
        assert [c["live"] for c in page.evaluate(_STATIC)][:2] == [True, True]
    finally:
        page.context.close()
    assert errors == []
    assert foreign == []


def test_a_tap_on_a_phone_draws_the_chart_live(served: str, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(served + "days/2026-08-21.html", wait_until="load")
        _settled(page)
        assert _asked(requests, BUNDLE) == []
        chart = page.locator(".chronicle-chart").first
        chart.tap()
        chart.locator(".chronicle-vega svg").first.wait_for(timeout=20_000)
        assert len(_asked(requests, BUNDLE)) == 1
        assert "chronicle-chart--live" in (chart.get_attribute("class") or "")
    finally:
        context.close()


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
