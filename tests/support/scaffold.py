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

from chronicle.config import load_config
from chronicle.init import scaffold_files
from chronicle.site.publish.zenodo import FILENAME as ZENODO_FILE
from chronicle.site.publish.zenodo import write_zenodo_json, zenodo_json
from tests.support.paths import REPO

# Scaffold files the repository keeps its own version of, and why.
OWN = {".gitignore": "the repository's also ignores the Python package's build files"}
COMMAND = "make scaffold"


def repo_copies() -> dict[str, Path]:
    """Return {path in the repository: its source in chronicle/scaffold/}."""
    return {rel: src for rel, src in scaffold_files().items() if rel not in OWN}


def stale_copies(root: Path = REPO) -> list[str]:
    """Return the copies under `root` that are missing or differ from their source (and
    .zenodo.json, when it is not what the repository's chronicle.yml makes)."""
    stale = [rel for rel, src in repo_copies().items()
             if not (root / rel).is_file() or (root / rel).read_bytes() != src.read_bytes()]
    if (root / "chronicle.yml").is_file():
        made = zenodo_json(load_config(root))
        zenodo = root / ZENODO_FILE
        if not zenodo.is_file() or zenodo.read_bytes() != made:
            stale.append(ZENODO_FILE)
    return stale


def write_copies(root: Path = REPO) -> list[str]:
    """Write every stale copy under `root` from its source; return those written."""
    stale = stale_copies(root)
    for rel in stale:
        if rel == ZENODO_FILE:
            write_zenodo_json(load_config(root))
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo_copies()[rel], root / rel)
    return stale


def main() -> int:
    """Write the repository's stale copies; print what was written."""
    written = write_copies()
    for rel in written:
        source = "chronicle.yml" if rel == ZENODO_FILE else repo_copies()[rel].relative_to(REPO)
        print(f"wrote {rel} from {source}")
    print(f"{len(written)} of {len(repo_copies())} scaffold copies written; "
          f"kept the repository's own {', '.join(OWN)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
