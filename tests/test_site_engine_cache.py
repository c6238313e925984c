"""Zensical's own cache of each edition's project, kept signed in .cache/chronicle
(site/engines/zensical/cache.py): a second build starts Zensical warm with the same bytes,
and nothing but a valid entry fills the folder Zensical reads its cache from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from chronicle.config import RunConfig, load_config
from chronicle.errors import ChronicleError
from chronicle.executor import Executor
from chronicle.site.build import build_site
from chronicle.site.build_cache import cache_root
from chronicle.site.engines.zensical.build import TREES
from chronicle.site.engines.zensical.cache import FOLDER
from tests.support.site_factory import make_chronicle, tree_bytes

pytest.importorskip("zensical")
MARKER = "planted-by-a-restored-cache"


def _zensical(root: Path) -> RunConfig:
    config = load_config(root)
    return replace(config, site=replace(config.site, engine="zensical"))


def _build(config: RunConfig, site: Path, without: tuple[str, ...] = ()) -> dict[str, int]:
    cached: dict[str, int] = {}
    with Executor(without=without) as executor:
        build_site(config, site, cached=cached, executor=executor)
    return cached



def _engine_folder(config: RunConfig, code: str = "en") -> Path:
    return config.root / TREES / code / FOLDER


def _poison(folder: Path) -> int:
    """Put the marker into every page Zensical kept in `folder`; return how many."""
    poisoned = 0
    for path in folder.iterdir():
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(entry, dict) and "<body" in str(entry.get("data", "")):
            entry["data"] = entry["data"].replace("<body", f"<body data-x='{MARKER}'", 1)
            path.write_text(json.dumps(entry), encoding="utf-8")
            poisoned += 1
    return poisoned


@pytest.mark.slow
def test_a_second_build_starts_zensical_warm_with_the_same_bytes(tmp_path: Path) -> None:
    config = _zensical(make_chronicle(tmp_path / "c", nights=3, languages=("en", "zh")).root)
    cold = _build(config, tmp_path / "cold")
    assert (cold["zensical reused"], cold["zensical made"]) == (0, 2), cold  # en and zh
    entries = sorted((cache_root(config.root) / "zensical").iterdir())
    assert len(entries) == 2 and all(p.stat().st_size > 10_000 for p in entries)
    warm = _build(config, tmp_path / "warm")
    assert (warm["zensical reused"], warm["zensical made"]) == (2, 0), warm
    assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")
    # Zensical's folder was filled from the entry: the same files it left there.
    assert len(list(_engine_folder(config, "zh").iterdir())) > 5


@pytest.mark.slow
def test_only_a_valid_entry_fills_zensical_s_cache(tmp_path: Path) -> None:
    config = _zensical(make_chronicle(tmp_path / "c", nights=2, languages=("en", "zh")).root)
    _build(config, tmp_path / "site")
    folders = [_engine_folder(config, code) for code in ("en", "zh")]
    # The threat: Zensical serves whatever its cache folder holds. Poisoned in place and
    # built by Zensical itself, the marker is on the pages, in either edition.
    for folder in folders:
        assert _poison(folder) > 3
        project = folder.parent
        subprocess.run([sys.executable, "-c", "import zensical; zensical.build('mkdocs.yml', "
                        "{'clean': False, 'strict': True})"], cwd=project, check=True,
                       capture_output=True, env={**os.environ, "NO_COLOR": "1"})
        assert any(MARKER in p.read_text("utf-8") for p in (project / "site").rglob("*.html"))
    # A build empties the folders and fills them from the signed entries only.
    for folder in folders:
        _poison(folder)
    _build(config, tmp_path / "again")
    assert not [p for p in (tmp_path / "again").rglob("*.html") if MARKER in p.read_text("utf-8")]
    assert any(p.name == "index.html" for p in (tmp_path / "again" / "zh").iterdir())
    # A forged entry (the bytes changed under the real signature) is a miss: Zensical
    # starts cold, in both editions.
    for entry in (cache_root(config.root) / "zensical").iterdir():
        head, _, body = entry.read_bytes().partition(b"\n")
        entry.write_bytes(head + b"\n" + body.replace(b"<body", f"<body {MARKER}".encode(), 1))
    for folder in folders:
        _poison(folder)
    cached = _build(config, tmp_path / "forged")
    assert (cached["zensical reused"], cached["zensical made"]) == (0, 2), cached
    assert not [p for p in (tmp_path / "forged").rglob("*.html")
                if MARKER in p.read_text("utf-8")]
    assert tree_bytes(tmp_path / "forged") == tree_bytes(tmp_path / "site")


def test_a_link_in_place_of_zensical_s_cache_is_refused(tmp_path: Path) -> None:
    config = _zensical(make_chronicle(tmp_path / "c", nights=1).root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not a cache")
    folder = _engine_folder(config)
    folder.parent.mkdir(parents=True)
    folder.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ChronicleError) as err:
        _build(config, tmp_path / "site")
    assert str(folder) in str(err.value)
    assert (elsewhere / "keep.txt").read_text() == "not a cache"  # nothing emptied there
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_without_the_speed_up_zensical_starts_cold_and_its_cache_is_left_alone(
        tmp_path: Path) -> None:
    config = _zensical(make_chronicle(tmp_path / "c", nights=2).root)
    _build(config, tmp_path / "warm")  # an entry is kept and Zensical's folder is full
    assert _poison(_engine_folder(config)) > 3
    kept = tree_bytes(cache_root(config.root) / "zensical")
    assert kept
    cached = _build(config, tmp_path / "cold", without=("engine-cache",))
    assert (cached["zensical reused"], cached["zensical made"]) == (0, 0), cached
    assert tree_bytes(tmp_path / "cold") == tree_bytes(tmp_path / "warm")  # the folder was emptied
    # Never looked in, so neither written nor pruned: the next build with it finds it whole
    # (the bench's rounds alternate on and off in one folder).
    assert tree_bytes(cache_root(config.root) / "zensical") == kept
    again = _build(config, tmp_path / "again")
    assert again["zensical reused"] > 0, again
