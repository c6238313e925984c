"""chronicle/workers/zensical_build.py: what a Zensical build's child runs, and what it
imports."""

from __future__ import annotations

import pickle
import subprocess
import sys

from chronicle.workers import zensical_build
from tests.support.paths import REPO


def test_a_zensical_child_imports_none_of_the_build_path() -> None:
    # The child unpickles zensical_build.build: that imports this module and nothing of
    # chronicle.site (Altair, mkdocs, Material, jieba: ~0.8 s of every Zensical build).
    code = ("import pickle, sys; from chronicle.workers import zensical_build;"
            "pickle.loads(pickle.dumps(zensical_build.build));"
            "print(' '.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO).stdout.split()
    ours = [m for m in loaded if m == "chronicle" or m.startswith("chronicle.")]
    assert ours == ["chronicle", "chronicle.workers", "chronicle.workers.zensical_build"]
    assert not {"altair", "mkdocs", "material", "jieba", "numpy", "zensical"} & set(loaded)
    assert pickle.loads(pickle.dumps(zensical_build.build)) is zensical_build.build
