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
