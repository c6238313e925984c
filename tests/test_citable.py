"""The citable archive, read back from a real build: citations, data files, chain, feeds."""

from __future__ import annotations

import hashlib
import html
import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import feedparser
import jsonschema
import pytest
import yaml

from chronicle.models import SourceStatus
from chronicle.render.cite import Entry, bibtex
from chronicle.store import Store, verify_store, write_snapshot
from tests.support.site_factory import SITE_URL, Built, build_site, make_chronicle

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "tests" / "fixtures" / "cff-1.2.0-trimmed.schema.json").read_text())
DAY = "2026-08-21"
FIFTH = datetime(2026, 8, 25, 3, 17, tzinfo=UTC)
CORRECTION = {
    "schema": "chronicle-correction/1", "id": f"{DAY}/tokens.day/2026-08-25T031700Z", "day": DAY,
    "figure": "tokens.day", "sealed": 1.0e11, "previous": 1.0e11, "corrected": 1.2e11,
    "sealed_by": "2026-08-22T031700Z", "found_by": "2026-08-25T031700Z",
    "found_at": "2026-08-25T03:17:00Z", "reason": "3 metric row(s) of this day arrived late",
}


def _text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, Path, Path]:
    """Four sealed nights, a build; then a fifth snapshot with a correction, a rebuild."""
    root = tmp_path_factory.mktemp("archive")
    made = make_chronicle(root / "c", nights=4)
    before = build_site(made.root, root / "site1")
    store = Store(made.config.docs_dir)
    write_snapshot(store, FIFTH, [], None, None, store.load_failures(),
                         [SourceStatus("wandb", True), SourceStatus("github", True)],
                         extra={"corrections": [CORRECTION]})
    return made, before, build_site(made.root, root / "site2")


def test_citation_names_permalink_snapshot_and_the_served_sha256(
        archive: tuple[Built, Path, Path]) -> None:
    made, _, site = archive
    sealer = Store(made.config.docs_dir).sealed_days()[date.fromisoformat(DAY)]
    served = (site / "days" / f"{DAY}.md").read_bytes()
    digest = hashlib.sha256(served).hexdigest()
    assert served == (made.config.docs_dir / "days" / f"{DAY}.md").read_bytes()
    text = _text(site / "days" / f"{DAY}.html")
    block = text[text.index("Cite this entry¶"):text.index("Data files¶")]
    assert f"Permalink: {SITE_URL}days/{DAY}.html" in block
    assert f"Snapshot: {sealer.id}" in block
    assert f"sha256 of the sealed page: {digest}" in block
    assert "@misc{test-run-7b-day002," in block
    assert f"Snapshot {sealer.id}, sha256 {digest}" in block
    index = json.loads((site / "api" / "index.json").read_text())
    assert {d["date"]: d["sha256"] for d in index["days"]}[DAY] == digest
    csl = json.loads((site / "days" / DAY / "cite.json").read_text())
    assert csl[0]["URL"] == f"{SITE_URL}days/{DAY}.html" and digest in csl[0]["note"]
    assert csl[0]["version"] == sealer.id and csl[0]["issued"]["date-parts"] == [[2026, 8, 21]]


def test_data_files_link_the_exact_bytes_the_page_was_built_from(
        archive: tuple[Built, Path, Path]) -> None:
    made, _, site = archive
    page = (site / "days" / f"{DAY}.html").read_text(encoding="utf-8")
    table = page[page.index('id="data-files"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<a href="([^"]+)">([^<]+)</a></td>\s*<td[^>]*>[^<]+</td>\s*'
                      r"<td[^>]*><code>([0-9a-f]{64})</code>", table)
    names = [name for _, name, _ in rows]
    assert f"days/{DAY}.md" in names and f"days/{DAY}/loss.vl.json" in names
    assert any(n.startswith("data/") and n.endswith("metrics.parquet") for n in names)
    for href, name, sha in rows:
        served = (site / "days" / href).resolve()
        assert hashlib.sha256(served.read_bytes()).hexdigest() == sha, name
        assert served.read_bytes() == (made.config.docs_dir / name).read_bytes()


def test_citation_cff_files_validate_against_the_cff_schema(
        archive: tuple[Built, Path, Path]) -> None:
    _, _, site = archive
    for path in (site / "CITATION.cff", REPO / "CITATION.cff"):
        doc = yaml.safe_load(path.read_text())
        jsonschema.validate(doc, SCHEMA)
    chron = yaml.safe_load((site / "CITATION.cff").read_text())
    assert chron["type"] == "dataset" and chron["url"] == SITE_URL
    assert chron["date-released"] == "2026-08-25" and chron["version"] == "2026-08-25T031700Z"
    assert chron["authors"] == [{"name": "Test Authors"}]
    with pytest.raises(jsonschema.ValidationError):  # the trimmed schema still bites
        jsonschema.validate({k: v for k, v in chron.items() if k != "authors"}, SCHEMA)


def test_snapshot_chain_is_published(archive: tuple[Built, Path, Path]) -> None:
    made, _, site = archive
    chain = json.loads((site / "api" / "snapshots.json").read_text())["chain"]
    snaps = Store(made.config.docs_dir).snapshots()
    assert [c["snapshot"] for c in chain] == [s.id for s in snaps]
    for link, snap, prev in zip(chain, snaps, [None, *snaps[:-1]], strict=True):
        assert link["manifest_sha256"] == hashlib.sha256(
            (site / link["manifest"]).read_bytes()).hexdigest() == snap.manifest_sha256
        assert link["previous"] == (None if prev is None else
                                    {"snapshot": prev.id, "sha256": prev.manifest_sha256})
    assert chain[-1]["corrections"] == [CORRECTION["id"]] and chain[-1]["sealed"] == []
    # Found by a snapshot that sealed no day: still to be announced by the next entry.
    store = Store(made.config.docs_dir)
    assert store.pending_corrections() == store.corrections() == [CORRECTION]


def _items(feed: Any) -> dict[str, tuple[str, str, str]]:
    return {e.id: (e.published, e.title, e.summary) for e in feed.entries}


def test_failure_and_correction_feeds_parse_and_never_reannounce(
        archive: tuple[Built, Path, Path]) -> None:
    _, before, after = archive
    fail_old = feedparser.parse(str(before / "feed_failures.xml"))
    fail_new = feedparser.parse(str(after / "feed_failures.xml"))
    corr = feedparser.parse(str(after / "feed_corrections.xml"))
    for feed in (fail_old, fail_new, corr):
        assert not feed.bozo, feed.get("bozo_exception")
    # Same GUID, same date, same text after a rebuild with one more snapshot.
    assert _items(fail_old) == _items(fail_new)
    guids = set(_items(fail_new))
    assert guids == {f"{SITE_URL}failures.html#failure:rack-3",
                     f"{SITE_URL}failures.html#failure:slow-io"}
    rack = next(e for e in fail_new.entries if e.id.endswith("rack-3"))
    assert rack.published == "Fri, 21 Aug 2026 03:17:00 +0000"  # first recorded, UTC
    assert "Rack 3 lost power" in rack.summary
    assert not feedparser.parse(str(before / "feed_corrections.xml")).entries
    (item,) = corr.entries
    assert item.id == f"{SITE_URL}corrections.html#{CORRECTION['id']}"
    assert item.link == f"{SITE_URL}days/{DAY}.html"
    assert item.published == "Tue, 25 Aug 2026 03:17:00 +0000"
    as_json = json.loads((after / "feed_corrections.json").read_text())
    assert as_json["version"] == "https://jsonfeed.org/version/1.1"
    assert [i["id"] for i in as_json["items"]] == [item.id]
    for page, base in (("index.html", ""), (f"days/{DAY}.html", "../")):
        head = (after / page).read_text().split("</head>")[0]
        for name in ("feed_failures.xml", "feed_corrections.xml", "feed_corrections.json"):
            assert 'rel="alternate" type="application/' in head
            assert f'href="{base}{name}"' in head
            assert (after / page).parent.joinpath(base + name).resolve().is_file()
    corrections = _text(after / "corrections.html")
    assert CORRECTION["id"] in corrections and "tokens.day" in corrections


def test_sealed_files_survive_rebuilds_and_new_snapshots(
        archive: tuple[Built, Path, Path]) -> None:
    made, before, after = archive
    for path in sorted((before / "days").rglob("*")):
        if path.is_file() and path.suffix != ".html":  # pages get the next-day link
            assert path.read_bytes() == (after / path.relative_to(before)).read_bytes(), path
    assert verify_store(Store(made.config.docs_dir)) == []


def test_bibtex_escapes_special_characters() -> None:
    entry = Entry("Day 1 · 2026-08-20", "R&D_run 100%", "Site {x}", "A & B", 1, 10,
                  "2026-08-20", "https://e.org/days/2026-08-20.html", "s", "t", "0" * 64,
                  None, "CC-BY-4.0")
    text = bibtex(entry)
    assert "R\\&D\\_run 100\\%" in text and "{A \\& B}" in text and "Site \\{x\\}" in text
    assert text.startswith("@misc{r-d-run-100-day001,")
