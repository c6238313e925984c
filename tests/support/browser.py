"""Look at a built site the way a reader does: served on 127.0.0.1, opened in Debian's
chromium through Playwright, checked with axe-core (axe-playwright-python).

Shared by the accessibility tests and `make screenshots` (tests/support/screenshots.py).
"""

from __future__ import annotations

import functools
import gzip
import http.server
import mimetypes
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
# A window this narrow is a phone's: a touch screen whose pointer cannot hover. Material
# decides some things by `(hover)` (a code block that scrolls is focusable only where the
# pointer hovers), so a phone is opened as one, not as a narrow desktop window.
PHONE_WIDTH = 600
SERIOUS = ("serious", "critical")
# Rules of lower impact held to all the same: two scrolling tables named alike are
# landmarks a screen reader cannot tell apart.
ALSO_REFUSED = ("landmark-unique",)
# Every chart on the page has become an interactive chart.
CHARTS_DRAWN = ("() => [...document.querySelectorAll('.chronicle-chart')]"
                ".every(c => c.classList.contains('chronicle-chart--live'))")
# The interactive charts' library, fetched only when a reader reaches for a chart.
BUNDLE = "assets/javascripts/vega-bundle.js"


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


# What GitHub Pages sends gzip-compressed to a browser that accepts it (text formats).
COMPRESSED = frozenset({".html", ".css", ".js", ".json", ".svg", ".xml", ".md", ".txt"})


class _Gzip(_Quiet):
    """A file of a COMPRESSED type, gzip-compressed when the request accepts it, as GitHub
    Pages serves it; anything else (images, folders, ranges) as the plain handler does."""

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSED and path.is_file()):
            super().do_GET()
            return
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", mimetypes.guess_type(path.name)[0]
                         or "application/octet-stream")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve(site: Path, under: str = "", compress: bool = False) -> Iterator[str]:
    """Serve `site` on 127.0.0.1 (at the sub-path `under`, like a project site on GitHub
    Pages, when given; text files gzip-compressed with `compress`, as Pages sends them);
    yield its base URL (ending in /)."""
    root = site
    if under:
        root = site.parent / f"{site.name}-www"
        root.mkdir(exist_ok=True)
        if not (root / under).exists():
            (root / under).symlink_to(site)
    handler = functools.partial(_Gzip if compress else _Quiet, directory=str(root))
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


def open_page(browser: Any, url: str, viewport: dict[str, int], scheme: str,
              live: bool = True) -> Any:
    """Return a page at `url` in a fresh context, with its charts drawn live (`wake_charts`)
    unless `live` is false (then as it loads: each chart its static SVG); a viewport
    narrower than PHONE_WIDTH is a phone's touch screen."""
    phone = viewport["width"] < PHONE_WIDTH
    context = browser.new_context(viewport=viewport, color_scheme=scheme, has_touch=phone,
                                  is_mobile=phone)
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_timeout(200)  # Material wraps tables, our script marks scrolling ones
    if live:
        wake_charts(page)
    return page


def wake_charts(page: Any) -> None:
    """Reach every chart of `page` as a keyboard reader does (focus lands on each, which
    draws it live), wait until all are drawn (20 s at most), then take the focus away."""
    charts = page.locator(".chronicle-chart")
    for i in range(charts.count()):
        charts.nth(i).focus()
    page.wait_for_function(CHARTS_DRAWN, timeout=20_000)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(100)


def serious_violations(page: Any) -> list[str]:
    """Return axe-core's serious and critical violations on the page, and those of
    ALSO_REFUSED: "id (n nodes): ..."."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({len(v['nodes'])} nodes): {v['nodes'][0]['target']}"
            for v in found if v["impact"] in SERIOUS or v["id"] in ALSO_REFUSED]


def layout_problems(page: Any, wide: bool) -> list[str]:
    """Return sideways scrolling: the page wider than the window, a table wider than its
    box on a wide screen, or a chart without a name (a static chart also out of the tab
    order: focusing it is how a keyboard reader draws it live)."""
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
        if (!c.classList.contains('chronicle-chart--live')) {
          if (c.tabIndex !== 0 || !c.getAttribute('aria-label')) {
            out.push(`chart ${i}: static chart unnamed or out of the tab order`);
          }
        } else if (!svg || !svg.getAttribute('aria-label') || svg.tabIndex !== 0) {
          out.push(`chart ${i}: live chart unnamed or out of the tab order`);
        }
      });
      return out;
    }""", wide))


def svg_text_problems(page: Any, minimum: float = 4.5) -> list[str]:
    """Return each piece of text drawn in a live chart whose contrast against what it is
    drawn on is below `minimum` (axe cannot see text inside SVG): "text: ratio".

    Measured twice: as seen (its colour through its opacities), and its colour as given,
    as a checker that reads the colour without its opacity does. A name's outline (no fill
    drawn, vega.py `halo`) must not carry a colour such a checker fails."""
    return list(page.evaluate("""minimum => {
      const rgb = s => { const m = /rgba?\\(([^)]+)\\)/.exec(s || "");
                         return m ? m[1].split(",").map(parseFloat) : null; };
      const lum = c => { const a = c.slice(0, 3).map(v => { v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
        return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2]; };
      const under = el => { for (; el; el = el.parentElement) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c && (c.length < 4 || c[3] > 0)) return c; } return [255, 255, 255]; };
      const out = [];
      document.querySelectorAll(".chronicle-chart--live svg text").forEach(t => {
        const words = t.textContent.trim();
        const st = getComputedStyle(t);
        if (!words || st.visibility === "hidden" || st.display === "none") return;
        let alpha = 1;
        for (let el = t; el && el.tagName !== "svg"; el = el.parentElement) {
          const cs = getComputedStyle(el);
          alpha *= parseFloat(cs.opacity || "1");
        }
        alpha *= parseFloat(st.fillOpacity || "1");
        const fill = rgb(st.fill);
        if (!fill || (fill.length > 3 && fill[3] === 0)) return;  // none, transparent
        const back = under(t.closest("svg").parentElement);
        const contrast = c => { const [a, b] = [lum(c), lum(back)];
          return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
        const given = contrast(fill);
        if (given < minimum) out.push(`${words.slice(0, 40)} (as given): ${given.toFixed(2)}`);
        if (alpha === 0) return;
        alpha *= fill.length > 3 ? fill[3] : 1;
        const seen = contrast([0, 1, 2].map(i => fill[i] * alpha + back[i] * (1 - alpha)));
        if (seen < minimum) out.push(`${words.slice(0, 40)}: ${seen.toFixed(2)}`);
      });
      return out;
    }""", minimum))
