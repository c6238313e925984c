"""The repository's copies of the scaffold, written from chronicle/scaffold/ (the one source).

This repository is itself a chronicle (of the Marin run), so it holds what `chronicle init`
copies into a new chronicle: mkdocs.yml, docs/assets/, the nightly workflow. They are
never edited here: edit chronicle/scaffold/, then write the copies with

    make scaffold          (python -m tests.support.scaffold)

tests/test_scaffold.py fails, naming that command, while a copy differs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from chronicle.init import scaffold_files
from tests.support.paths import REPO

# Scaffold files the repository keeps its own version of, and why.
OWN = {".gitignore": "the repository's also ignores the Python package's build files"}
COMMAND = "make scaffold"


def repo_copies() -> dict[str, Path]:
    """Return {path in the repository: its source in chronicle/scaffold/}."""
    return {rel: src for rel, src in scaffold_files().items() if rel not in OWN}


def stale_copies(root: Path = REPO) -> list[str]:
    """Return the copies under `root` that are missing or differ from their source."""
    return [rel for rel, src in repo_copies().items()
            if not (root / rel).is_file() or (root / rel).read_bytes() != src.read_bytes()]


def write_copies(root: Path = REPO) -> list[str]:
    """Write every stale copy under `root` from its source; return those written."""
    stale = stale_copies(root)
    for rel in stale:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo_copies()[rel], root / rel)
    return stale


def main() -> int:
    """Write the repository's stale copies; print what was written."""
    written = write_copies()
    for rel in written:
        print(f"wrote {rel} from {repo_copies()[rel].relative_to(REPO)}")
    print(f"{len(written)} of {len(repo_copies())} scaffold copies written; "
          f"kept the repository's own {', '.join(OWN)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
