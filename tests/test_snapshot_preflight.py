"""What `chronicle snapshot` refuses before fetching anything (snapshot/preflight.py): the
scaffold's example values on a live chronicle, and an --as-of far before the run or in the
future, on either source. Exit 2, one message, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from tests.support.commands import cli
from tests.support.config import scaffold_simulated
from tests.support.fakes.wandb_server import FakeWandb


def test_a_fresh_scaffold_snapshot_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "my-run"
    assert cli("init", str(root)).exit_code == 0
    result = cli("snapshot", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE
    for key, value in (("wandb.entity", "my-entity"), ("wandb.project", "my-project"),
                       ("wandb.runs", "my-run-id"), ("github.repo", "my-org/my-repo")):
        assert f"{key}: still the scaffold's example {value!r}" in result.output
    # The run's own facts too: init's are examples, not Marin's run claimed as yours.
    assert "run.example: true: the run: values are still the scaffold's examples " \
        "('My training run', start 2026-08-20, 100 days, 1.8e+13 tokens, 704 GB200)" \
        in " ".join(result.output.split())
    assert "delete the `example: true` line" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert list((root / "docs" / "data").iterdir()) == []
    assert not (root / ".chronicle.lock").exists()


@pytest.mark.parametrize(("as_of", "said"), [
    ("1971-01-01T00:00:00Z", "more than 31 days before run.start (2026-08-20)"),
    ("0001-01-01T00:00:00Z", "more than 31 days before run.start (2026-08-20)"),
    ("9999-12-31T23:59:59Z", None),
])
@pytest.mark.parametrize("source", ["live", "simulated"])
def test_an_as_of_far_from_the_run_is_refused(live: tuple[Path, FakeWandb], tmp_path: Path,
                                              source: str, as_of: str, said: str | None) -> None:
    root = live[0] if source == "live" else scaffold_simulated(tmp_path / "sim")
    if said is None:
        said = ("is in the future" if source == "live"
                else "more than 31 days after the simulated run ends")
    result = cli("snapshot", "--dir", str(root), "--as-of", as_of)
    assert result.exit_code == EXIT_USAGE, result.output
    assert said in result.output and "Traceback" not in result.output
    assert list((root / "docs" / "data").iterdir()) == []
    assert not list((live[0] / "docs" / "days").glob("*"))
