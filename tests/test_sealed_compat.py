"""Sealed bytes are sacred: a newer chronicle neither reseals differently by accident nor
touches what an older version sealed.

`fixtures/chronicle_v1.tar.gz` is a 3-day demo chronicle (scaffold, store and sealed days)
made by chronicle at commit 4eb424f, before the package layout changed. It never changes.
`fixtures/golden/demo3_sealed.json` lists the sha256 of every file the current version
seals for the same simulated inputs; regenerate it only when the rendering of newly
sealed days changes on purpose: `python -m tests.support.goldens`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.snapshot.provenance import DAY_PAGE
from tests.support.goldens import (
    golden_page,
    keeps_v1_columns,
    read_golden,
    seal_v1_nights,
    stored_digests,
    take_snapshot,
    unpack_v1,
)


@pytest.mark.slow
def test_same_inputs_seal_the_golden_bytes(tmp_path: Path) -> None:
    v1 = unpack_v1(tmp_path / "v1")
    got = seal_v1_nights(v1, tmp_path / "fresh")
    golden = read_golden()
    assert sorted(got) == sorted(golden), "a different set of files was sealed"
    changed = sorted(p for p in golden if got[p] != golden[p])
    assert not changed, f"sealed bytes differ from the golden: {changed[:5]}"
    # The simulated source logs more W&B keys than v1's did (the data-mixture stage and
    # weights): the rows v1 stored keep every value they had.
    for rel in (p for p in golden if p.endswith("metrics.parquet")):
        old, new = v1 / "docs" / rel, tmp_path / "fresh" / "docs" / rel
        assert keeps_v1_columns(old, new), f"{rel}: a value v1 stored changed"


def test_golden_matches_v1_until_rendering_changes_on_purpose(tmp_path: Path) -> None:
    # The store's snapshot files never depend on rendering: run records, threads and
    # failure records stay v1's bytes (metrics.parquet may gain columns: see above).
    v1 = stored_digests(unpack_v1(tmp_path))
    golden = read_golden()
    data = {p: d for p, d in golden.items() if p.startswith("data/") and "MANIFEST" not in p}
    assert sorted(data) == sorted(p for p in v1 if p in data)
    json_files = {p: d for p, d in data.items() if p.endswith(".json")
                  and not p.endswith("failures.json")}
    assert json_files == {p: d for p, d in v1.items() if p in json_files}
    assert json_files, "the golden lists no snapshot files"
    # Failure records keep v1's every field; a detected one has gained its facts
    # (`detail`, from which each language says it) and nothing else.
    fresh = tmp_path / "fresh"
    seal_v1_nights(unpack_v1(tmp_path / "again"), fresh)
    # Since run states (chronicle.day_page/4), the silence after a finished run's last row
    # is no open gap: v1 recorded one on the last night, from the moment the run ended.
    last = json.loads((fresh / "docs/days/2026-08-22.json").read_bytes())["run_state"]
    assert last["state"] == "finished", last
    for rel in (p for p in data if p.endswith("failures.json")):
        old = json.loads((tmp_path / "docs" / rel).read_bytes())
        new = json.loads((fresh / "docs" / rel).read_bytes())
        kept = [{k: v for k, v in r.items() if k != "detail"} for r in new]
        dropped = [r for r in old if r not in kept]
        assert [(r["kind"], r["end"], r["start"]) for r in dropped] in (
            [], [("gap", None, last["since"])]), rel
        assert kept == [r for r in old if r not in dropped], rel
        assert any("detail" in r for r in new), rel


@pytest.mark.slow
def test_upgrade_leaves_every_v1_file_unchanged(tmp_path: Path) -> None:
    root = unpack_v1(tmp_path / "c")
    before = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # A night with the new version: one more snapshot, then a build with v1's mkdocs.yml,
    # docs/hooks.py and docs/gen_pages.py (an upgraded chronicle keeps its scaffold).
    take_snapshot(root, "2026-08-24T03:17:00Z")
    result = CliRunner().invoke(main, ["build", "--dir", str(root)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["verify", "--dir", str(root)])
    assert result.exit_code == 0, result.output
    for rel, blob in before.items():
        assert (root / rel).read_bytes() == blob, f"{rel} changed"
    site = root / "site"
    for rel in before:
        if rel.startswith("docs/days/") and rel.endswith(".md"):
            served = site / rel.removeprefix("docs/")
            assert served.read_bytes() == before[rel], f"{served} is not served byte for byte"
            # The page as published: its citation and data files under the sealed text
            # (site/outputs/sources.py, through v1's gen_pages.py), and a link to the next
            # day.
            page = served.with_suffix(".html").read_text(encoding="utf-8")
            assert "Cite this entry" in page and "Next day" in page, served


def test_the_golden_was_sealed_under_the_current_page_version() -> None:
    # A bumped DAY_PAGE needs the golden made again (python -m tests.support.goldens),
    # which in turn refuses new day bytes under an unchanged version.
    assert golden_page() == DAY_PAGE
