"""The build's own work kept between builds (site/build_cache.py): an entry is read back
only under the key it was written for and while its checksum holds; a damaged, foreign or
unwritable cache is only slower; a build drops what it did not use."""

from __future__ import annotations

from pathlib import Path

from chronicle.site.build_cache import FORMAT, BuildCache, Caches, cache_root, entry_key

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
