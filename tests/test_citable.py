"""The citable archive, read back from a real build: citations, data files, chain, feeds."""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import feedparser
import jsonschema
import pytest
import yaml

from chronicle.config import RunConfig
from chronicle.models import SourceStatus
from chronicle.render import md_text
from chronicle.render.archive_pages import about_page
from chronicle.render.cite import Entry, bibtex, citation_cff, cite_markdown, csl_json
from chronicle.render.i18n import ENGLISH, language
from chronicle.store import Store, verify_store, write_snapshot
from tests.support.config import make_config
from tests.support.git import git
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
    url = made.config.site.url
    for href, name, sha in rows:
        # The sealed source at its address (absolute: no engine takes it for its page).
        assert href.startswith(url) == (name == f"days/{DAY}.md"), href
        served = (site / href.removeprefix(url) if href.startswith(url)
                  else site / "days" / href).resolve()
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


def _git_ids(days: Path, tmp: Path) -> dict[str, str]:
    """Return git's own ids of a copy of docs/days: path -> blob id (files), tree id (folders)."""
    repo = tmp / "git"
    shutil.copytree(days, repo / "days")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    tree = git(repo, "write-tree")
    listing = git(repo, "ls-tree", "-t", tree, "days/")
    return {line.split("\t")[1]: line.split()[2] for line in listing.splitlines()}


def test_api_index_gives_every_day_the_swhids_git_computes(
        archive: tuple[Built, Path, Path], tmp_path: Path) -> None:
    made, _, site = archive
    ids = _git_ids(made.config.docs_dir / "days", tmp_path)
    days = json.loads((site / "api" / "index.json").read_text())["days"]
    assert len(days) == 4
    for d in days:
        assert d["swhid"] == "swh:1:cnt:" + ids[f"days/{d['date']}.md"]
        assert d["swhid_dir"] == "swh:1:dir:" + ids[f"days/{d['date']}"]
        served = (site / "days" / f"{d['date']}.md").read_bytes()
        assert d["sha256"] == hashlib.sha256(served).hexdigest()  # the keys it had stay
        assert {"date", "day", "title", "permalink", "json", "sealed_by", "sealed_at"} <= set(d)


def test_the_cite_box_names_permalink_sha256_swhid_then_the_snapshot(
        archive: tuple[Built, Path, Path]) -> None:
    _, _, site = archive
    index = {d["date"]: d for d in json.loads((site / "api" / "index.json").read_text())["days"]}
    swhid, folder = index[DAY]["swhid"], index[DAY]["swhid_dir"]
    page = (site / "days" / f"{DAY}.html").read_text(encoding="utf-8")
    assert f'href="https://archive.softwareheritage.org/{swhid}"' in page
    assert f'href="https://archive.softwareheritage.org/{folder}"' in page
    text = _text(site / "days" / f"{DAY}.html")
    block = text[text.index("Cite this entry¶"):text.index("Data files¶")]
    order = [block.index(s) for s in ("Permalink:", "sha256 of the sealed page:",
                                      f"SWHID: {swhid}, its charts: {folder}", "Snapshot:")]
    assert order == sorted(order), block
    assert "resolved by Software Heritage once it has archived" in block
    assert f"swhid = {{{swhid}}}" in block and f"SWHID {swhid}" in block
    csl = json.loads((site / "days" / DAY / "cite.json").read_text())[0]
    assert csl["archive"] == "Software Heritage" and csl["archive_location"] == swhid
    newest = max(index)
    cff = yaml.safe_load((site / "CITATION.cff").read_text())
    assert [i["value"] for i in cff["identifiers"]] == [index[newest]["swhid"],
                                                        index[newest]["swhid_dir"]]
    assert {i["type"] for i in cff["identifiers"]} == {"swh"}


def test_without_site_doi_nothing_mentions_a_doi(archive: tuple[Built, Path, Path]) -> None:
    _, _, site = archive
    assert "doi" not in yaml.safe_load((site / "CITATION.cff").read_text())
    assert "DOI" not in json.loads((site / "days" / DAY / "cite.json").read_text())[0]
    for page in (site / "days" / f"{DAY}.html", site / "about.html"):
        text = _text(page)
        assert "DOI" not in text and "doi.org" not in text and "Zenodo" not in text, page


DOI = "10.5281/zenodo.1234567"
MEMENTO = ("https://web.archive.org/web/20260822041500/https://e.org/days/2026-08-20.html",
           datetime(2026, 8, 22, 4, 15, tzinfo=UTC))
MEMENTO_TEXT = md_text(MEMENTO[0])  # text of the page: Markdown never reads it as markup
SWHID = "swh:1:cnt:" + "a" * 40
# The permalink is a Robust Link: the page as sealed (2026-08-21), its archived copy.
PERMALINK = ('<a href="https://e.org/days/2026-08-20.html" '
             'data-originalurl="https://e.org/days/2026-08-20.html" '
             f'data-versiondate="2026-08-21" data-versionurl="{MEMENTO[0]}">'
             "https://e.org/days/2026-08-20.html</a>")
SWHID_DIR = "swh:1:dir:" + "b" * 40


def _entry(**kw: Any) -> Entry:
    return Entry("Day 1 · 2026-08-20", "Run", "Site", "A", 1, 10, "2026-08-20",
                 "https://e.org/days/2026-08-20.html", "2026-08-21T031700Z",
                 "2026-08-21T03:17:00Z", "0" * 64, None, "CC-BY-4.0", **kw)


@pytest.mark.parametrize(("code", "lines"), [
    ("en", [f"Permalink: {PERMALINK}",
            f"sha256 of the sealed page: `{'0' * 64}`",
            f"SWHID: [`{SWHID}`](https://archive.softwareheritage.org/{SWHID}), its charts: "
            f"[`{SWHID_DIR}`](https://archive.softwareheritage.org/{SWHID_DIR}) (resolved by "
            "Software Heritage once",
            f'Archived copy: <a href="{MEMENTO[0]}">{MEMENTO_TEXT}</a> (Wayback Machine, '
            "captured 2026-08-22 04:15 UTC)",
            f'DOI: <a href="https://doi.org/{DOI}">https://doi.org/{DOI}</a> (the chronicle on '
            "Zenodo, all its versions)",
            "Snapshot: `2026-08-21T031700Z`"]),
    ("zh", [f"永久链接：{PERMALINK}",
            f"封存页面的 sha256：`{'0' * 64}`",
            f"SWHID：[`{SWHID}`](https://archive.softwareheritage.org/{SWHID})，其图表："
            f"[`{SWHID_DIR}`](https://archive.softwareheritage.org/{SWHID_DIR})（Software "
            "Heritage 归档本编年记录的仓库后即可解析）",
            f'归档副本：<a href="{MEMENTO[0]}">{MEMENTO_TEXT}</a>（Wayback Machine，抓取于 '
            "2026年8月22日 04:15 UTC）",
            f'DOI：<a href="https://doi.org/{DOI}">https://doi.org/{DOI}</a>（Zenodo '
            "上本编年记录的全部版本）",
            "快照：`2026-08-21T031700Z`"]),
])
def test_the_cite_box_order_in_both_languages(code: str, lines: list[str]) -> None:
    lang = ENGLISH if code == "en" else language(code)
    entry = _entry(swhid=SWHID, swhid_dir=SWHID_DIR, doi=DOI, memento=MEMENTO)
    block = cite_markdown(entry, [], "2026-08-20/cite.json", lang).splitlines()[2:8]
    assert len(block) == len(lines)
    for said, expected in zip(block, lines, strict=True):
        assert said.startswith(expected), (said, expected)
    assert [s.endswith("  ") for s in block] == [True] * 5 + [False]  # one anchor a line
    # Without them, their lines are not there at all.
    bare = cite_markdown(_entry(), [], "2026-08-20/cite.json", lang)
    assert "SWHID" not in bare and "DOI" not in bare and "Wayback" not in bare


@pytest.mark.parametrize("code", ["en", "zh"])
@pytest.mark.parametrize("memento", [
    'https://web.archive.org/web/1/x"><script>alert(8)</script>',
    "javascript:alert(1)",
    "https://web.archive.org/web/1/x' onmouseover='alert(1)",
    "https://web.archive.org/web/1/x>\n<img src=x onerror=alert(1)>",
])
def test_a_hostile_memento_never_reaches_the_cite_box_as_markup(code: str, memento: str) -> None:
    # Records are checked where they enter (test_archive.py); should one ever get past,
    # the one escaping path of every URL still writes it as text or not at all.
    lang = ENGLISH if code == "en" else language(code)
    block = cite_markdown(_entry(memento=(memento, MEMENTO[1])), [], "2026-08-20/c.json", lang)
    assert "<script" not in block and "<img" not in block and "javascript:" not in block
    assert "onmouseover" not in block and "Wayback" not in block  # no archived copy at all
    assert block.count("<a ") == block.count("</a>")
    assert 'data-versionurl' not in block


def test_site_doi_reaches_bibtex_csl_cff_and_the_about_page() -> None:
    entry = _entry(swhid=SWHID, doi=DOI)
    assert f"  doi = {{{DOI}}}," in bibtex(entry) and f"  swhid = {{{SWHID}}}\n}}" in bibtex(entry)
    assert json.loads(csl_json(entry))[0]["DOI"] == DOI
    cff = yaml.safe_load(citation_cff("T", "A", "https://e.org/", "2026-08-21", "CC-BY-4.0",
                                      "About.", doi=DOI, identifiers=[
                                          {"type": "swh", "value": SWHID, "description": "d"}]))
    jsonschema.validate(cff, SCHEMA)
    assert cff["doi"] == DOI
    config: RunConfig = make_config(site__doi=DOI)
    about = about_page(config, ENGLISH)
    assert (f"The chronicle is archived on Zenodo under the DOI <https://doi.org/{DOI}>, one "
            "version per week") in about
    assert f"本编年记录在 Zenodo 上归档，DOI 为 <https://doi.org/{DOI}>，每周一个版本" in \
        about_page(config, language("zh"))
    assert "Zenodo" not in about_page(make_config(), ENGLISH)
