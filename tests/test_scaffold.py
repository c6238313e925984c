"""The repository's copies of chronicle/scaffold/ (it is itself a chronicle) equal their
source, and `make scaffold` (tests/support/scaffold.py) writes them."""

from __future__ import annotations

from pathlib import Path

from chronicle.init import scaffold_files
from tests.support.paths import SCAFFOLD
from tests.support.scaffold import COMMAND, OWN, repo_copies, stale_copies, write_copies

# Scaffold file -> the repository's copy of it (renamed as `chronicle init` renames it).
PAIRS = {
    "mkdocs.yml": "mkdocs.yml",
    "gen_pages.py": "gen_pages.py",
    "docs/assets/chronicle.svg": "docs/assets/chronicle.svg",
    "workflows/nightly.yml": ".github/workflows/nightly.yml",
}


def test_repository_copies_equal_the_scaffold() -> None:
    stale = stale_copies()
    assert not stale, f"{stale} differ from chronicle/scaffold/: run `{COMMAND}`"


def test_every_scaffold_file_but_gitignore_is_copied_where_init_puts_it() -> None:
    sources = {src.relative_to(SCAFFOLD).as_posix(): rel for rel, src in repo_copies().items()}
    assert sources == PAIRS
    assert set(scaffold_files()) - set(repo_copies()) == set(OWN) == {".gitignore"}


def test_make_scaffold_writes_missing_and_stale_copies_only(tmp_path: Path) -> None:
    assert sorted(write_copies(tmp_path)) == sorted(PAIRS.values())
    assert stale_copies(tmp_path) == []
    rel = "docs/assets/chronicle.svg"
    (tmp_path / rel).write_text("<svg/>\n", encoding="utf-8")  # edited in place
    assert stale_copies(tmp_path) == [rel]
    assert write_copies(tmp_path) == [rel]
    assert (tmp_path / rel).read_bytes() == (SCAFFOLD / rel).read_bytes()
    assert write_copies(tmp_path) == []
