"""A translated edition built in its own process beside the English build
(site/engines/mkdocs/edition_process.py): the same bytes as one built after English, its
failures reported by edition, nothing left behind when either build fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.errors import ChronicleError
from chronicle.executor import Executor
from chronicle.site.build import build_site
from chronicle.site.engines.mkdocs.core import PROPERDOCS
from chronicle.site.engines.mkdocs.edition_process import EditionProcess
from tests.support.processes import children
from tests.support.site_factory import Built, make_chronicle, tree_bytes


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("beside") / "c", nights=3,
                          languages=("en", "zh"))


def _started() -> set[int]:
    """The processes this test process started and that still run (wandb-core, started
    by the wandb client of an earlier test, lives as long as this process)."""
    return {p.pid for p in children()}



def _leftovers(folder: Path) -> list[str]:
    """What a build left beside the sites it built in `folder` (staging folders)."""
    return sorted(p.name for p in folder.iterdir() if ".building-" in p.name)


@pytest.mark.slow
def test_an_edition_built_beside_english_is_the_one_built_after_it(made: Built,
                                                                   tmp_path: Path) -> None:
    config = load_config(made.root)
    before = _started()
    took: dict[str, float] = {}
    cached: dict[str, int] = {}
    # Cold first: the child draws its own run-wide charts while the parent draws English's.
    beside = build_site(config, tmp_path / "beside", seconds=took, cached=cached, beside=True)
    after = build_site(config, tmp_path / "after", beside=False)
    assert tree_bytes(beside) == tree_bytes(after)
    assert any(p.startswith("zh/days/") for p in tree_bytes(beside))
    assert set(took) == {"en", "zh"} and took["zh"] > 0
    assert cached["svgs made"] > 0 and cached["svgs reused"] == 0, cached
    assert _leftovers(tmp_path) == []
    assert _started() == before
    # The parent prunes with the child's entries kept (counted here, with its own): a warm
    # build reuses all of them.
    again: dict[str, int] = {}
    build_site(config, tmp_path / "again", cached=again, beside=True)
    assert again["svgs reused"] == cached["svgs made"] and again["svgs made"] == 0, again


def test_a_failed_edition_build_names_its_edition_and_leaves_nothing(made: Built,
                                                                     tmp_path: Path) -> None:
    config = load_config(made.root)
    before = _started()
    with Executor() as executor:
        child = EditionProcess.start(executor, config, made.root / "missing.yml", "zh",
                                     tmp_path / ".site.building-1-zh", PROPERDOCS)
        with pytest.raises(ChronicleError, match=r"the site build failed \(zh edition\)"):
            child.finish(tmp_path / "site")
        child.stop()
        assert not child.staging.exists() and not (tmp_path / "site" / "zh").exists()
        assert child.child.process.poll() is not None
    assert _started() == before


@pytest.mark.slow
def test_a_failed_english_build_stops_the_edition_beside_it(tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=2, languages=("en", "zh"))
    (made.root / "docs" / "notes.md").write_text("# Notes\n\nSee [the plan](plan.md).\n")
    before = _started()
    with pytest.raises(ChronicleError, match=r"(?s)the site build failed: Aborted.*plan\.md"):
        build_site(load_config(made.root), tmp_path / "site", beside=True)
    assert _started() == before
    assert _leftovers(tmp_path) == []
    assert not (tmp_path / "site").exists()  # nothing published


def test_one_core_builds_the_editions_one_after_the_other() -> None:
    assert not Executor(cores=1).uses("beside")
    assert Executor(cores=2).uses("beside")
    assert not Executor(cores=2, without=["beside"]).uses("beside")
