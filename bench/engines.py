"""The engines' rows (issues #25 and #42): both engines side by side against one plain
build, in one run.

The plain build is mkdocs-material (theme and search only) of the English project
`chronicle render` writes for the demo (bench/plain.py). Against it, alternating, ROUNDS
rounds each, medians:
- `chronicle build` of both editions (en + zh) with each engine, warm (after one build:
  its `.cache/chronicle`, and Zensical's own cache) and cold (both deleted before each
  round);
- a nightly with each engine: `chronicle snapshot` sealing the last day, then `chronicle
  build` of both editions, on a copy of the chronicle built once in the same folder (its
  caches kept, as the nightly workflow restores them).
Each build row also gives its largest process's peak RSS.
Targets (issue #42, with either engine): warm <= 1.0x plain, cold <= 2.5x, the nightly
<= 1.3x.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from bench.__main__ import (
    LAST_NIGHT,
    chronicle,
    median_pair,
    nightly_rounds,
    plain_build,
    python,
    row,
    run,
    set_aside,
)

WARM, COLD, NIGHTLY = 1.0, 2.5, 1.3  # issue #42's targets, x plain

def with_engine(source: Path, target: Path, engine: str) -> Path:
    """Copy a chronicle (not its site or caches) set to build with `engine`."""
    set_aside(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("site", ".cache"))
    config = target / "chronicle.yml"
    text = re.sub(r"(?m)^  engine: .*\n", "", config.read_text("utf-8"))
    config.write_text(text.replace("\nsite:\n", f"\nsite:\n  engine: {engine}\n", 1),
                      encoding="utf-8")
    return target


def built_where_it_runs(work: Path, base: Path) -> Path:
    """Build the chronicle at `work` once, then move it (without its site: a nightly
    checkout has none) to `base`, from which each round copies it back to `work`: a
    nightly's checkout is always in the same folder, and Zensical's cache (kept in
    .cache/chronicle, site/engines/zensical/cache.py) is warm only in the folder it was
    made in."""
    run(chronicle("build", "--dir", str(work)))
    set_aside(work / "site")
    set_aside(base)
    shutil.move(work, base)
    return base


def engine_rows(demo: Path, night_full: Path, tmp: Path, last_day: str) -> list[str]:
    """Return the rows of both engines (see the module docstring). `demo` is the built
    demo (both editions), `night_full` the same demo but its last night."""
    from bench.plain import write_plain_project

    plain = write_plain_project(demo, tmp / "plain-tree")
    lines = []
    for engine in ("mkdocs", "zensical"):
        chron = with_engine(demo, tmp / f"engine-{engine}", engine)
        run(chronicle("build", "--dir", str(chron)))  # warm: its caches made
        sites = (chron / "site", plain / "site")
        warm = median_pair(chronicle("build", "--dir", str(chron)), python(plain_build(plain)),
                           outputs=sites)
        def forget(chron: Path = chron) -> None:
            set_aside(chron / ".cache")
        cold = median_pair(chronicle("build", "--dir", str(chron)), python(plain_build(plain)),
                           prepare=forget, outputs=sites)
        work = tmp / f"night-{engine}-work"
        base = built_where_it_runs(with_engine(night_full, work, engine), tmp / f"night-{engine}")
        night = nightly_rounds(base, work, plain, LAST_NIGHT.format(start=last_day))
        lines += [
            row(f"{engine}: both editions, warm", warm, WARM)
            + f"  peak {warm.peak:.0f} MB",
            row(f"{engine}: both editions, cold", cold, COLD)
            + f"  peak {cold.peak:.0f} MB",
            row(f"{engine}: nightly, both editions", night, NIGHTLY)
            + f"  peak {night.peak:.0f} MB  (snapshot + build: {', '.join(night.parts)} s)",
        ]
        set_aside(chron)
    return lines
