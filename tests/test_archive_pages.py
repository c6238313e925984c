"""The Failures page (render/archive_pages.py), read back from a real build in English and
Chinese: open records first, then by day, newest first; one anchor per record, which every
item of the failures feeds links; hostile ids; evidence items apart."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import feedparser
import pytest

from chronicle.models import FailureRecord, SourceStatus
from chronicle.render.archive_pages import failure_anchor, failures_page
from chronicle.render.i18n import ENGLISH
from chronicle.store import Store, write_snapshot
from tests.support.ledger import ledger_of
from tests.support.site_factory import SITE_URL, Built, chronicle_build, make_chronicle

SIXTH = datetime(2026, 8, 25, 3, 17, tzinfo=UTC)
HOSTILE_IDS = ['x" onmouseover="alert(1)', "<script>alert(1)</script>", "rack 7 / power",
               "故障-1", "a b", "a~20b", "#frag?q=1&r=2"]
SAFE_ANCHOR = re.compile(r"^failure:[A-Za-z0-9._~-]+$")


def _at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 8, day, hour, minute, tzinfo=UTC)


# Beside make_chronicle's rack-3 (closed, 22 Aug) and slow-io (open since 23 Aug): two
# records a day apart on 21 Aug, a hostile id per day, one of them open, and evidence of
# every shape (two text items, a link, a javascript: link that must stay text).
EXTRA = [
    FailureRecord("gh-77", "issue", _at(21, 2), _at(21, 3, 30), "Two racks rebooted", 24.0,
                  ("W&B run run-a step 100 at 2026-08-21T02:00:00Z",
                   "W&B run run-a step 110 at 2026-08-21T03:30:00Z",
                   "https://github.com/test-org/test-repo/issues/77"), "github"),
    FailureRecord("gap-run-a-900", "gap", _at(21, 20), _at(22, 1), "no metrics for 5 h", 40.0,
                  ("W&B run run-a step 900",), "metrics"),
    *(FailureRecord(fid, "manual", _at(20 + i % 4, 10 + i),
                    None if i == 0 else _at(20 + i % 4, 11 + i), f"What <b>{fid}</b> | **broke**",
                    None, ("javascript:alert(1)", f"note {i}"), "manual")
      for i, fid in enumerate(HOSTILE_IDS)),
]


class _Page(HTMLParser):
    """A built Failures page: every id, tag and attribute name; the headings and record
    anchors in order; each record's evidence items (the row its anchor starts)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.hrefs: list[str] = []
        self.order: list[tuple[str, str]] = []  # ("h2" | "h3" | "record", text or anchor)
        self.evidence: dict[str, list[str]] = {}  # anchor -> its evidence items' text
        self._heading: str | None = None
        self._row: str | None = None
        self._evidence = False
        self._item: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        self.attributes |= set(a)
        if "id" in a:
            self.ids.append(a["id"])
        if a.get("href"):
            self.hrefs.append(a["href"])
        if tag in ("h2", "h3"):
            self._heading = ""
            self.order.append((tag, ""))
        elif tag == "tr" or tag == "table":
            self._row = None
        elif tag == "a" and a.get("id", "").startswith("failure:"):
            self._row = a["id"]
            self.order.append(("record", a["id"]))
            self.evidence[a["id"]] = []
        elif tag == "ol" and "chronicle-evidence" in a.get("class", "").split():
            self._evidence = True
        elif tag == "li" and self._evidence:
            self._item = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3") and self._heading is not None:
            self.order[-1] = (tag, self._heading.replace("¶", "").strip())
            self._heading = None
        elif tag == "li" and self._item is not None and self._row is not None:
            self.evidence[self._row].append("".join(self._item).strip())
            self._item = None
        elif tag == "ol":
            self._evidence = False

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading += data
        if self._item is not None:
            self._item.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path, list[FailureRecord]]:
    """Four sealed nights in English and Chinese, then a snapshot adding the records above."""
    root = tmp_path_factory.mktemp("failures")
    made = make_chronicle(root / "c", nights=4, languages=("en", "zh"))
    store = Store(made.config.docs_dir)
    failures = [*store.load_failures(), *EXTRA]
    write_snapshot(store, SIXTH, [], None, None, failures,
                   [SourceStatus("wandb", True), SourceStatus("github", True)])
    return made, chronicle_build(made.root, root / "site"), failures


def test_open_records_come_first_then_each_day_newest_first(
        built: tuple[Built, Path, list[FailureRecord]]) -> None:
    _, site, failures = built
    order = _parse(site / "failures.html").order
    h2 = [text for tag, text in order if tag == "h2"]
    assert h2 == ["Still open", "Totals by kind", "Ended, newest first"]
    records = [text for tag, text in order if tag == "record"]
    by_anchor = {failure_anchor(f.id): f for f in failures}
    assert sorted(records) == sorted(by_anchor)  # every record once
    still_open = [r for r in records if by_anchor[r].end is None]
    assert records[:len(still_open)] == still_open and len(still_open) == 2
    assert order.index(("h2", "Totals by kind")) > order.index(("record", still_open[-1]))
    # After "Ended": a heading per UTC day, newest first, each over that day's records,
    # the latest first.
    ended = order[order.index(("h2", "Ended, newest first")) + 1:]
    days = [text for tag, text in ended if tag == "h3"]
    assert days == sorted(days, reverse=True) and len(days) == len(set(days)) == 4
    day = ""
    seen: list[FailureRecord] = []
    for tag, text in ended:
        if tag == "h3":
            day = text
        elif tag == "record":
            record = by_anchor[text]
            assert record.end is not None and record.start.date().isoformat() == day
            seen.append(record)
    assert seen == sorted(seen, key=lambda f: f.start, reverse=True)
    assert [f.id for f in seen[-2:]] == ["gh-77", HOSTILE_IDS[4]]  # 21 Aug 02:00, 20 Aug
    chinese = _parse(site / "zh" / "failures.html").order
    assert [text for tag, text in chinese if tag == "record"] == records
    assert len([text for tag, text in chinese if tag == "h3"]) == len(days)


def test_every_record_has_one_anchor_and_every_feed_item_links_it(
        built: tuple[Built, Path, list[FailureRecord]]) -> None:
    _, site, failures = built
    for edition in ("", "zh/"):
        page = _parse(site / edition / "failures.html")
        anchors = [i for i in page.ids if i.startswith("failure:")]
        assert len(anchors) == len(set(anchors)) == len(failures), edition
        assert len(page.ids) == len(set(page.ids)), edition
        rss = feedparser.parse((site / edition / "feed_failures.xml").read_bytes())
        items = json.loads((site / edition / "feed_failures.json").read_text())["items"]
        assert not rss.bozo and len(rss.entries) == len(items) == len(failures)
        targets = ([(e.id, e.link) for e in rss.entries]
                   + [(i["id"], i["url"]) for i in items])
        for guid, link in targets:
            assert guid == link, guid
            parts = urlsplit(link)
            assert f"{parts.scheme}://{parts.netloc}{parts.path}" == (
                f"{SITE_URL}{edition}failures.html")
            assert parts.fragment in anchors, link  # the browser's fragment: unquoted
    # Items published with a plain id keep their GUID.
    rss = feedparser.parse((site / "feed_failures.xml").read_bytes())
    assert {f"{SITE_URL}failures.html#failure:rack-3", f"{SITE_URL}failures.html#failure:gh-77",
            f"{SITE_URL}failures.html#failure:slow-io"} <= {e.id for e in rss.entries}


def test_a_hostile_id_gets_a_safe_unique_anchor_and_injects_nothing(
        built: tuple[Built, Path, list[FailureRecord]]) -> None:
    _, site, _ = built
    anchors = [failure_anchor(i) for i in HOSTILE_IDS]
    assert len(set(anchors)) == len(anchors)
    assert all(SAFE_ANCHOR.match(a) for a in anchors), anchors
    for edition in ("", "zh/"):
        page = _parse(site / edition / "failures.html")
        assert set(anchors) <= set(page.ids)
        # The records' words are text: no tag, attribute or link of theirs reaches the page.
        assert "b" not in page.tags and "onmouseover" not in page.attributes
        assert not any(h.lower().startswith("javascript:") for h in page.hrefs)
        text = (site / edition / "failures.html").read_text(encoding="utf-8")
        assert "<script>alert" not in text and "&lt;b&gt;" in text


@pytest.mark.parametrize(("failure_id", "anchor"), [
    ("gap-hero-sim-cc935d-2100", "failure:gap-hero-sim-cc935d-2100"),
    ("fork-hero-sim-6caf41", "failure:fork-hero-sim-6caf41"),
    ("gh-9094", "failure:gh-9094"),
    ("rack_7.power", "failure:rack_7.power"),
    ("a b", "failure:a~20b"),
    ("a~20b", "failure:a~7E20b"),
    ("é", "failure:~C3~A9"),
    ("", "failure:"),
])
def test_failure_anchor_keeps_plain_ids_and_escapes_every_other_character(
        failure_id: str, anchor: str) -> None:
    assert failure_anchor(failure_id) == anchor


def test_evidence_items_are_separate_numbered_items(
        built: tuple[Built, Path, list[FailureRecord]]) -> None:
    _, site, _ = built
    for edition in ("", "zh/"):
        page = _parse(site / edition / "failures.html")
        assert page.evidence["failure:gh-77"] == [
            "W&B run run-a step 100 at 2026-08-21T02:00:00Z",
            "W&B run run-a step 110 at 2026-08-21T03:30:00Z",
            "github.com/test-org/test-repo/issues/77"]
        assert page.evidence[failure_anchor(HOSTILE_IDS[1])] == ["javascript:alert(1)", "note 1"]
    html = (site / "failures.html").read_text(encoding="utf-8")
    assert '<a href="https://github.com/test-org/test-repo/issues/77">' in html


def test_with_nothing_open_the_page_says_so() -> None:
    closed = FailureRecord("rack-3", "manual", _at(22, 4), _at(22, 5, 30), "Rack 3 lost power")
    page = failures_page([closed], "2026-08-23T031700Z", ENGLISH, ledger_of([closed]))
    still_open = page[page.index("## Still open"):page.index("## Totals by kind")]
    assert "None: every failure record known at this snapshot has ended." in still_open
    assert "failure:" not in still_open and 'id="failure:rack-3"' in page
