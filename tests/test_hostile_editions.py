"""Hostile issue text through the real GitHub client into both editions, read back as HTML
and run in Chromium: a comment is data in every language (site/outputs/editions.py renders
each edition natively; nothing rewrites a rendered page by pattern)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, chromium, serve
from tests.support.commands import cli, night
from tests.support.live import Live

# The vector that once ran script on zh pages: a Markdown link whose *title* holds Markdown
# link syntax. A regex that rewrote links to root-only files on translated pages matched it
# inside the sanitised title attribute and wrote `<a href="...">` there: its quote closed
# the title, and the HTML tokenizer reads the rest of the path as attributes (`/` separates
# them), here an autofocus and an onfocus handler that fire on page load.
HOSTILE = (
    'Checked [the dashboard](https://example.com/ok "[x](y/autofocus/onfocus=alert`1`/z)") '
    'and [more](https://example.com/ok "[<img src=x onerror=alert(1)>](y.md)") '
    'and <img src=x onerror=alert(2)> and [a link](javascript:alert(3)) and '
    '<a href="https://example.com/" title="[<svg onload=alert(4)>](z)">this</a> '
    '`[<img src=x onerror=alert(5)>](w.md)` <script>alert(6)</script>'
)
PAGES = ("threads/8508.html", "days/2026-08-21.html")


class _Dangerous(HTMLParser):
    """Every event-handler attribute, javascript: URL and script with our marker."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name in ("href", "src") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and "alert(" in data:
            self.found.append(f"<script>{data[:80]}")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    monkeypatch = pytest.MonkeyPatch()
    tmp = tmp_path_factory.mktemp("hostile")
    from tests.support.live import live_servers

    try:
        with live_servers(tmp, monkeypatch) as live:
            yield _built(live)
    finally:
        monkeypatch.undo()


def _built(live: Live) -> Path:
    issue = next(i for i in live.github.world["issues"] if i["number"] == 8508)
    issue["comments"].append({"id": 5363999999, "user": "mallory",
                              "created_at": "2026-08-21T10:50:00Z",
                              "versions": [{"at": "2026-08-21T10:50:00Z", "body": HOSTILE}]})
    live.github.now = datetime(2026, 8, 22, 3, 17, tzinfo=UTC)
    for n in (1, 2):
        result = cli("snapshot", "--dir", str(live.root), "--as-of", night(n))
        assert result.exit_code == 0, result.output
    built = cli("build", "--dir", str(live.root))
    assert built.exit_code == 0, built.output
    site = live.root / "site"
    assert (site / "zh" / PAGES[0]).is_file() and (site / "zh" / PAGES[1]).is_file()
    return site


def test_no_page_of_either_edition_carries_markup_from_the_comment(hostile_site: Path) -> None:
    checked = 0
    for path in sorted(hostile_site.rglob("*.html")):
        parser = _Dangerous()
        parser.feed(path.read_text(encoding="utf-8"))
        assert parser.found == [], f"{path.relative_to(hostile_site)}: {parser.found}"
        checked += 1
    assert checked >= 20
    # The comment is there, as text, in both editions' thread and day pages.
    for edition in ("", "zh/"):
        for page in PAGES:
            html = (hostile_site / edition / page).read_text(encoding="utf-8")
            assert "the dashboard" in html and "mallory" in html, edition + page


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")
def test_the_comment_runs_no_script_in_chromium(hostile_site: Path) -> None:
    pytest.importorskip("playwright.sync_api")
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    with serve(hostile_site, under="chronicle") as url, chromium() as browser:
        for edition in ("", "zh/"):
            for page_path in PAGES:
                page: Any = browser.new_page()
                page.on("dialog", on_dialog)
                page.goto(url + edition + page_path, wait_until="load")
                page.wait_for_timeout(500)
                handlers = page.evaluate(
                    "() => [...document.querySelectorAll('*')].flatMap(e => "
                    "[...e.attributes].filter(a => a.name.startsWith('on'))"
                    ".map(a => e.tagName + ' ' + a.name))")
                assert handlers == [], (edition + page_path, handlers)
                assert page.get_by_text("the dashboard").count() >= 1, edition + page_path
                page.close()
    assert dialogs == []
