"""The translated day pages kept between builds (site/edition_cache.py): a warm build is
the cold build byte for byte, it renders only what changed, and a damaged, foreign or
unwritable cache is only slower."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.site.edition_cache import cache_dir, edition_key
from tests.support.site_factory import Built, chronicle_build_output, make_chronicle, tree_bytes

DAY = "2026-08-21"
PO = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
      'msgid "Key figures"\nmsgstr "要点数字（本地译文）"\n')


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("edcache") / "c", nights=3,
                          languages=("en", "zh"))


def _build(root: Path, site: Path) -> tuple[int, int]:
    """Run `chronicle build`; return (day pages from the cache, day pages rendered)."""
    out = chronicle_build_output(root, site)
    m = re.search(r"translated day pages: (\d+) from \.cache/chronicle, (\d+) rendered", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


def _cold(root: Path, site: Path) -> tuple[int, int]:
    shutil.rmtree(root / ".cache", ignore_errors=True)
    return _build(root, site)



def _entries(root: Path) -> list[Path]:
    return sorted(cache_dir(root).iterdir())


def test_a_warm_build_is_the_cold_build_and_renders_nothing(made: Built, tmp_path: Path
                                                             ) -> None:
    assert _cold(made.root, tmp_path / "cold") == (0, 3)
    assert len(_entries(made.root)) == 3
    assert _build(made.root, tmp_path / "warm") == (3, 0)
    cold, warm = tree_bytes(tmp_path / "cold"), tree_bytes(tmp_path / "warm")
    assert any(p.startswith("zh/days/") for p in warm)
    assert warm == cold
    assert len(_entries(made.root)) == 3


def test_a_damaged_or_foreign_entry_is_rendered_again(made: Built, tmp_path: Path) -> None:
    _cold(made.root, tmp_path / "cold")
    first, second, third = _entries(made.root)
    # A truncated entry, and one holding another day's (valid) entry under its name: both
    # must be rendered again, never published.
    first.write_bytes(first.read_bytes()[:-100])
    second.write_bytes(third.read_bytes())
    # An edit that keeps the JSON valid but not the checksum (the page's first byte).
    raw = third.read_bytes()
    at = raw.index(b'["t","') + len(b'["t","')
    third.write_bytes(raw[:at] + (b"X" if raw[at:at + 1] != b"X" else b"Y") + raw[at + 1:])
    assert _build(made.root, tmp_path / "again") == (0, 3)
    assert tree_bytes(tmp_path / "again") == tree_bytes(tmp_path / "cold")
    # Rendered again means written again: the next build reads all three.
    assert _build(made.root, tmp_path / "warm") == (3, 0)


def test_a_chronicles_own_translation_changes_the_pages(made: Built, tmp_path: Path) -> None:
    _cold(made.root, tmp_path / "before")
    before = _entries(made.root)
    (made.root / "locale").mkdir()
    (made.root / "locale" / "zh.po").write_text(PO, encoding="utf-8")
    try:
        assert _build(made.root, tmp_path / "warm") == (0, 3)
        page = (tmp_path / "warm" / "zh" / "days" / f"{DAY}.html").read_text(encoding="utf-8")
        assert "要点数字（本地译文）" in page
        # The entries of the old catalog are dropped: the folder holds one build's worth.
        after = _entries(made.root)
        assert len(after) == 3 and not set(after) & set(before)
        assert _cold(made.root, tmp_path / "cold") == (0, 3)
        assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")
    finally:
        shutil.rmtree(made.root / "locale")


def test_a_config_change_renders_every_page_again(made: Built, tmp_path: Path) -> None:
    _cold(made.root, tmp_path / "before")
    yml = made.root / "chronicle.yml"
    text = yml.read_text(encoding="utf-8")
    yml.write_text(text.replace("https://example.org/chronicle/",
                                "https://example.org/moved/"), encoding="utf-8")
    try:
        assert _build(made.root, tmp_path / "warm") == (0, 3)
        page = (tmp_path / "warm" / "zh" / "days" / f"{DAY}.html").read_text(encoding="utf-8")
        assert "https://example.org/moved/" in page
        assert _cold(made.root, tmp_path / "cold") == (0, 3)
        assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")
    finally:
        yml.write_text(text, encoding="utf-8")


def test_a_new_day_is_rendered_and_older_ones_reused(tmp_path: Path) -> None:
    # The same chronicle one night earlier: its cache is what last night's build left.
    earlier = make_chronicle(tmp_path / "earlier", nights=2, languages=("en", "zh"))
    later = make_chronicle(tmp_path / "later", nights=3, languages=("en", "zh"))
    assert _build(earlier.root, tmp_path / "s0") == (0, 2)
    shutil.copytree(earlier.root / ".cache", later.root / ".cache")
    # Day 1 is reused; day 2 gains its "next day" link; day 3 is new.
    assert _build(later.root, tmp_path / "warm") == (1, 2)
    assert len(_entries(later.root)) == 3
    assert _cold(later.root, tmp_path / "cold") == (0, 3)
    assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")


def test_a_night_of_the_simulated_run_renders_only_what_changed(tmp_path: Path) -> None:
    # A real night changes the W&B runs' records (state, summary, heartbeat) every time;
    # a sealed day's Chinese page reads only the lineage's order from them, so it is
    # reused (it was rendered again every night, ~50 s of a 100-day nightly).
    from datetime import UTC, datetime

    from chronicle.snapshot.fetch import fetch_simulated_source
    from chronicle.snapshot.take import take_snapshot
    from tests.support.site_factory import simulated_chronicle

    made = simulated_chronicle(tmp_path / "c", nights=3, planned_days=10)
    runs_before = [r.to_json() for r in made.store.load_runs()]
    assert _build(made.config.root, tmp_path / "s0") == (0, 3)
    take_snapshot(made.config, datetime(2026, 8, 24, 3, 17, tzinfo=UTC), store=made.store,
                  fetcher=lambda c, s, t: fetch_simulated_source(c, s, t, sim=made.sim))
    assert [r.to_json() for r in made.store.load_runs()] != runs_before
    # Days 1-2 reused; day 3 gains its "next day" link; day 4 is new.
    assert _build(made.config.root, tmp_path / "s1") == (2, 2)
    assert tree_bytes(tmp_path / "s1") == _tree_cold(made.config.root, tmp_path / "cold")


def _tree_cold(root: Path, site: Path) -> dict[str, bytes]:
    _cold(root, site)
    return tree_bytes(site)


def test_a_cache_that_cannot_be_written_still_builds(made: Built, tmp_path: Path) -> None:
    _cold(made.root, tmp_path / "cold")
    shutil.rmtree(cache_dir(made.root))
    cache_dir(made.root).write_text("not a folder")  # what a read-only disk amounts to
    try:
        assert _build(made.root, tmp_path / "again") == (0, 3)
        assert tree_bytes(tmp_path / "again") == tree_bytes(tmp_path / "cold")
    finally:
        cache_dir(made.root).unlink()


def test_the_key_covers_language_catalog_and_config_not_the_folder(made: Built,
                                                                   tmp_path: Path) -> None:
    config = load_config(made.root)
    key = edition_key(config, "zh")
    assert edition_key(config, "zh") == key
    assert edition_key(replace(config, root=tmp_path), "zh") == key
    assert edition_key(config, "en") != key
    strict = replace(config, sealing=replace(config.sealing, max_wait_days=9))
    assert edition_key(strict, "zh") != key
    (made.root / "locale").mkdir()
    try:
        (made.root / "locale" / "zh.po").write_text(PO, encoding="utf-8")
        assert edition_key(config, "zh") != key
    finally:
        shutil.rmtree(made.root / "locale")
