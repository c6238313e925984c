"""The nightly rehearsal (tests/rehearsal/, `make rehearse`) passes over five nights
(a killed attempt, a W&B outage, a quiet night with a concurrent push), and its checks
fail when what they guard is broken (rewritten history, an altered sealed page, a
half-written snapshot left behind, a missing stale notice)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.rehearsal.checks import (
    NightResult,
    RehearsalFailure,
    check_git,
    check_site,
    check_snapshot,
)
from tests.rehearsal.runner import expand, main, rehearse
from tests.rehearsal.world import MAINTAINER_SUBJECT, history_rows, night_plan, night_time
from tests.support.git import git

NIGHTS = 5
Run = tuple[Path, list[NightResult], list[str]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if not (Path(sys.executable).parent / "chronicle").is_file():
        pytest.fail(f"no chronicle executable beside {sys.executable}: run `make install`")
    root = tmp_path_factory.mktemp("rehearsal") / "r"
    lines: list[str] = []
    results = rehearse(NIGHTS, root, echo=lines.append)
    yield root, results, lines


@pytest.fixture
def copy(run: Run, tmp_path: Path) -> Path:
    """A copy of the rehearsal's remote and checkout, to tamper with."""
    root = tmp_path / "r"
    for name in ("remote.git", "work", "chronicle-calls"):
        src = run[0] / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / name)
    git(root / "work", "remote", "set-url", "origin", str(root / "remote.git"))
    return root


def test_five_nights_pass_with_the_planned_outcomes(run: Run) -> None:
    _, results, lines = run
    assert [r.exit_code for r in results] == [0, 0, 3, 0, 0]
    # Night 3 (W&B down) seals nothing: its day waits for night 4, which seals both.
    assert [r.sealed for r in results] == [
        ("2026-08-20",), ("2026-08-21",), (), ("2026-08-22", "2026-08-23"), ("2026-08-24",)
    ]
    # Night 3 (W&B down) and night 4 (nothing new) store no rows; night 5 stores every row
    # logged since night 2, each once (the checks compare the stored set with W&B's).
    night = night_time
    assert [r.rows for r in results] == [
        len(history_rows(night(1))),
        len(history_rows(night(2))) - len(history_rows(night(1))),
        0,
        0,
        len(history_rows(night(5))) - len(history_rows(night(2))),
    ]
    assert results[3].threads == 0
    assert "killed mid-write: left .tmp-2026-08-22T031700Z/" in results[1].note
    assert "a maintainer pushed" in results[3].note
    assert len({r.commit for r in results}) == NIGHTS
    assert len(lines) == NIGHTS and lines[2].split()[:3] == ["3", "2026-08-23T031700Z", "3"]


def test_the_remote_holds_one_commit_per_night_and_the_maintainers(run: Run) -> None:
    root, results, _ = run
    log = git(root / "remote.git", "log", "--format=%H %s", "main").splitlines()
    commits = [line.split(" ", 1) for line in log]
    nightly = [sha for sha, subject in commits if subject.startswith("snapshot ")]
    assert nightly == [r.commit for r in reversed(results)]
    assert [s for _, s in commits if not s.startswith("snapshot ")] == [
        MAINTAINER_SUBJECT, "chronicle init"
    ]
    # Night 4's commit was rebased onto the maintainer's push made while the job ran.
    assert commits[1][1].startswith("snapshot 2026-08-24T031700Z")
    assert commits[2][1] == MAINTAINER_SUBJECT
    assert commits[3][1].endswith("(degraded: wandb failed)")


def test_check_git_catches_rewritten_history(run: Run, copy: Path) -> None:
    _, results, _ = run
    plan = night_plan(NIGHTS)
    remote = copy / "remote.git"
    assert check_git(copy, plan[-1], results[:-1]) == results[-1].commit  # untouched: passes
    # Night 5's commit replayed on night 3's: night 4's commit is dropped from history.
    tree = git(remote, "rev-parse", "main^{tree}")
    message = git(remote, "log", "-1", "--format=%B", "main")
    rewritten = git(remote, "commit-tree", tree, "-p", results[2].commit, "-m", message)
    git(remote, "update-ref", "refs/heads/main", rewritten)
    with pytest.raises(RehearsalFailure, match="night 5: check 'history only grows'"):
        check_git(copy, plan[-1], results[:-1])


def test_check_git_catches_an_altered_sealed_page(run: Run, copy: Path) -> None:
    _, results, _ = run
    work = copy / "work"
    page = work / "docs" / "days" / "2026-08-20.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nedited later\n", encoding="utf-8")
    git(work, "commit", "-q", "-a", "--amend", "--no-edit")  # same parent, same message
    git(work, "push", "-q", "--force", "origin", "HEAD:main")
    with pytest.raises(RehearsalFailure, match=r"earlier files byte-for-byte unchanged.*"
                       r"docs/days/2026-08-20\.md"):
        check_git(copy, night_plan(NIGHTS)[-1], results[:-1])


def test_check_snapshot_catches_a_half_written_snapshot(run: Run, copy: Path) -> None:
    _, results, _ = run
    night = night_plan(NIGHTS)[-1]
    logs = ["--- snapshot / Take a snapshot (exit 0)\nsnapshot ...\n"]
    assert check_snapshot(copy, night, results[:-1], logs) == 0
    (copy / "work" / "docs" / "data" / ".tmp-2026-08-25T031700Z").mkdir()
    with pytest.raises(RehearsalFailure, match="no half-written snapshot"):
        check_snapshot(copy, night, results[:-1], logs)


def test_check_site_requires_the_stale_notice_when_wandb_failed(copy: Path) -> None:
    night = night_plan(NIGHTS)[-1]
    check_site(copy, night)  # night 5's site: fresh, not stale
    with pytest.raises(RehearsalFailure, match="home page says stale and names wandb"):
        check_site(copy, replace(night, wandb_fails=True))


def test_unknown_workflow_expressions_fail_loudly() -> None:
    assert expand("a=${{ x || y }}", {"x": "", "y": "2"}) == "a=2"
    with pytest.raises(RehearsalFailure, match=r"cannot evaluate \$\{\{ vars.NEW \}\}"):
        expand("${{ vars.NEW }}", {})


def test_main_refuses_too_few_nights_and_a_used_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--nights", "3"]) == 1
    assert "needs at least 5 nights, got 3" in capsys.readouterr().err
    (tmp_path / "old").write_text("x", encoding="utf-8")
    assert main(["--keep", str(tmp_path)]) == 1
    assert "is not empty; pass a new folder to --keep" in capsys.readouterr().err
