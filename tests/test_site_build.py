"""`chronicle build` (site/build.py): it never empties a folder that is not an earlier site,
it lists the warnings that made `--strict` abort, and quotes in sealed headings show as
typed (also on pages sealed before `md_text` kept them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chronicle.errors import EXIT_USAGE
from tests.support.commands import cli, night
from tests.support.config import scaffold_simulated


@pytest.fixture(scope="module")
def one_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = scaffold_simulated(tmp_path_factory.mktemp("build") / "c", days=2)
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    return root


@pytest.fixture
def root(one_night: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(one_night, tmp_path / "c"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_non_empty_folder_that_is_not_a_site_is_refused_untouched(
        root: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    (precious / "sub").mkdir(parents=True)
    (precious / "thesis.tex").write_text("years of work")
    (precious / "sub" / "data.csv").write_text("1,2,3")
    for target in (precious, root):
        before = _tree(target)
        result = cli("build", "--dir", str(root), "--site-dir", str(target))
        assert result.exit_code == EXIT_USAGE, result.output
        assert "not empty and not an earlier chronicle site" in result.output
        assert "nothing was deleted" in result.output
        assert _tree(target) == before
    assert "it holds the chronicle itself" in cli(
        "build", "--dir", str(root), "--site-dir", str(root)).output


def test_an_earlier_site_or_an_empty_folder_is_built_into(root: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for _ in range(2):  # the second build replaces the first one's site
        result = cli("build", "--dir", str(root), "--site-dir", str(empty))
        assert result.exit_code == 0, result.output
        assert (empty / "api" / "latest.json").is_file()


def test_strict_abort_lists_the_warnings(root: Path) -> None:
    (root / "docs" / "notes.md").write_text("# Notes\n\nSee [the plan](plan.md).\n")
    result = cli("build", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "the site build failed: Aborted with" in result.output
    assert "the warnings:" in result.output and "plan.md" in result.output, result.output


def test_quotes_in_pages_sealed_by_an_older_version_show_as_typed(root: Path) -> None:
    # Before md_text kept quotes, a sealed heading held `&\\#34;` and showed it as typed.
    page = root / "docs" / "days" / "2026-08-20.md"
    page.write_text(page.read_text() + '\n### #7 A &\\#34;quoted&\\#34; title\n')
    assert cli("build", "--dir", str(root)).exit_code == 0
    html = (root / "site" / "days" / "2026-08-20.html").read_text()
    assert "A \"quoted\" title" in html or "A &quot;quoted&quot; title" in html
    assert "&amp;#34;" not in html and "&#34;quoted" not in html
