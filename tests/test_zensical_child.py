"""chronicle/zensical_child.py: what a Zensical build's child runs, what it imports, and
Zensical's reference scan answered from the last build's scans."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from chronicle import zensical_child
from chronicle.zensical_child import KeptScans
from tests.support.paths import REPO

collectors = pytest.importorskip("zensical.collectors")

# Every kind of reference the scan yields, in Markdown as chronicle's pages write it
# (Chinese text, an HTML link, a table), and what it must skip (a link in code).
MARKDOWN = """# 第 73 天 · 2026-10-31

See [the run](https://example.org/run "title") and ![loss](days/loss.svg), a
[reference][ref] and a footnote[^1]; <https://example.org/auto> too.

| 指标 | 当天 |
|---|--:|
| [训练损失](../charts.md#loss) | 1.127 |

<a href="../../days/2026-10-31.md">其封存的 Markdown 源文件</a>

`[not a link](nowhere)`

[ref]: https://example.org/ref
[^1]: A footnote with [a link](https://example.org/note).
""".encode()


@pytest.fixture
def scan() -> Iterator[Any]:
    """Zensical's own scan, put back after each test (`install` replaces it)."""
    original = collectors.references
    yield original
    collectors.references = original


def test_a_zensical_child_imports_none_of_the_build_path() -> None:
    # The child unpickles zensical_child.build: that imports this module and nothing of
    # chronicle.site (Altair, mkdocs, Material, jieba: ~0.8 s of every Zensical build).
    code = ("import pickle, sys; from chronicle import zensical_child;"
            "pickle.loads(pickle.dumps(zensical_child.build));"
            "print(' '.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO).stdout.split()
    ours = [m for m in loaded if m == "chronicle" or m.startswith("chronicle.")]
    assert ours == ["chronicle", "chronicle.zensical_child"]
    assert not {"altair", "mkdocs", "material", "jieba", "numpy"} & set(loaded)
    assert pickle.loads(pickle.dumps(zensical_child.build)) is zensical_child.build


def test_a_kept_scan_answers_what_zensical_scans(scan: Any) -> None:
    pages = [MARKDOWN, (REPO / "README.md").read_bytes()]
    expected = [list(scan(page, 0)) for page in pages]
    # The scan sees every kind (and the README's few links among its 120 KB).
    assert {type(r).__name__ for r in expected[0]} == {
        "Link", "LinkReference", "LinkDefinition", "FootnoteReference", "FootnoteDefinition"}
    assert {r.kind for r in expected[0] if type(r).__name__ == "Link"} >= {
        "link", "image", "autolink", "html"}
    assert len(expected[1]) >= 4
    first = KeptScans.install({})
    assert first is not None and collectors.references is first
    assert [list(collectors.references(page, 0)) for page in pages] == expected
    assert (first.reused, first.made) == (0, 2)
    # The next build is given them as JSON (the entry is JSON) and scans nothing.
    kept = json.loads(json.dumps(first.scans))
    assert KeptScans.install(kept) is None  # not over another memo: over Zensical's scan
    collectors.references = scan  # a new build's child
    second = KeptScans.install(kept)
    assert second is not None
    again = [list(collectors.references(page, 0)) for page in pages]
    assert again == expected
    assert [[type(r) for r in refs] for refs in again] == [[type(r) for r in refs]
                                                           for refs in expected]
    assert (second.reused, second.made) == (2, 0)
    assert second.scans == kept  # what the build after it is given
    # The offset is part of what a scan answers: the same bytes at another are scanned.
    assert list(collectors.references(MARKDOWN, 7)) == list(scan(MARKDOWN, 7))
    assert second.made == 1


@pytest.mark.parametrize("entry", [
    "not a list", [["Nope", 1, 2]], [["Link", 1, 2]], [["Span", True, 3]],
    [["Span", 1.5, 3]], [["Link", 0, 4, "link", ["Span", 0, 1], {"start": 0}]]])
def test_a_kept_scan_of_another_form_is_scanned_again(scan: Any, entry: Any) -> None:
    first = KeptScans.install({})
    assert first is not None
    list(collectors.references(MARKDOWN, 0))
    (key,) = first.scans
    collectors.references = scan
    memo = KeptScans.install({key: entry})
    assert memo is not None
    assert list(collectors.references(MARKDOWN, 0)) == list(scan(MARKDOWN, 0))
    assert (memo.reused, memo.made) == (0, 1)
    assert memo.scans == first.scans  # what is kept is the scan, not what was given


def test_on_another_zensical_release_zensical_scans_as_always(
        scan: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zensical_child, "ZENSICAL", "0.0.1")
    assert KeptScans.install({}) is None
    assert collectors.references is scan
