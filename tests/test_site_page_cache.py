"""mkdocs's per-page work kept in .cache/chronicle (site/page_cache.py): a kept Markdown
conversion is used only while every link lookup it made answers the same, a conversion
that logged is never kept, and a page's search entries come back as Material made them.
Real mkdocs and Material objects throughout; the whole-site proofs (a warm and a nightly
build byte for byte the cold one, forged entries refused) are in test_site_build_cache."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from material.plugins.search.plugin import SearchIndex
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files, InclusionLevel, get_files, set_exclusions
from mkdocs.structure.pages import Page

from chronicle.config import load_config as load_run_config
from chronicle.executor import Executor
from chronicle.site.build import build_site
from chronicle.site.build_cache import BuildCache, cache_root
from chronicle.site.page_cache import KeptPage, KeptSearchIndex, _tokens, markdown_prefix
from tests.support.site_factory import make_chronicle

DAY = """# A day

Loss fell; see [the other page](b.md#why) and [this section](#numbers).

## Numbers { #numbers }

| step | loss |
|---|---|
| 1 | 2.5 |

<div id="raw-anchor">raw</div>
"""


def _site(tmp_path: Path, pages: dict[str, str]) -> MkDocsConfig:
    docs = tmp_path / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        # A theme named: ProperDocs, the core builds run on (site/core.py), ships none.
        "site_name: t\ntheme:\n  name: material\nuse_directory_urls: false\n"
        "not_in_nav: |\n  /a.md\n"
        "markdown_extensions:\n  - toc:\n      permalink: true\n  - tables\n  - attr_list\n"
        "validation:\n  anchors: warn\n", encoding="utf-8")
    return load_config(config_file=str(tmp_path / "mkdocs.yml"))


def _files(config: MkDocsConfig) -> Files:
    files = get_files(config)
    set_exclusions(files, config)
    return files


def _render(config: MkDocsConfig, files: Files, cache: BuildCache | None) -> Page:
    file = files.get_file_from_path("a.md")
    assert file is not None
    file.page = None
    page = KeptPage(file, config, cache, markdown_prefix(config, "en")) if cache \
        else Page(None, file, config)
    page.read_source(config)
    page.render(config, files)
    return page


def _what(page: Page) -> dict[str, Any]:
    """Everything mkdocs's render leaves on a page."""
    return {"content": page.content, "toc": _tokens(page.toc), "title": page.title,
            "anchors": page.present_anchor_ids,
            "links": {f.src_uri: a for f, a in (page.links_to_anchors or {}).items()}}


def test_a_kept_conversion_is_what_mkdocs_renders(tmp_path: Path) -> None:
    config = _site(tmp_path, {"a.md": DAY, "b.md": "# B\n\n## Why\n"})
    plain = _what(_render(config, _files(config), None))
    assert 'href="b.html#why"' in plain["content"] and plain["title"] == "A day"
    assert {"numbers", "raw-anchor"} <= plain["anchors"] and plain["links"]
    made = BuildCache(tmp_path / "pages")
    assert _what(_render(config, _files(config), made)) == plain
    read = BuildCache(tmp_path / "pages")
    assert _what(_render(config, _files(config), read)) == plain
    assert (made.missed, made.written, read.reused, read.missed) == (1, 1, 1, 0)


def test_a_conversion_is_used_only_while_its_links_resolve_the_same(tmp_path: Path) -> None:
    config = _site(tmp_path, {"a.md": DAY, "b.md": "# B\n\n## Why\n"})
    cache = tmp_path / "pages"
    _render(config, _files(config), BuildCache(cache))
    # b.md is no longer built (excluded): the same Markdown converts otherwise.
    files = _files(config)
    b = files.get_file_from_path("b.md")
    assert b is not None
    b.inclusion = InclusionLevel.EXCLUDED
    plain = _what(_render(config, files, None))
    changed = BuildCache(cache)
    assert _what(_render(config, files, changed)) == plain
    assert (changed.reused, changed.missed) == (0, 1)
    # and the kept entry is now that build's; the first one's files convert again.
    first = BuildCache(cache)
    _render(config, _files(config), first)
    assert (first.reused, first.missed) == (0, 1)


def test_a_conversion_that_logged_is_never_kept(tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    config = _site(tmp_path, {"a.md": "# A\n\n[gone](missing.md)\n"})
    for _ in range(2):
        cache = BuildCache(tmp_path / "pages")
        with caplog.at_level(logging.WARNING):
            caplog.clear()
            _render(config, _files(config), cache)
        # It warns every build (a strict build fails every time), never read from a cache.
        assert "missing.md" in caplog.text
        assert (cache.reused, cache.written) == (0, 0)


class _Page:
    """What Material's search index reads of a page (mkdocs's Page after its render)."""

    def __init__(self, content: str, url: str = "days/a.html") -> None:
        self.content, self.url, self.title, self.meta = content, url, "A day", {}
        self.toc: list[Any] = []


@pytest.mark.parametrize("content", [
    "<h1 id='a'>A day</h1><p>Loss fell to 2.41.</p><h2 id='n'>Numbers</h2><p>1 2 3</p>",
    "<h1 id='a'>第 12 天</h1><p>损失降至 2.41，吞吐量稳定。</p>"
    "<h2 id='n'>数字</h2><p>令牌丢弃率</p>",
])
def test_kept_search_entries_are_material_s(tmp_path: Path, content: str) -> None:
    plain = SearchIndex(lang=["en"], separator=" ", pipeline=[], fields={})
    plain.add_entry_from_context(_Page(content))
    made = KeptSearchIndex(BuildCache(tmp_path / "search"), "p", lang=["en"])
    made.add_entry_from_context(_Page(content))
    cache = BuildCache(tmp_path / "search")
    read = KeptSearchIndex(cache, "p", lang=["en"])
    read.add_entry_from_context(_Page(content))
    assert made.entries == read.entries == plain.entries and len(plain.entries) == 2
    assert (cache.reused, cache.missed) == (1, 0)
    # Another page's content is another entry.
    cache = BuildCache(tmp_path / "search")
    other = KeptSearchIndex(cache, "p", lang=["en"])
    other.add_entry_from_context(_Page(content.replace("2.41", "2.40")))
    assert (cache.reused, cache.missed) == (0, 1) and other.entries != plain.entries


@pytest.mark.slow
def test_without_the_speed_ups_nothing_is_kept(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=2, languages=("en", "zh"))
    with Executor(without=("markdown-cache", "search-cache")) as executor:
        build_site(load_run_config(made.root), tmp_path / "site", executor=executor)
    for kind in ("pages", "search"):
        assert not list((cache_root(made.root) / kind).glob("*")), kind


def test_the_key_does_not_depend_on_the_folder_a_command_starts_in(tmp_path: Path) -> None:
    # `python -m` puts the working folder first on the path: a package's metadata there
    # (a source checkout's *.egg-info) once made every conversion a miss.
    _site(tmp_path / "site", {"a.md": DAY})
    stray = tmp_path / "checkout"
    (stray / "stray-1.0.dist-info").mkdir(parents=True)
    (stray / "stray-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: stray\nVersion: 1.0\n", encoding="utf-8")
    config = str(tmp_path / "site" / "mkdocs.yml")
    script = ("from mkdocs.config import load_config;"
              "from chronicle.site.page_cache import markdown_prefix;"
              f"print(markdown_prefix(load_config(config_file={config!r}), 'en'))")
    keys = {subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                           text=True, check=True).stdout for cwd in (tmp_path, stray)}
    assert len(keys) == 1 and next(iter(keys)).startswith("pages:")
