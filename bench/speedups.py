"""python -m bench.speedups [DAYS] (`make bench` runs it after python -m bench): each
speed-up the executor can run beside a command's own work, timed on and off on the bench
row it is meant for.

A speed-up (chronicle/executor.py SPEEDUPS) stays only where it is worth at least 10% on
its row (issue #24): its row's median without it, divided by its median with it, must
be at least 1.10. Rows, each command in its own process, alternating on and off:
- beside (a translated edition built in a second process while English builds): the
  two-edition build of the demo, warm (its .cache/chronicle as a nightly restores it);
- engine-cache (Zensical's own cache kept signed in .cache/chronicle,
  site/engines/zensical/cache.py): the Zensical nightly (the same snapshot, then the build
  of both editions with Zensical, in the folder its cache was made in);
- svg-cache (the run-wide charts' SVGs kept signed in .cache/chronicle/svgs,
  site/outputs/statics.py): the two-edition build of the demo, warm (a nightly draws
  most charts again anyway: each shows one more day);
- seal-workers (the demo's nights draw their sealed charts in render workers, one per
  core, chronicle/render/svg.py seal_workers): the whole demo, nights and build, in a new
  folder each round;
Three more went with the sealed editions (issue #42), which took the engines' private names
they reached into (mkdocs's per-page Markdown conversion and Material's search entries kept
signed; Zensical's reference scan answered from a signed entry). Five more were measured
here and dropped, their figures in bench/RESULTS.md: the thread pages kept in
.cache/chronicle/threads, the static files copied by a second process while mkdocs
converts Markdown, a sealed day's charts drawn by two workers while its figures are
computed (before the nights sealed Chinese charts too: `seal-workers` earns its row now),
those workers started while a snapshot fetches its sources, and a build's run-wide charts
drawn in a worker while mkdocs converts Markdown (`background-svgs`).

    python -m bench.speedups [DAYS] [--only NAME ...] [--rounds N] [--wait-load L]

A run of every speed-up (no `--only`) writes its rows into bench/RESULTS.md
(bench/results.py). Both commands of a round share the machine's moment, so each round's
own ratio is shown, with the machine's load (1-minute average, /proc/loadavg) when the
round began: on a machine shared with other work the parallel speed-ups have no free core
to use, and the rounds say so. `--wait-load L` waits (up to 15 minutes) before each round
until that load is at most L.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from bench.__main__ import LAST_NIGHT, ROUNDS, checkout, partial_demo, python, run
from bench.engines import built_where_it_runs, with_engine
from bench.results import Report

THRESHOLD = 1.10  # off / on: a speed-up must save at least 10% of its row
MAX_WAIT = 15 * 60  # seconds `--wait-load` waits for a quiet machine before a round


def load() -> float:
    """Return the machine's 1-minute load average."""
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path(
        "/proc/loadavg").is_file() else os.getloadavg()[0]


def wait_for_load(limit: float | None) -> float:
    """Wait until the load is at most `limit` (or MAX_WAIT has passed); return it."""
    deadline = time.monotonic() + MAX_WAIT
    while limit is not None and load() > limit and time.monotonic() < deadline:
        time.sleep(5)
    return load()


def _one(kind: str, folder: str, without: str, extra: str = "") -> list[str]:
    """A command timing one `kind` of work with the speed-up `without` turned off."""
    return python(
        "import sys; from bench.speedups import one;"
        f"one({kind!r}, {folder!r}, {without!r}, {extra!r})")


def one(kind: str, folder: str, without: str, extra: str) -> None:
    """Run one build, snapshot or demo in this process with `without` turned off."""
    from datetime import datetime
    from pathlib import Path

    from chronicle.config import load_config
    from chronicle.executor import Executor

    off = [without] if without else []
    with Executor(without=off) as executor:
        if kind == "build":
            from chronicle.site.build import build_site

            build_site(load_config(Path(folder)), executor=executor)
        elif kind == "snapshot":
            from chronicle.snapshot.take import take_snapshot

            take_snapshot(load_config(Path(folder)), datetime.fromisoformat(extra))
        elif kind == "demo":
            from chronicle.demo import run_demo

            run_demo(Path(folder), int(extra), echo=lambda s: None, executor=executor)
        else:
            raise SystemExit(f"unknown kind {kind!r}")


@dataclass
class Measured:
    """One speed-up's row: seconds with it (on) and without it (off), round by round."""

    speedup: str
    row: str
    on: list[float] = field(default_factory=list)
    off: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # the load when each round began

    @property
    def gain(self) -> float:
        """Median off / median on: 1.25 means the row takes 25% longer without it."""
        return statistics.median(self.off) / statistics.median(self.on)

    def line(self) -> str:
        verdict = "keep" if self.gain >= THRESHOLD else "drop"
        rounds = " ".join(f"{b / a:.2f}" for a, b in zip(self.on, self.off, strict=True))
        loads = f"; load {' '.join(f'{x:.1f}' for x in self.loads)}" if self.loads else ""
        return (f"{self.speedup:<16} {self.row:<34} on {statistics.median(self.on):6.1f} s  "
                f"off {statistics.median(self.off):6.1f} s  off/on {self.gain:4.2f}  "
                f"{verdict}  (rounds: {rounds}{loads})")


def _alternate(measured: Measured, rounds: int, timed: Callable[[str], float],
               wait_load: float | None = None) -> Measured:
    """Time the row with the speed-up on, then off, `rounds` times (on first in odd
    rounds, off first in even ones, so neither always follows the other)."""
    for i in range(rounds):
        measured.loads.append(wait_for_load(wait_load))
        order = ("", measured.speedup) if i % 2 == 0 else (measured.speedup, "")
        for without in order:
            seconds = timed(without)
            (measured.off if without else measured.on).append(seconds)
    return measured


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.speedups")
    parser.add_argument("days", nargs="?", type=int, default=100)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--wait-load", type=float, default=None)
    parser.add_argument("--work", type=Path, default=None,
                        help="prepare the chronicles here and reuse them in a later run")
    args = parser.parse_args(argv)
    from chronicle.demo import DEMO_START
    from chronicle.executor import SPEEDUPS

    wanted = [s for s in SPEEDUPS if args.only is None or s in args.only]
    days, rounds = args.days, args.rounds
    report = Report("speedups", f"python -m bench.speedups {' '.join(argv)}".strip())
    report.say(f"chronicle speed-ups: {days}-day simulated demo, {os.cpu_count()} cores, "
               f"{rounds} rounds each on and off; kept where off/on >= {THRESHOLD:.2f}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = args.work or Path(tmp_name)
        demo = tmp / "demo"
        bases = ("znight-base", "mnight-base")
        if not all((tmp / base / "chronicle.yml").is_file() for base in bases):
            if args.work:  # a run that stopped half-way through preparing it
                shutil.rmtree(tmp, ignore_errors=True)
            run(python("from pathlib import Path; from chronicle.demo import run_demo;"
                       f"run_demo(Path({str(demo)!r}), {days}, echo=lambda s: None)"))
            partial_demo(tmp / "night-full", days)
            built_where_it_runs(with_engine(tmp / "night-full", tmp / "znight", "zensical"),
                                tmp / "znight-base")
            built_where_it_runs(with_engine(tmp / "night-full", tmp / "mnight", "mkdocs"),
                                tmp / "mnight-base")
        last = LAST_NIGHT.format(start=(DEMO_START + timedelta(days=days)).isoformat())

        def build(folder: Path) -> Callable[[str], float]:
            return lambda without: run(_one("build", str(folder), without))[0]

        def nightly(name: str) -> Callable[[str], float]:
            """A night on a copy of `<name>-base` in `<name>` (the folder it was built in)."""
            def timed(without: str) -> float:
                work = tmp / name
                checkout(tmp / f"{name}-base", work)
                snap = run(_one("snapshot", str(work), without, last))[0]
                return snap + run(_one("build", str(work), without))[0]
            return timed

        demos = iter(range(1_000_000))

        def whole_demo(without: str) -> float:
            """The demo, nights and build, in a new folder each time."""
            return run(_one("demo", str(tmp / f"sealing-{next(demos)}"), without, str(days)))[0]

        rows: dict[str, tuple[str, Callable[[str], float]]] = {
            "beside": ("two editions, warm build", build(demo)),
            "engine-cache": ("Zensical nightly, both editions", nightly("znight")),
            "svg-cache": ("two editions, warm build", build(demo)),
            "seal-workers": (f"{days}-day demo", whole_demo),
        }
        for speedup in wanted:
            label, timed = rows[speedup]
            report.say(
                _alternate(Measured(speedup, label), rounds, timed, args.wait_load).line())
    if args.only is None:  # a full run: its rows are the latest figures
        report.write()


if __name__ == "__main__":
    main(sys.argv[1:])
