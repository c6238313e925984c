"""The build's own work kept between builds (site/build_cache.py): an entry is read back
only under the key it was written for and while its checksum holds; a damaged, foreign or
unwritable cache is only slower; a build drops what it did not use; a warm build is the
cold build byte for byte, and makes again exactly what a new snapshot or a correction
changed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from chronicle.cachekey import ENV, sign
from chronicle.files.nofollow import NotAFile
from chronicle.site.build_cache import FORMAT, BuildCache, Caches, cache_root, entry_key
from tests.support.commands import cli
from tests.support.site_factory import (
    add_correction,
    chronicle_build_output,
    make_chronicle,
    tree_bytes,
)

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


def test_a_kind_this_build_never_looked_in_is_left_whole(tmp_path: Path) -> None:
    # A build with a speed-up off (the bench's row without it) or with the other engine
    # does not look in that kind's folder: it must not empty it for the next build.
    first = Caches.of(tmp_path)
    first.svgs.put("kept", FILES)
    first.zensical.put("kept", FILES)
    second = Caches.of(tmp_path)
    assert second.svgs.get("kept") is not None
    second.prune()
    assert Caches.of(tmp_path).zensical.get("kept") == FILES


def test_a_kind_no_longer_kept_is_emptied_by_the_next_build(tmp_path: Path) -> None:
    # A nightly restores what an earlier version kept: its thread pages are never read,
    # and go with the first prune.
    BuildCache(cache_root(tmp_path) / "threads", base=tmp_path).put("old", FILES)
    caches = Caches.of(tmp_path)
    assert "threads" not in caches.each()
    caches.prune()
    assert list((cache_root(tmp_path) / "threads").iterdir()) == []


def test_the_key_is_every_input_and_only_them() -> None:
    key = entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"2"})
    assert entry_key("p", {"b": [1, 2], "a": 1}, {"y": b"2", "x": b"1"}) == key
    assert entry_key("q", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"2"}) != key
    assert entry_key("p", {"a": 1, "b": [2, 1]}, {"x": b"1", "y": b"2"}) != key
    assert entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "y": b"3"}) != key
    assert entry_key("p", {"a": 1, "b": [1, 2]}, {"x": b"1", "z": b"2"}) != key


def _build(root: Path, site: Path) -> dict[str, tuple[int, int]]:
    """Run `chronicle build`; return {what: (from the cache, made)} as it printed them."""
    out = chronicle_build_output(root, site)
    return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"([a-zA-Z][a-z A-Z]*): (\d+) from \.cache/chronicle, (\d+) [a-z]+", out)}



def _cold(root: Path, site: Path) -> dict[str, tuple[int, int]]:
    shutil.rmtree(root / ".cache", ignore_errors=True)
    return _build(root, site)


@pytest.mark.slow
def test_a_warm_build_is_the_cold_build_byte_for_byte(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=3, languages=("en", "zh"))
    cold = _cold(made.root, tmp_path / "cold")
    svgs = cold["chart SVGs"][1]
    assert svgs > 10
    assert _build(made.root, tmp_path / "warm") == {
        "chart SVGs": (svgs, 0)}
    assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")


@pytest.mark.slow
def test_a_new_snapshot_and_a_correction_make_what_they_change(tmp_path: Path) -> None:
    # The same chronicle one night earlier: its cache is what last night's build left.
    earlier = make_chronicle(tmp_path / "earlier", nights=2, languages=("en", "zh"))
    later = make_chronicle(tmp_path / "later", nights=3, languages=("en", "zh"))
    _build(earlier.root, tmp_path / "s0")
    shutil.copytree(earlier.root / ".cache", later.root / ".cache")
    night = _build(later.root, tmp_path / "night")
    # Every run-wide chart shows one more day.
    assert night["chart SVGs"][1] > 0
    _cold(later.root, tmp_path / "night-cold")
    assert tree_bytes(tmp_path / "night") == tree_bytes(tmp_path / "night-cold")
    _build(later.root, tmp_path / "again")  # the cache of the store before the correction
    add_correction(later, 3)
    fixed = _build(later.root, tmp_path / "fixed")
    # Late rows change the charts.
    assert fixed["chart SVGs"][1] > 0
    _cold(later.root, tmp_path / "fixed-cold")
    assert tree_bytes(tmp_path / "fixed") == tree_bytes(tmp_path / "fixed-cold")


# ---- a cache is opened without following links, and trusted only with the secret --------


def _forge(entry: bytes, kind: str, how: str, marker: str = "forged") -> bytes:
    """Return `entry` with `<script>` put into each of its texts and its first line made
    again as a forger would: the sha256 of the body (all the old format asked), or an
    HMAC under a secret of their own."""
    body = json.loads(entry.partition(b"\n")[2])
    for name, (kind_of, content) in body["files"].items():
        if kind_of == "t":
            body["files"][name] = ["t", content.replace(
                "<", f"<script>alert('{marker}')</script><", 1) if "<" in content
                else content + f"\n\n<script>alert('{marker}')</script>\n"]
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    head = hashlib.sha256(raw).hexdigest() if how == "sha256" else \
        sign(b"the forger's own secret", kind, raw)
    return head.encode() + b"\n" + raw


@pytest.mark.parametrize("how", ["sha256", "hmac"])
def test_an_entry_forged_with_a_recomputed_checksum_is_a_miss(tmp_path: Path, how: str) -> None:
    cache = BuildCache(tmp_path / "svgs")
    cache.put("k1", {"loss.svg": "<svg>ok</svg>"})
    path = tmp_path / "svgs" / f"v{FORMAT}-k1.json"
    path.write_bytes(_forge(path.read_bytes(), "svgs", how))
    assert BuildCache(tmp_path / "svgs").get("k1") is None


def test_an_entry_needs_the_secret_it_was_kept_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "tonight's secret")
    BuildCache(tmp_path).put("k1", FILES)
    monkeypatch.setenv(ENV, "a restored cache's secret")
    assert BuildCache(tmp_path).get("k1") is None
    monkeypatch.setenv(ENV, "tonight's secret")
    assert BuildCache(tmp_path).get("k1") == FILES


def test_without_a_secret_nothing_is_kept_or_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    (tmp_path / "not-a-folder").write_text("")  # where the key file's folder would go
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not-a-folder"))
    cache = BuildCache(tmp_path / "kind")
    cache.put("k1", FILES)
    assert cache.get("k1") is None and cache.written == 0
    assert not (tmp_path / "kind").exists()


def test_an_entry_that_is_a_link_folder_or_fifo_is_a_miss_and_prune_removes_only_it(
        tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "kind")
    cache.put("k1", FILES)
    entry = tmp_path / "kind" / f"v{FORMAT}-k1.json"
    outside = tmp_path / "elsewhere.json"
    entry.rename(outside)  # a valid entry, reached through a link
    entry.symlink_to(outside)
    assert BuildCache(tmp_path / "kind").get("k1") is None
    BuildCache(tmp_path / "kind").prune()  # uses nothing: the link goes, not its target
    assert not entry.is_symlink() and outside.is_file()
    entry.mkdir()
    assert BuildCache(tmp_path / "kind").get("k1") is None
    entry.rmdir()
    os.mkfifo(entry)
    assert BuildCache(tmp_path / "kind").get("k1") is None  # never waits on the FIFO
    cache = BuildCache(tmp_path / "kind")
    cache.put("k1", FILES)  # replaces the FIFO itself, whole
    assert BuildCache(tmp_path / "kind").get("k1") == FILES


@pytest.mark.parametrize("folder", [".cache", ".cache/chronicle", ".cache/chronicle/svgs"])
def test_a_cache_folder_that_is_a_link_is_refused_and_nothing_outside_is_pruned(
        tmp_path: Path, folder: str) -> None:
    days = tmp_path / "docs" / "days"
    days.mkdir(parents=True)
    (days / "2026-08-20.md").write_text("sealed")
    link = tmp_path / folder
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(days)
    with pytest.raises(NotAFile) as err:
        Caches.of(tmp_path)
    assert str(err.value).startswith(f"{link}: a symbolic link, where chronicle expects a "
                                     "folder")
    svgs = BuildCache(cache_root(tmp_path) / "svgs", base=tmp_path)
    with pytest.raises(NotAFile):
        svgs.prune()
    with pytest.raises(NotAFile):
        svgs.put("k", FILES)
    assert [p.name for p in days.iterdir()] == ["2026-08-20.md"]


@pytest.mark.slow
def test_a_planted_link_in_the_cache_stops_the_build_before_it_deletes_anything(
        tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=2)
    _build(made.root, tmp_path / "site")
    days = made.root / "docs" / "days"
    sealed = sorted(p.relative_to(days).as_posix() for p in days.rglob("*"))
    svgs = cache_root(made.root) / "svgs"
    shutil.rmtree(svgs)
    svgs.symlink_to(Path("../../docs/days"))
    result = cli("build", "--dir", str(made.root), "--site-dir", str(tmp_path / "again"))
    assert result.exit_code == 2, result.output
    assert f"{svgs}: a symbolic link, where chronicle expects a folder" in result.output
    assert sorted(p.relative_to(days).as_posix() for p in days.rglob("*")) == sealed


@pytest.mark.slow
def test_forged_entries_of_every_kind_are_not_used(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=3, languages=("en", "zh"))
    _build(made.root, tmp_path / "site")
    forged = 0
    for kind in ("svgs",):
        for i, path in enumerate(sorted((cache_root(made.root) / kind).iterdir())):
            path.write_bytes(_forge(path.read_bytes(), kind, ("sha256", "hmac")[i % 2]))
            forged += 1
    again = _build(made.root, tmp_path / "again")
    assert again["chart SVGs"][0] == 0, again
    site = tree_bytes(tmp_path / "again")
    assert site == tree_bytes(tmp_path / "site")
    assert forged > 5 and not [p for p, data in site.items() if b"forged" in data]
