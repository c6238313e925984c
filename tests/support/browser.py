"""Look at a built site the way a reader does: served on 127.0.0.1, opened in Debian's
chromium through Playwright, checked with axe-core (axe-playwright-python).

Shared by the accessibility tests and `make screenshots` (tests/support/screenshots.py).
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SERIOUS = ("serious", "critical")
# Every chart on the page has become an interactive chart (or kept its static SVG).
CHARTS_DRAWN = ("() => [...document.querySelectorAll('.chronicle-chart')]"
                ".every(c => c.classList.contains('chronicle-chart--live'))")


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium through Playwright (a browser download is impossible here),
    closed on the way out. Callers that may run without Playwright skip first."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(site: Path, under: str = "") -> Iterator[str]:
    """Serve `site` on 127.0.0.1 (at the sub-path `under`, like a project site on GitHub
    Pages, when given); yield its base URL (ending in /)."""
    root = site
    if under:
        root = site.parent / f"{site.name}-www"
        root.mkdir(exist_ok=True)
        if not (root / under).exists():
            (root / under).symlink_to(site)
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/" + (f"{under}/" if under else "")
    finally:
        server.shutdown()
        server.server_close()


def record_problems(page: Any, host: str) -> tuple[list[str], list[str]]:
    """Start recording `page`'s console errors and uncaught exceptions, and every request
    to a host but `host` (data: URLs aside); return the two lists, filled as it runs."""
    errors: list[str] = []
    foreign: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: foreign.append(r.url)
            if urlparse(r.url).netloc != host and not r.url.startswith("data:") else None)
    return errors, foreign


def open_page(browser: Any, url: str, viewport: dict[str, int], scheme: str) -> Any:
    """Return a page at `url` in a fresh context, its charts drawn (20 s at most)."""
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_function(CHARTS_DRAWN, timeout=20_000)
    page.wait_for_timeout(200)  # Material wraps tables, our script marks scrolling ones
    return page


def serious_violations(page: Any) -> list[str]:
    """Return axe-core's serious and critical violations on the page: "id (n nodes): ..."."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({len(v['nodes'])} nodes): {v['nodes'][0]['target']}"
            for v in found if v["impact"] in SERIOUS]


def layout_problems(page: Any, wide: bool) -> list[str]:
    """Return sideways scrolling: the page wider than the window, a table wider than its
    box on a wide screen, or a chart without a name."""
    return list(page.evaluate("""wide => {
      const out = [];
      const doc = document.documentElement;
      if (doc.scrollWidth > window.innerWidth) out.push(`page ${doc.scrollWidth}px wide`);
      if (wide) document.querySelectorAll('.md-typeset__scrollwrap').forEach((box, i) => {
        if (box.scrollWidth > box.clientWidth + 1) out.push(`table ${i} scrolls sideways`);
      });
      document.querySelectorAll('.chronicle-chart').forEach((c, i) => {
        const img = c.querySelector('img');
        const svg = c.querySelector('.chronicle-vega svg');
        if (!img || !img.alt) out.push(`chart ${i}: no text alternative`);
        if (!svg || !svg.getAttribute('aria-label')) out.push(`chart ${i}: live chart unnamed`);
      });
      return out;
    }""", wide))
