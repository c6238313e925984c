"""The same chronicle built by both engines (site/engines/zensical/build.py,
site/outputs/tree.py): mkdocs-material through mkdocs-gen-files, and Zensical from the
rendered tree. Every page of one exists in the other with the same article text, both
editions, search in both languages, the feeds, api/, the citation files, the language
switch; `check-site` passes on both; a failing Zensical build publishes nothing; `chronicle
render` writes a tree any engine builds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import feedparser
import pytest

from chronicle.errors import ChronicleError
from chronicle.executor import Executor
from chronicle.site.build import build_site, engine_notes
from chronicle.site.engines.zensical.build import TREES
from chronicle.site.publish.check import check_site
from tests.support.browser import (
    CHROMIUM,
    chromium,
    record_problems,
    serious_violations,
    serve,
    wake_charts,
)
from tests.support.commands import cli
from tests.support.paths import REPO
from tests.support.site_factory import SEARCH_WORD, Built, make_chronicle

pytest.importorskip("zensical")
# What differs by design between the engines' outputs: each engine's own theme bundle,
# its search index (Material: search/search_index.json; Zensical: search.json) and
# mkdocs's gzipped sitemap (documentation/pages/engines.md).
ENGINE_OWN = ("assets/javascripts/", "assets/stylesheets/", "search/", "search.json",
              "sitemap.xml.gz", "zh/assets/javascripts/", "zh/assets/stylesheets/",
              "zh/search/", "zh/search.json", "zh/sitemap.xml.gz")
OURS = ("assets/javascripts/chronicle.js", "assets/javascripts/vega-bundle.js",
        "assets/stylesheets/chronicle.css")


class _Article(HTMLParser):
    """The text of a page's article (Material's and Zensical's `md-content__inner`) and
    its outbound links, scripts and styles left out."""

    def __init__(self) -> None:
        super().__init__()
        self.depth, self.skip = 0, 0
        self.parts: list[str] = []
        self.hreflang: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "link" and found.get("rel") == "alternate" and found.get("hreflang"):
            self.hreflang.append(str(found.get("hreflang")))
        if tag == "article" and ("md-content__inner" in (found.get("class") or "")
                                 or self.depth):
            self.depth += 1
        if self.depth and tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag in ("script", "style"):
            self.skip -= 1
        if tag == "article" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skip:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())


def _article(path: Path) -> _Article:
    parser = _Article()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _files(site: Path) -> set[str]:
    out = set()
    for path in site.rglob("*"):
        rel = path.relative_to(site).as_posix()
        if path.is_file() and (rel in OURS or not rel.startswith(ENGINE_OWN)):
            out.add(rel)
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Built, Path, Path]]:
    built = make_chronicle(tmp_path_factory.mktemp("engines") / "c", nights=3,
                           languages=("en", "zh"))
    with Executor() as executor:
        material = build_site(built.config, built.root / "site-mkdocs", executor=executor)
        config = replace(built.config, site=replace(built.config.site, engine="zensical"))
        zensical = build_site(config, built.root / "site-zensical", executor=executor)
    yield built, material, zensical


def test_both_engines_publish_the_same_files(both: tuple[Built, Path, Path]) -> None:
    _built, material, zensical = both
    assert _files(material) == _files(zensical)
    assert {"index.html", "zh/index.html", "days/2026-08-21.html", "zh/days/2026-08-21.html",
            "api/latest.json", "CITATION.cff", "feed_rss_created.xml",
            "zh/feed_json_created.json", "days/2026-08-21.md"} <= _files(zensical)
    # The sealed sources, the API and the citation files are the same bytes.
    for rel in ("days/2026-08-21.md", "days/2026-08-21.json", "api/latest.json",
                "CITATION.cff", "days/2026-08-21/loss.vl.json", "days/2026-08-21/cite.json"):
        assert (material / rel).read_bytes() == (zensical / rel).read_bytes(), rel


def test_every_page_says_the_same_in_both(both: tuple[Built, Path, Path]) -> None:
    built, material, zensical = both
    pages = sorted(p.relative_to(material) for p in material.rglob("*.html"))
    assert len(pages) > 30
    differ = []
    for rel in pages:
        a, b = _article(material / rel), _article(zensical / rel)
        if a.text != b.text:
            differ.append(str(rel))
        # Each page names its twin in both languages (hreflang), in both engines.
        if rel.name != "404.html":
            assert sorted(b.hreflang) == sorted(a.hreflang) == ["en", "zh"], rel
    assert differ == []
    day = _article(zensical / "zh" / "days" / "2026-08-21.html").text
    assert "已封存的条目（中文版）" in day and "sha256" in day
    # The sealed Markdown sources stay links to the sources in both engines (Zensical
    # takes a relative `.md` link, even in raw HTML, for its page).
    url = built.config.site.url
    for site in (material, zensical):
        for rel, sources in (("days/2026-08-21.html", ["days/2026-08-21.md"]),
                             ("zh/days/2026-08-21.html",
                              ["days/2026-08-21.md", "days/zh/2026-08-21.md"])):
            html = (site / rel).read_text(encoding="utf-8")
            for source in sources:
                assert f'href="{url}{source}"' in html, (site.name, rel, source)


def test_zensical_pages_link_their_twins_and_the_feeds(both: tuple[Built, Path, Path]) -> None:
    _built, _material, zensical = both
    html = (zensical / "zh" / "days" / "2026-08-21.html").read_text(encoding="utf-8")
    # The language switch keeps the reader on the same day (not the other edition's home).
    assert 'href="..&#x2f;..&#x2f;days&#x2f;2026-08-21.html" hreflang="en"' in html
    assert "feed_failures.xml" in html and "feed_changes.json" in html


def test_both_pass_check_site(both: tuple[Built, Path, Path]) -> None:
    _built, material, zensical = both
    for site in (material, zensical):
        report = check_site(site)
        assert report.problems == [], (site.name, report.problems[:5])


def test_zensical_feeds_match_mkdocs_feeds(both: tuple[Built, Path, Path]) -> None:
    _built, material, zensical = both
    for feed in ("feed_rss_created.xml", "zh/feed_rss_created.xml"):
        a, b = feedparser.parse(str(material / feed)), feedparser.parse(str(zensical / feed))
        assert not b.bozo and len(b.entries) == 3, feed
        assert [(e.id, e.title, e.link, e.published) for e in a.entries] == \
            [(e.id, e.title, e.link, e.published) for e in b.entries], feed
        assert [e.summary for e in a.entries] == [e.summary for e in b.entries], feed
        # The channel's dates are the newest snapshot's, not the clock's when it was built
        # (Zensical writes the clock's; the post-build step sets them): the same store
        # gives the same feed.
        newest = sorted(p.name for p in (_built.root / "docs" / "data").iterdir())[-1]
        assert a.feed.updated == b.feed.updated == a.feed.published == b.feed.published
        assert b.feed.updated_parsed[:5] == time.strptime(newest[:15], "%Y-%m-%dT%H%M")[:5]
        # Every item carries its chart (Zensical writes none: the post-build step adds
        # it), with its real length.
        for entry in b.entries:
            (enclosure,) = entry.enclosures
            path = zensical / enclosure.href.split("/chronicle/", 1)[1]
            assert int(enclosure.length) == path.stat().st_size > 0
    for feed in ("feed_json_created.json", "zh/feed_json_updated.json"):
        a, b = (json.loads((site / feed).read_text(encoding="utf-8"))
                for site in (material, zensical))
        assert [(i["id"], i["title"], i["content_html"]) for i in a["items"]] == \
            [(i["id"], i["title"], i["content_html"]) for i in b["items"]], feed


def test_zensical_search_finds_words_in_both_languages(both: tuple[Built, Path, Path]) -> None:
    _built, _material, zensical = both
    english = json.loads((zensical / "search.json").read_text(encoding="utf-8"))
    chinese = json.loads((zensical / "zh" / "search.json").read_text(encoding="utf-8"))
    assert chinese["config"]["lang"] == ["zh"]
    assert any(SEARCH_WORD in item["text"] for item in english["items"])
    # A date is one word to Zensical's search (a hyphen between digits does not split),
    # so "2026-08-21" finds that day, not every day holding 2026, 08 and 21.
    from chronicle.site.outputs.tree import ZENSICAL_SEPARATOR

    assert english["config"]["separator"] == ZENSICAL_SEPARATOR
    assert re.split(ZENSICAL_SEPARATOR, "Day 2 · 2026-08-21 all-to-all") == [
        "Day", "2", "·", "2026-08-21", "all", "to", "all"]
    assert any("丢弃" in item["text"] for item in chinese["items"])


def test_a_hostile_comment_stays_text_in_zensical_pages(both: tuple[Built, Path, Path]) -> None:
    _built, _material, zensical = both
    for path in zensical.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "onerror=alert" not in text, path


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")
def test_zensical_pages_draw_their_charts_in_chromium(both: tuple[Built, Path, Path]) -> None:
    pytest.importorskip("playwright.sync_api")
    _built, _material, zensical = both
    dialogs: list[str] = []
    with serve(zensical, under="chronicle") as url, chromium() as browser:
        for page_path in ("index.html", "zh/days/2026-08-21.html", "charts.html",
                          "threads/101.html"):
            page: Any = browser.new_page()
            errors, foreign = record_problems(page, "127.0.0.1:" + url.split(":")[2][:5])
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url + page_path, wait_until="load")
            # Axe as the page paints (static charts), then with every chart drawn live.
            assert serious_violations(page) == [], page_path
            wake_charts(page)
            charts = page.locator(".chronicle-chart").count()
            assert charts >= (0 if page_path.startswith("threads/") else 1), page_path
            assert errors == [] and foreign == [], (page_path, errors, foreign)
            # Zensical's own search box and header pass axe as Material's do.
            assert serious_violations(page) == [], page_path
            page.close()
    assert dialogs == []


def test_a_failed_zensical_build_publishes_nothing(tmp_path: Path) -> None:
    built = make_chronicle(tmp_path / "c", nights=2)
    config = replace(built.config, site=replace(built.config.site, engine="zensical"))
    site = build_site(config, tmp_path / "site")
    before = {p: p.read_bytes() for p in site.rglob("*") if p.is_file()}
    # A page of the chronicle's own links a page that does not exist: --strict fails.
    (built.root / "docs" / "notes.md").write_text("# Notes\n\nSee [this](missing.md).\n")
    with pytest.raises(ChronicleError) as err:
        build_site(config, site)
    message = str(err.value)
    assert "Zensical build failed" in message and "mkdocs.yml" in message
    assert "missing.md" in message  # Zensical's own words, quoted
    assert {p: p.read_bytes() for p in site.rglob("*") if p.is_file()} == before
    assert not list(tmp_path.glob(".site.building-*"))


def test_render_writes_a_tree_both_engines_build(both: tuple[Built, Path, Path],
                                                 tmp_path: Path) -> None:
    built = both[0]
    out = tmp_path / "tree"
    result = cli("render", "--dir", str(built.root), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "en:" in result.output and "zh:" in result.output
    assert (out / "en" / "docs" / "days" / "2026-08-21.md").is_file()
    assert (out / "en" / "docs" / "charts" / "loss.svg").is_file()  # drawn into the tree
    assert not (out / "zh" / "docs" / "data").exists()
    # Again into the same folder: an earlier render is replaced, nothing else is touched.
    again = cli("render", "--dir", str(built.root), "--out", str(out))
    assert again.exit_code == 0, again.output
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"}
    # the maintained MkDocs 1.x (site/engines/mkdocs/core.py)
    assert "`properdocs build -f " in again.output
    plain = subprocess.run([sys.executable, "-m", "properdocs", "build", "--strict", "-q", "-f",
                            str(out / "en" / "mkdocs.yml")], capture_output=True, text=True,
                           env=env, check=False)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert (out / "en" / "site" / "days" / "2026-08-21.html").is_file()
    zens = subprocess.run([sys.executable, "-m", "zensical", "build", "-s", "-f",
                           str(out / "zh" / "mkdocs.yml")], capture_output=True, text=True,
                          env=env, check=False)
    assert zens.returncode == 0, zens.stderr[-2000:]
    assert (out / "zh" / "site" / "days" / "2026-08-21.html").is_file()


def test_render_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    built = make_chronicle(tmp_path / "c", nights=1)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    result = cli("render", "--dir", str(built.root), "--out", str(out))
    assert result.exit_code != 0
    assert "not empty and not an earlier `chronicle render`" in result.output
    assert (out / "thesis.tex").read_text() == "keep me"
    inside = cli("render", "--dir", str(built.root), "--out", str(built.root / "docs" / "x"))
    assert inside.exit_code == 2 and "inside the store (docs/)" in inside.output
    # The rule of the site folder (publish.output_folder): never written through a link.
    (built.root / "out").symlink_to(tmp_path / "elsewhere")
    linked = cli("render", "--dir", str(built.root), "--out", str(built.root / "out"))
    assert linked.exit_code == 2 and "a symbolic link" in linked.output
    assert not (tmp_path / "elsewhere").exists()


def test_the_trees_are_not_in_the_restored_cache() -> None:
    # The nightly workflow restores .cache/chronicle from earlier runs; a tree there (or
    # Zensical's unsigned cache in it) could change a page.
    assert TREES.parts[:2] == (".cache", "zensical")
    # The nightly workflow's cache step is in chronicle's action (action.yml).
    action = (REPO / "action.yml").read_text(encoding="utf-8")
    assert "path: ${{ inputs.directory }}/.cache/chronicle\n" in action
    assert ".cache/zensical" not in action


def test_an_mkdocs_yml_without_gen_files_still_builds_and_is_told(tmp_path: Path) -> None:
    built = make_chronicle(tmp_path / "c", nights=2)
    yml = built.root / "mkdocs.yml"
    text = yml.read_text(encoding="utf-8")
    gen = "  - gen-files:\n      scripts: [gen_pages.py]\n"
    assert gen in text
    yml.write_text(text.replace(gen, ""), encoding="utf-8")
    (built.root / "gen_pages.py").unlink()
    result = cli("build", "--dir", str(built.root))
    assert result.exit_code == 0, result.output
    assert "note:" in result.output and "gen-files" in result.output
    page = (built.root / "site" / "days" / "2026-08-20.html").read_text(encoding="utf-8")
    assert "Cite this entry" in page and "Next day" in page
    assert (built.root / "site" / "charts.html").is_file()
    # With gen-files (the scaffold), nothing to say.
    scaffolded = make_chronicle(tmp_path / "d", nights=1)
    assert engine_notes(scaffolded.config) == []


def test_a_v1_chronicle_builds_with_zensical_and_keeps_its_bytes(tmp_path: Path) -> None:
    from tests.support.goldens import unpack_v1

    root = unpack_v1(tmp_path / "v1")
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}
    yml = root / "chronicle.yml"
    text = yml.read_text(encoding="utf-8")
    yml.write_text(text.replace("site:\n", "site:\n  engine: zensical\n"), encoding="utf-8")
    result = cli("build", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "with zensical" in result.output
    assert check_site(root / "site").problems == []
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()} == before
    page = (root / "site" / "days" / "2026-08-21.html").read_text(encoding="utf-8")
    assert "Cite this entry" in page


def test_a_site_title_with_markup_shows_as_typed_in_zensical(tmp_path: Path) -> None:
    built = make_chronicle(tmp_path / "c", nights=1)
    yml = built.root / "chronicle.yml"
    yml.write_text(yml.read_text(encoding="utf-8").replace(
        "site:\n", "site:\n  engine: zensical\n  title: 'R&D <b>run</b> &amp; co'\n"),
        encoding="utf-8")
    result = cli("build", "--dir", str(built.root))
    assert result.exit_code == 0, result.output
    html = (built.root / "site" / "about.html").read_text(encoding="utf-8")
    # Escaped once: the reader sees the title as typed, markup and entity included, in
    # the tab's title and the header.
    typed = "R&amp;D &lt;b&gt;run&lt;/b&gt; &amp;amp; co"
    assert f"<title>About - {typed}</title>" in html
    assert html.count(typed) >= 3
    assert "<b>run</b>" not in html
    assert 'content="zensical-' in html  # the generator named is the one that built it


def test_a_zensical_build_imports_none_of_mkdocs(tmp_path: Path) -> None:
    # mkdocs, Material and jieba (~0.25 s of a build's start) are the other engine's: a
    # Zensical build, English and Chinese, loads none of them, in any of its processes.
    built = make_chronicle(tmp_path / "c", nights=1, languages=("en", "zh"))
    yml = built.root / "chronicle.yml"
    yml.write_text(yml.read_text(encoding="utf-8").replace(
        "site:\n", "site:\n  engine: zensical\n"), encoding="utf-8")
    code = ("import sys; from chronicle.cli import entry;\n"
            "try: entry()\n"
            "finally: print('MODULES', *sorted({m.split('.')[0] for m in sys.modules}))")
    run = subprocess.run([sys.executable, "-c", code, "build", "--dir", str(built.root)],
                         capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "with zensical" in run.stdout
    loaded = set(run.stdout.split("MODULES", 1)[1].split())
    assert {"altair", "zensical"} <= loaded  # what it does use: the check can see them
    assert not {"mkdocs", "material", "jieba", "mkdocs_gen_files"} & loaded


def test_a_child_gone_after_done_is_a_finished_build(tmp_path: Path) -> None:
    from chronicle.site.engines.zensical.build import _wait
    from chronicle.site.outputs.tree import EditionTree
    from tests.support.processes import done_then_gone

    with Executor() as executor:
        child = executor.start(done_then_gone, name="zensical build (en)")
        _wait(child, EditionTree("en", tmp_path))  # "done" was said: no error
