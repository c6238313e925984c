"""`make bench` (python -m bench [DAYS]): chronicle's cost as ratios measured in one run.

What a full run prints is also written into bench/RESULTS.md (bench/results.py), the one
home of the latest figures; the journal there says what each change did to them.

Absolute seconds drift between machines and runs; ratios measured side by side do not.
Every timed step runs in its own process (its peak RSS is its own). `python -m bench
memory` prints the memory rows alone. Rows:
- build: `chronicle build` of the DAYS-day demo vs a plain mkdocs-material build of the
  same Markdown pages (bench/plain.py), alternating, median of ROUNDS each (the row's
  ratio), and each round's own ratio after it: how far the machine drifted;
- nightly: one `chronicle snapshot` (sealing the last day) + `chronicle build` on the
  same chronicle, vs the same plain build;
- demo: the whole `chronicle demo --days DAYS` (the median of ROUNDS runs, each run's
  seconds after it), and a 2x longer demo, to show how cost grows; plus page weights and
  where the build spends its time (bench/profile_build.py).
- editions: the demo builds English and Chinese (`site.languages: [en, zh]`); the same
  chronicle set to English only is built alternately with it, so the cost of the second
  language is a ratio (issue #13: two editions <= 1.6x one), and page weights are given
  for each edition. Twice: warm, with the `.cache/chronicle` the previous build left
  (what a nightly restores: only the new day's translated page is rendered), and cold,
  with both chronicles' caches deleted before each round (a first build, or a nightly
  whose cache was evicted).
- recompute: `chronicle verify --recompute` on the DAYS-day demo (every sealed day
  re-derived from the stored snapshots and compared), the median of ROUNDS runs, against
  plain `chronicle verify` (the hash chain and every file's sha256) run alternately.
- engines (issue #25, bench/engines.py): both editions built by mkdocs and by Zensical,
  warm and cold, and a nightly with each, against a plain mkdocs-material build of the
  English project `chronicle render` writes; `python -m bench engines` runs them alone.
- memory (issue #24): one night of 10^6 W&B rows (bench/night.py: `chronicle snapshot` of
  a live chronicle, the real wandb client against the fake W&B server) in seconds and peak
  MB, and the peak of `chronicle demo --days 365`; both as the processes together (the
  command and every process it starts, RSS summed, sampled from /proc every 0.1 s).
- pages (issue #42, tests/support/pageload.py): home, the newest day page and About of the
  demo loaded in Chromium on a phone (390 px, CPU 4x slower) over slow 4G (400 kbit/s, 400
  ms) and Lighthouse's slow 4G (1.6 Mbit/s, 150 ms), the median of ROUNDS loads: largest
  contentful paint (LCP), the bytes before it, the bytes in all and the main thread's
  blocking time; `python -m bench pages [DAYS]` builds a demo and prints them alone (their
  last figures: its block of bench/RESULTS.md).
Rows say whether `.cache/chronicle` was there (warm) or not (cold): the build rows run
on the English copy after its first build (warm metrics copy); the nightly row starts
from a chronicle built once, as a nightly with its cache restored does.
Targets (issue #42): home and day pages' LCP and bytes before it <= 1.2x About's; both
editions with either engine warm <= 1.0x plain, cold <= 2.5x, nightly <= 1.3x
(bench/engines.py); the DAYS=100 demo, both editions, <= 60 s (was #15's 45 s, English
only).
Targets (issue #15): build <= 1.3x plain, nightly <= 1.5x plain,
2x demo <= 2.0x, peak memory < 1 GB at 365 days (`make bench DAYS=365`); issue #24: a night
of 10^6 rows < 1.5 GB, the 365-day demo < 1 GB (processes together).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROUNDS = 3
DEMO_TARGET = 60.0  # seconds: the 100-day demo, both editions (issue #42)
LAST_NIGHT = "{start}T03:17:00Z"


def run(args: Sequence[str], cwd: Path | None = None) -> tuple[float, float]:
    """Run a command; return (wall seconds, peak RSS MB of that process tree's largest)."""
    # Flush what earlier steps wrote (a copied store, a 70 MB site): on a small runner its
    # writeback otherwise lands inside the next timed step (the same build measured 7.4 to
    # 9.8 s back to back without this).
    os.sync()
    started = time.perf_counter()
    child = subprocess.Popen(list(args), cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        err = child.stderr.read().decode() if child.stderr else ""
        raise SystemExit(f"bench: {' '.join(args)} failed:\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024.0


ASIDE = ".aside"  # where `set_aside` moves old output, beside it


def set_aside(path: Path) -> None:
    """Move `path` (if there) out of the way, into `.aside/` beside it, which goes with the
    bench's temporary folder at its end: a timed step starts without it, as on a fresh
    checkout, and nothing is deleted just before a timed step.

    On a file system without a journal (ext4 as this machine's VM mounts it), creating a
    file skips, one by one, every inode freed in the last 60 s (300 s if not yet written
    back; the kernel's `recently_deleted`): deleting a chronicle's 8,600 files before a
    timed nightly cost its Zensical builds ~3 s of CPU making the site's files (perf), and
    mkdocs emptying its own `site/` made the plain build pay the same for 1,500 files.
    """
    if not path.exists():
        return
    aside = path.parent / ASIDE
    aside.mkdir(exist_ok=True)
    path.rename(aside / f"{path.name}-{time.time_ns()}")


def checkout(base: Path, work: Path) -> None:
    """Copy the chronicle `base` to `work` as a nightly's checkout has it: without what was
    set aside in it (a base's old site, ~3,000 files, is no part of a checkout), the
    previous `work` set aside first."""
    set_aside(work)
    shutil.copytree(base, work, symlinks=True, ignore=shutil.ignore_patterns(ASIDE))


def chronicle(*args: str) -> list[str]:
    return [sys.executable, "-m", "chronicle.cli", *args]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def demo(out: Path, days: int) -> tuple[float, float]:
    """Time the whole `chronicle demo` (scaffold, nightly snapshots, build)."""
    return run(chronicle("demo", "--days", str(days), "--out", str(out)))


def partial_demo(out: Path, days: int) -> None:
    """Make a `days`-day demo chronicle with every night but the last taken."""
    code = ("from pathlib import Path; from chronicle.demo import run_demo;"
            f"run_demo(Path({str(out)!r}), {days}, echo=lambda s: None, build=False,"
            f" nights={days - 1})")
    run(python(code))


@dataclass
class Rounds:
    """The seconds of two commands timed alternately, round by round."""

    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    peak: float = 0.0  # MB, of a
    parts: list[str] = field(default_factory=list)  # what each round of a was made of

    @property
    def medians(self) -> tuple[float, float]:
        return statistics.median(self.a), statistics.median(self.b)

    def each(self) -> str:
        """Each round's own ratio: neighbours share the machine's moment, so their spread
        shows how much of a row's ratio is the machine drifting."""
        return " ".join(f"{x / y:.2f}" for x, y in zip(self.a, self.b, strict=True))


def median_pair(a: list[str], b: list[str], rounds: int = ROUNDS,
                prepare: Callable[[], None] | None = None, cwd: Path | None = None,
                outputs: tuple[Path | None, Path | None] = (None, None)) -> Rounds:
    """Alternate commands a and b, `rounds` times each; each starts with its `outputs`
    folder (the site it builds) set aside (`set_aside`)."""
    out = Rounds()
    for _ in range(rounds):
        if prepare is not None:
            prepare()
        if outputs[0] is not None:
            set_aside(outputs[0])
        seconds, mb = run(a, cwd)
        out.a.append(seconds)
        out.peak = max(out.peak, mb)
        if outputs[1] is not None:
            set_aside(outputs[1])
        out.b.append(run(b, cwd)[0])
    return out


def nightly_rounds(base: Path, work: Path, plain: Path, start_last: str,
                   rounds: int = ROUNDS) -> Rounds:
    """Snapshot + build on a fresh copy of `base`, alternating with the plain build; each
    round's two parts ("snapshot + build" seconds) show which one moved."""
    out = Rounds()
    for _ in range(rounds):
        checkout(base, work)
        snap = run(chronicle("snapshot", "--dir", str(work), "--as-of", start_last))[0]
        build, mb = run(chronicle("build", "--dir", str(work)))
        out.a.append(snap + build)
        out.peak = max(out.peak, mb)
        out.parts.append(f"{snap:.1f} + {build:.1f}")
        set_aside(plain / "site")
        out.b.append(run(python(plain_build(plain)))[0])
    return out


def plain_build(project: Path) -> str:
    # On the MkDocs 1.x chronicle's builds run on (ProperDocs:
    # chronicle/site/engines/mkdocs/core.py).
    return ("import os; from chronicle.site.engines.mkdocs.core import load_core; load_core();"
            "from mkdocs.commands.build import build;"
            "from mkdocs.config import load_config;"
            f"os.chdir({str(project)!r}); c = load_config('mkdocs.yml');"
            "c.plugins.on_startup(command='build', dirty=False); build(c)")


def weights(site: Path, edition: str = "") -> list[str]:
    """Return the page weights of one edition (`edition`: '' for English, 'zh')."""
    root = site / edition if edition else site
    label = f"[{edition or 'en'}] "
    sizes = sorted(p.stat().st_size for p in (root / "days").glob("*.html"))
    index = root / "search" / "search_index.json"
    out = []
    if sizes:
        out.append(f"{label}day page HTML: median {sizes[len(sizes) // 2] / 1024:.1f} KB, "
                   f"max {sizes[-1] / 1024:.1f} KB (target < 80 KB, ratio "
                   f"{sizes[-1] / 1024 / 80:.2f})")
    if index.exists():
        mb = index.stat().st_size / 1e6
        out.append(f"{label}search index: {mb:.2f} MB (target < 5 MB, ratio {mb / 5:.2f})")
    home = root / "index.html"
    if home.exists():
        out.append(f"{label}home page HTML: {home.stat().st_size / 1024:.1f} KB")
    return out


def english_only(chronicle_dir: Path, out: Path) -> Path:
    """Copy a chronicle (not its site) with `site.languages: [en]`: today's one edition."""
    shutil.copytree(chronicle_dir, out, ignore=shutil.ignore_patterns("site", ".cache"))
    config = out / "chronicle.yml"
    text = re.sub(r"(?m)^  languages: .*$", "  languages: [en]", config.read_text("utf-8"))
    config.write_text(text, encoding="utf-8")
    return out


def ratio(label: str, a: float, b: float, target: float, unit: str = "") -> str:
    verdict = "met" if a / b <= target else "MISSED"
    return (f"{label:<34}{a:8.1f} s vs {b:6.1f} s{unit}  ratio {a / b:4.2f}  "
            f"target <= {target:.1f}x  {verdict}")


def row(label: str, rounds: Rounds, target: float) -> str:
    """A ratio row of medians, with each round's own ratio."""
    return ratio(label, *rounds.medians, target) + f"  (rounds: {rounds.each()})"


def memory_rows(tmp: Path) -> list[str]:
    """Issue #24's rows: a night of NIGHT_ROWS W&B rows, and the 365-day demo, each with
    its processes' peak together (and its largest process's)."""
    from bench.night import ROWS, measure, night

    heavy = night(ROWS)
    year = measure(chronicle("demo", "--days", "365", "--out", str(tmp / "year")))
    set_aside(tmp / "year")
    out = []
    for label, peak, target in ((f"night of {ROWS:,} W&B rows", heavy, 1536),
                                ("demo, 365 days", year, 1024)):
        verdict = "met" if peak.together_mb < target else "MISSED"
        out.append(f"{label:<34}{peak.seconds:8.1f} s  peak {peak.together_mb:5.0f} MB "
                   f"together (largest process {peak.largest_mb:.0f} MB)  target < {target} MB "
                   f"({verdict})  CPU {peak.cpu:.0f} s")
    return out


def page_rows(site: Path) -> list[str]:
    """Issue #42's rows: the demo's home, newest day page and About loaded on a phone under
    each profile (tests/support/pageload.py), as ratios of About's."""
    from tests.support.browser import CHROMIUM
    from tests.support.pageload import LIGHTHOUSE_SLOW_4G, PHONE_PROFILE, page_loads, rows

    if not CHROMIUM.exists():
        return [f"pages on a phone: skipped, no Chromium at {CHROMIUM}"]
    newest = max(p.name for p in (site / "days").glob("*.html")
                 if re.fullmatch(r"\d{4}-\d{2}-\d{2}\.html", p.name))
    paths = ["index.html", f"days/{newest}", "about.html"]
    out = []
    for profile in (PHONE_PROFILE, LIGHTHOUSE_SLOW_4G):
        out.append(f"pages on a phone, {profile.name}, CPU {profile.cpu_slowdown:g}x, "
                   f"{ROUNDS} loads each:")
        summaries = page_loads({"demo": site}, paths, ROUNDS, profile)["demo"]
        out += ["  " + line for line in rows(summaries, "about.html")]
    return out


def main(days: int) -> None:
    from datetime import timedelta

    from bench.engines import engine_rows
    from bench.plain import write_plain_project
    from bench.results import Report
    from chronicle.demo import DEMO_START

    report = Report("bench", f"python -m bench {days}")
    say = report.say
    say(f"chronicle bench: {days}-day simulated demo, {os.cpu_count()} cores, "
        f"{ROUNDS} rounds per ratio")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # The demo and its 2x: how cost grows with the run. The demo's row is in seconds,
        # not a ratio, so it is the median of ROUNDS runs (one run swings with the machine).
        demos = [demo(tmp / "demo", days)]
        for i in range(1, ROUNDS):
            demos.append(demo(tmp / f"demo-{i}", days))
            set_aside(tmp / f"demo-{i}")
        demo_s = statistics.median(s for s, _ in demos)
        demo_mb = max(mb for _, mb in demos)
        long_s, long_mb = demo(tmp / "long", 2 * days)
        # Rows of issue #15 measure the English edition (today's one build): the same
        # chronicle with `site.languages: [en]`.
        # Each is timed after one untimed build, as a nightly runs: its .cache/chronicle
        # restored (a first build, with nothing kept, is the "cold" row below).
        en_only = english_only(tmp / "demo", tmp / "demo-en")
        plain = write_plain_project(en_only, tmp / "plain")
        run(chronicle("build", "--dir", str(en_only)))
        build = median_pair(chronicle("build", "--dir", str(en_only)),
                            python(plain_build(plain)), outputs=(en_only / "site", plain / "site"))
        long_en = english_only(tmp / "long", tmp / "long-en")
        long_plain = write_plain_project(long_en, tmp / "long-plain")
        run(chronicle("build", "--dir", str(long_en)))
        long_build = median_pair(chronicle("build", "--dir", str(long_en)),
                                 python(plain_build(long_plain)),
                                 outputs=(long_en / "site", long_plain / "site"))
        # One nightly run on the days-day chronicle: seal the last day, then build.
        partial_demo(tmp / "night-full", days)
        english_only(tmp / "night-full", tmp / "night-base")
        run(chronicle("build", "--dir", str(tmp / "night-base")))  # its .cache, as restored
        # ...but not its site: a nightly checkout has none (site/ is never committed), and
        # emptying 3,000 files of an earlier site would be timed as the build's own work.
        set_aside(tmp / "night-base" / "site")
        last = (DEMO_START + timedelta(days=days)).isoformat()
        night = nightly_rounds(
            tmp / "night-base", tmp / "night", plain, LAST_NIGHT.format(start=last))
        # The second language: both editions against English only, same store; warm (the
        # demo's own build left its cache), then cold.
        both = median_pair(chronicle("build", "--dir", str(tmp / "demo")),
                           chronicle("build", "--dir", str(en_only)),
                           outputs=(tmp / "demo" / "site", en_only / "site"))
        def forget() -> None:  # both chronicles' caches
            for c in (tmp / "demo", en_only):
                set_aside(c / ".cache")
        cold = median_pair(chronicle("build", "--dir", str(tmp / "demo")),
                           chronicle("build", "--dir", str(en_only)), prepare=forget,
                           outputs=(tmp / "demo" / "site", en_only / "site"))
        # verify --recompute against plain verify, on the demo (read-only: no copy needed).
        recompute = median_pair(chronicle("verify", "--dir", str(tmp / "demo"), "--recompute"),
                                chronicle("verify", "--dir", str(tmp / "demo")))
        say(row("build (en only) vs plain mkdocs", build, 1.3))
        say(row("two editions vs en only, warm", both, 1.6) + f"  peak {both.peak:.0f} MB")
        say(row("two editions vs en only, cold", cold, 1.6))
        say(row(f"build vs plain at {2 * days} days", long_build, 1.3))
        say(row("nightly vs plain, warm", night, 1.5)
            + f"  (snapshot + build: {', '.join(night.parts)} s)")
        say(f"{f'demo, {days} days':<34}{demo_s:8.1f} s  peak {demo_mb:5.0f} MB  "
            f"target <= {DEMO_TARGET:.0f} s ({'met' if demo_s <= DEMO_TARGET else 'MISSED'})  "
            "(runs: "
            f"{' '.join(f'{s:.1f}' for s, _ in demos)})")
        say(ratio(f"demo {2 * days} days vs {days} days", long_s, demo_s, 2.0)
            + f"  peak {long_mb:.0f} MB")
        say(f"{'peak memory (build)':<34}{build.peak:8.0f} MB  target < 1024 MB at 365 days")
        rc_s, plain_s = recompute.medians
        say(f"{f'verify --recompute, {days} days':<34}{rc_s:8.1f} s vs {plain_s:6.1f} s plain "
            f"verify  ratio {rc_s / plain_s:4.1f}  peak {recompute.peak:5.0f} MB  (rounds: "
            f"{' '.join(f'{a:.1f}' for a in recompute.a)})")
        for line in engine_rows(tmp / "demo", tmp / "night-full", tmp, last):
            say(line)
        for line in memory_rows(tmp):
            say(line)
        for edition in ("", "zh"):
            for line in weights(tmp / "demo" / "site", edition):
                say(line)
        for line in page_rows(tmp / "demo" / "site"):
            say(line)
        say("where the build spends its time (one profiled build, both editions in one "
            "process, cumulative):")
        profile = subprocess.run(
            [sys.executable, "-m", "bench.profile_build", str(tmp / "demo")],
            check=True, stdout=subprocess.PIPE, text=True).stdout
        for line in profile.splitlines():
            say(line)
    report.write()


def pages_only(days: int) -> None:
    """`python -m bench pages [DAYS]`: issue #42's rows alone, on a fresh demo."""
    from bench.results import Report

    report = Report("pages", f"python -m bench pages {days}")
    report.say(f"chronicle bench, pages: {days}-day simulated demo, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as scratch:
        demo(Path(scratch) / "demo", days)
        for line in page_rows(Path(scratch) / "demo" / "site"):
            report.say(line)
    report.write()


def engines_only(days: int) -> None:
    """`python -m bench engines [DAYS]`: the engines' rows alone (bench/engines.py)."""
    from datetime import timedelta

    from bench.engines import engine_rows
    from bench.results import Report
    from chronicle.demo import DEMO_START

    report = Report("engines", f"python -m bench engines {days}")
    report.say(f"chronicle bench, engines: {days}-day simulated demo, {os.cpu_count()} cores, "
               f"{ROUNDS} rounds per ratio")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        demo(tmp / "demo", days)
        partial_demo(tmp / "night-full", days)
        last = (DEMO_START + timedelta(days=days)).isoformat()
        for line in engine_rows(tmp / "demo", tmp / "night-full", tmp, last):
            report.say(line)
    report.write()


if __name__ == "__main__":
    if sys.argv[1:] == ["memory"]:  # `python -m bench memory`: issue #24's rows alone
        with tempfile.TemporaryDirectory() as scratch:
            print("\n".join(memory_rows(Path(scratch))))
    elif sys.argv[1:2] == ["engines"]:
        engines_only(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    elif sys.argv[1:2] == ["pages"]:
        pages_only(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
