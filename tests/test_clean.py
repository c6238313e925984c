"""Untrusted strings at the edges (chronicle/clean.py): control characters never reach the
store (a feed could not be written again), credentials in WANDB_BASE_URL / GITHUB_API_URL
never reach a message, a file, a page or the search index. Through the CLI, with the real
clients against the fake servers."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import feedparser
import pytest
import yaml

from chronicle.clean import clean_line, clean_text, safe_url, scrub_urls
from chronicle.errors import EXIT_DEGRADED, EXIT_USAGE
from chronicle.render.feeds import Item, rss
from chronicle.render.i18n import ENGLISH
from chronicle.store import Store
from tests.support.commands import cli, night
from tests.support.fakes.hero import HERO, hero_rows
from tests.support.fakes.wandb_server import Failure, SyntheticRows
from tests.support.live import Live

NASTY = 'EP hero "OOM" \x07in\x00 the\x1b[31m train step\x0b\ufffe'
SECRET = "hunter2-SECRET-PASSWORD"
TOKEN = "tok-SECRET-QUERY-TOKEN"


def test_clean_text_keeps_what_xml_can_carry() -> None:
    kept = "a\tb\nc\r\nd e\U0001f600"
    assert clean_text("a\tb\nc\r\nd\x00 \x07e\x1b\ufffe\U0001f600") == kept
    assert clean_line(" two\nlines\x85here ") == " two lines here "
    assert clean_text(NASTY) == 'EP hero "OOM" in the[31m train step'


@pytest.mark.parametrize(("url", "safe"), [
    (f"https://user:{SECRET}@wandb.example:8443/api?x=1&token={TOKEN}#f",
     "https://wandb.example:8443/api?x=1&token=***#f"),
    ("https://api.github.com", "https://api.github.com"),
    ("https://h/p?q=a%20b#issuecomment-1", "https://h/p?q=a%20b#issuecomment-1"),
    (f"http://{SECRET}@[::1]:80/", "http://[::1]:80/"),
])
def test_safe_url_drops_userinfo_and_secret_parameters(url: str, safe: str) -> None:
    assert safe_url(url) == safe
    said = scrub_urls(f'Post "{url}": connection refused')
    assert SECRET not in said and TOKEN not in said


def test_a_store_holding_control_characters_still_makes_a_feed() -> None:
    item = Item("g", datetime(2026, 8, 21, tzinfo=UTC), NASTY, "https://x/", f"<p>{NASTY}</p>")
    feed = feedparser.parse(rss([item], "t", "d", "https://x/", "https://x/f.xml",
                                datetime(2026, 8, 21, tzinfo=UTC), ENGLISH))
    assert not feed.bozo and feed.entries[0].title == clean_text(NASTY)


class _Toc(HTMLParser):
    """The text of the table-of-contents links of a Material page."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[str] = []
        self._in = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = dict(attrs).get("class") or ""
        if tag == "nav" and "md-nav--secondary" in classes:
            self._in = 1
        elif self._in and tag == "a":
            self.entries.append("")
            self._in = 2

    def handle_endtag(self, tag: str) -> None:
        if self._in == 2 and tag == "a":
            self._in = 1
        elif self._in and tag == "nav":
            self._in = 0

    def handle_data(self, data: str) -> None:
        if self._in == 2:
            self.entries[-1] += data


def test_control_characters_in_an_issue_never_reach_the_store_and_quotes_stay_quotes(
        live_world: Live) -> None:
    issue = next(i for i in live_world.github.world["issues"] if i["number"] == 8508)
    issue["title"] = NASTY
    issue["comments"][0]["versions"][0]["body"] += " \x00\x1b[0m end"
    live_world.github.now = datetime(2026, 8, 21, 3, 17, tzinfo=UTC)  # GitHub as of night 1
    root = live_world.root
    result = cli("snapshot", "--dir", str(root), "--as-of", night(1))
    assert result.exit_code == 0, result.output
    store = Store(root / "docs")
    stored = [t for states in store.thread_history().values() for _, t in states]
    texts = [t.title for t in stored] + [c.body for t in stored for c in t.comments]
    assert texts and all(clean_text(text) == text for text in texts)
    failure = next(f for f in store.load_failures() if f.id == "gh-8508")
    assert failure.what == clean_line(NASTY)

    built = cli("build", "--dir", str(root))
    assert built.exit_code == 0, built.output
    feed = feedparser.parse((root / "site" / "feed_failures.xml").read_bytes())
    assert not feed.bozo
    assert any('"OOM"' in e.title for e in feed.entries)
    # The sealed page's heading shows the title as typed in the table of contents.
    toc = _Toc()
    toc.feed((root / "site" / "days" / "2026-08-20.html").read_text())
    titled = [e for e in toc.entries if "8508" in e]
    assert titled and '"OOM"' in titled[0] and "&#34;" not in titled[0], toc.entries


def _secret_free(root: Path, *outputs: str) -> None:
    for text in outputs:
        assert SECRET not in text and TOKEN not in text, text
    leaked = [p for p in root.rglob("*") if p.is_file()
              and (SECRET.encode() in p.read_bytes() or TOKEN.encode() in p.read_bytes())]
    assert not leaked, leaked


def test_credentials_in_source_urls_reach_no_message_file_or_page(
        live_world: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    root, wandb, github = live_world.root, live_world.wandb, live_world.github
    for name, url in (("WANDB_BASE_URL", wandb.url), ("GITHUB_API_URL", github.base_url)):
        monkeypatch.setenv(name, url.replace("http://", f"http://user:{SECRET}@")
                           + f"/?access_token={TOKEN}")
    first = cli("snapshot", "--dir", str(root), "--as-of", night(1))
    wandb.failure, github.failure = Failure("500"), "500"
    second = cli("snapshot", "--dir", str(root), "--as-of", night(2))
    assert second.exit_code == EXIT_DEGRADED, second.output
    assert re.search(r"source wandb failed: .*127\.0\.0\.1", second.output + first.output)
    assert "source github failed" in second.output
    built = cli("build", "--dir", str(root))
    assert built.exit_code == 0, built.output
    latest = json.loads((root / "site/api/latest.json").read_text())
    assert {s["source"] for s in latest["stale_sources"]} == {"wandb", "github"}
    _secret_free(root, first.output, second.output, built.output)


def test_control_characters_in_failures_yml_are_refused(live_world: Live) -> None:
    root = live_world.root
    (root / "failures.yml").write_text(
        '- id: rack-7\n  start: 2026-08-20T04:10:00Z\n  what: "power \\x07 cut"\n'
        "  evidence: [https://example.org/x]\n")
    result = cli("snapshot", "--dir", str(root), "--as-of", night(1))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "failures.yml" in result.output
    assert "[0].what: holds a control character (U+0007) at character 7" in result.output
    assert list((root / "docs" / "data").iterdir()) == []


# What an attacker types where chronicle reads text: a NUL, a bell, a screen clear, a
# window-title escape, a C1 CSI and DEL.
HOSTILE = "\x00\x07\x1b[2J\x1b]0;owned\x07\x9b31m\x7f"
SHOWN = "[2J]0;owned31m"  # what is left of it: printable text
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def test_a_hostile_pr_title_and_wandb_config_value_reach_no_sealed_page_or_site(
        live_world: Live) -> None:
    root, wandb, github = live_world.root, live_world.wandb, live_world.github
    config = yaml.safe_load((root / "chronicle.yml").read_text())
    config["github"]["pulls"] = {"paths": [], "labels": ["hero-run"]}
    (root / "chronicle.yml").write_text(yaml.safe_dump(config))
    # Two days of rows, so that night 2 has rows logged after the config was edited.
    run = wandb.runs[f"e/p/{HERO}"]
    start = datetime(2026, 8, 20, 0, 10, tzinfo=UTC).timestamp()
    run.rows = SyntheticRows(hero_rows(), 575, start_time=start, seconds_per_step=300.0)
    github.world["issues"].append({
        "number": 9001, "id": 3300009001, "user": f"mallory{HOSTILE}", "pull_request": True,
        "title": f"Hostile {HOSTILE} title", "body": "", "labels": ["hero-run", f"x{HOSTILE}"],
        "created_at": "2026-08-21T09:00:00Z", "closed_at": "2026-08-21T10:00:00Z",
        "merged_at": "2026-08-21T10:00:00Z", "files": [], "comments": [],
        "base": f"main{HOSTILE}"})
    first = cli("snapshot", "--dir", str(root), "--as-of", night(1))
    assert first.exit_code == 0, first.output
    run.config["notes"] = {"value": f"hostile{HOSTILE}value"}  # edited in place overnight
    second = cli("snapshot", "--dir", str(root), "--as-of", night(2))
    assert second.exit_code == 0, second.output
    built = cli("build", "--dir", str(root))
    assert built.exit_code == 0, built.output

    # Both reached the record and the pages, as text...
    day = json.loads((root / "docs/days/2026-08-21.json").read_text())
    shown = {(c["kind"], str(c["after"])) for c in day["changes"]}
    assert {("pull_request", f"Hostile {SHOWN} title"),
            ("config", f"hostile{SHOWN}value")} <= shown, day["changes"]
    for page in ("site/days/2026-08-21.html", "site/zh/days/2026-08-21.html"):
        html = (root / page).read_text()
        assert f"Hostile {SHOWN} title" in html and f"hostile{SHOWN}value" in html, page
    # ...and no control character is anywhere in the store, the sealed days or the site.
    texts = [p for folder in ("docs", "site") for p in (root / folder).rglob("*")
             if p.suffix in (".md", ".json", ".html", ".xml", ".svg") and p.is_file()]
    assert len(texts) > 100
    dirty = [p for p in texts if _CONTROLS.search(p.read_text(encoding="utf-8"))]
    assert not dirty, dirty[:5]
