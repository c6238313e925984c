"""The build's own work kept between builds (site/build_cache.py): an entry is read back
only under the key it was written for and while its checksum holds; a damaged, foreign or
unwritable cache is only slower; a build drops what it did not use; a warm build is the
cold build byte for byte, and makes again exactly what a new snapshot or a correction
changed."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronicle.site.build_cache import FORMAT, BuildCache, Caches, cache_root, entry_key
from tests.support.site_factory import add_correction, chronicle_build_output, make_chronicle

FILES: dict[str, str | bytes] = {"days/x.md": "# 一 day\n", "days/x/loss.svg": b"<svg>\x00</svg>"}


def _only(folder: Path) -> Path:
    [entry] = list(folder.iterdir())
    return entry


def test_an_entry_comes_back_as_it_was_kept(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "kind")
    assert cache.get("k1") is None
    cache.put("k1", FILES)
    again = BuildCache(tmp_path / "kind")  # the next build
    assert again.get("k1") == FILES and list(again.get("k1") or {}) == list(FILES)
    assert (again.reused, again.missed, cache.missed, cache.written) == (2, 0, 1, 1)
    assert _only(tmp_path / "kind").name == f"v{FORMAT}-k1.json"


def test_text_is_made_once_then_read(tmp_path: Path) -> None:
    made: list[str] = []

    def make() -> str:
        made.append("x")
        return "page"

    assert BuildCache(tmp_path).text("k", make) == "page"
    assert BuildCache(tmp_path).text("k", make) == "page"
    assert made == ["x"]


def test_a_damaged_or_foreign_entry_is_not_read(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path)
    cache.put("k1", FILES)
    cache.put("k2", {"a": "other"})
    path1, path2 = tmp_path / f"v{FORMAT}-k1.json", tmp_path / f"v{FORMAT}-k2.json"
    good = path1.read_bytes()
    path1.write_bytes(good[:-5])  # truncated
    assert BuildCache(tmp_path).get("k1") is None
    path1.write_bytes(path2.read_bytes())  # a valid entry, written for another key
    assert BuildCache(tmp_path).get("k1") is None
    at = good.index(b"# ")  # an edit that keeps the JSON valid but not the checksum
    path1.write_bytes(good[:at] + b"X" + good[at + 1:])
    assert BuildCache(tmp_path).get("k1") is None
    path1.write_bytes(good)
    assert BuildCache(tmp_path).get("k1") == FILES


def test_a_cache_that_cannot_be_written_only_misses(tmp_path: Path) -> None:
    (tmp_path / "kind").write_text("not a folder")  # what a read-only disk amounts to
    cache = BuildCache(tmp_path / "kind")
    cache.put("k", FILES)
    assert cache.get("k") is None and cache.written == 0
    cache.prune()
    assert (tmp_path / "kind").read_text() == "not a folder"


def test_prune_keeps_what_this_build_used_in_every_folder(tmp_path: Path) -> None:
    first = Caches.of(tmp_path)
    assert first.svgs.folder == cache_root(tmp_path) / "svgs"
    for kind in first.each().values():
        kind.put("old", FILES)
        kind.put("kept", FILES)
    second = Caches.of(tmp_path)
    for kind in second.each().values():
        assert kind.get("kept") is not None
    second.prune()
    assert sorted(p.relative_to(cache_root(tmp_path)).as_posix()
                  for p in cache_root(tmp_path).glob("*/*")) == sorted(
        f"{kind}/v{FORMAT}-kept.json" for kind in second.each())


def test_the_key_is_every_input_and_only_them() -> None:
    key = entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"2"})
    assert entry_key("p", {"b": [1, 2], "a": 1}, {"y": b"2", "x": b"1"}) == key
    assert entry_key("q", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"2"}) != key
    assert entry_key("p", {"a": 1, "b": [2, 1]}, {"x": b"1", "y": b"2"}) != key
    assert entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"3"}) != key
    assert entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "z": b"2"}) != key


def test_a_json_value_is_kept_only_when_json_gives_it_back_exactly(tmp_path: Path) -> None:
    made: list[int] = []

    def make(value: Any) -> Callable[[], Any]:
        def compute() -> Any:
            made.append(1)
            return value
        return compute

    value = [{"b": 1, "a": [1.5, None, True, "x"]}, {"z": -0.0}]
    assert BuildCache(tmp_path).value("k", make(value)) == value
    again = BuildCache(tmp_path).value("k", make(None))
    assert again == value and list(again[0]) == ["b", "a"] and len(made) == 1
    # A tuple would come back a list, a NaN unequal, a numpy number not at all: never
    # kept, computed every time (a warm build must use what a cold one computed).
    for i, odd in enumerate(([(1, 2)], [float("nan")], {"x": np.float32(1.0)})):
        for _ in range(2):
            assert BuildCache(tmp_path).value(f"odd{i}", make(odd)) is odd
    assert len(made) == 7


def _build(root: Path, site: Path) -> dict[str, tuple[int, int]]:
    """Run `chronicle build`; return {what: (from the cache, made)} as it printed them."""
    out = chronicle_build_output(root, site)
    return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"([a-zA-Z][a-z A-Z]*): (\d+) from \.cache/chronicle, (\d+) [a-z]+", out)}


def _tree(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def _cold(root: Path, site: Path) -> dict[str, tuple[int, int]]:
    shutil.rmtree(root / ".cache", ignore_errors=True)
    return _build(root, site)


@pytest.mark.slow
def test_a_warm_build_is_the_cold_build_byte_for_byte(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=3, languages=("en", "zh"))
    cold = _cold(made.root, tmp_path / "cold")
    assert cold["thread pages"] == (0, 2) and cold["verdicts"] == (0, 1)  # en and zh
    svgs = cold["chart SVGs"][1]
    assert svgs > 10
    assert _build(made.root, tmp_path / "warm") == {
        "chart SVGs": (svgs, 0), "thread pages": (2, 0), "verdicts": (1, 0),
        "translated day pages": (3, 0)}
    assert _tree(tmp_path / "warm") == _tree(tmp_path / "cold")


@pytest.mark.slow
def test_a_new_snapshot_and_a_correction_make_what_they_change(tmp_path: Path) -> None:
    # The same chronicle one night earlier: its cache is what last night's build left.
    earlier = make_chronicle(tmp_path / "earlier", nights=2)
    later = make_chronicle(tmp_path / "later", nights=3)
    _build(earlier.root, tmp_path / "s0")
    shutil.copytree(earlier.root / ".cache", later.root / ".cache")
    night = _build(later.root, tmp_path / "night")
    # The thread was updated and every run-wide chart shows one more day.
    assert night["thread pages"] == (0, 1) and night["verdicts"] == (0, 1)
    assert night["chart SVGs"][1] > 0
    _cold(later.root, tmp_path / "night-cold")
    assert _tree(tmp_path / "night") == _tree(tmp_path / "night-cold")
    _build(later.root, tmp_path / "again")  # the cache of the store before the correction
    add_correction(later, 3)
    fixed = _build(later.root, tmp_path / "fixed")
    # Late rows change the verdicts and the charts, not the thread.
    assert fixed["verdicts"] == (0, 1) and fixed["thread pages"] == (1, 0)
    assert fixed["chart SVGs"][1] > 0
    _cold(later.root, tmp_path / "fixed-cold")
    assert _tree(tmp_path / "fixed") == _tree(tmp_path / "fixed-cold")
