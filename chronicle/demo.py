"""`chronicle demo`: a whole chronicle from a simulated run, offline, in one command.

It scaffolds a folder like `chronicle init`, then replays the nightly job: one real
`take_snapshot` per simulated night (sealing the day before), then one build.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from multiprocessing.connection import Connection
from pathlib import Path

from chronicle.config import load_config
from chronicle.errors import BuildProcessError, ChronicleError
from chronicle.executor import ChildGone, Executor
from chronicle.init import InitOptions, init_chronicle
from chronicle.render.svg import require_han_font
from chronicle.store import Store

DEMO_START = date(2026, 8, 20)
# The nightly job runs at 03:17 UTC (off the top of the hour, like the workflow).
NIGHTLY = dtime(3, 17, tzinfo=UTC)


@dataclass(frozen=True)
class DemoReport:
    """What a demo run produced, with wall time per stage (seconds)."""

    snapshots: int
    sealed: int
    seconds: dict[str, float]


def demo_options(days: int) -> InitOptions:
    """Return the scaffold of the demo chronicle: a simulated run of `days` days."""
    return InitOptions(
        source="simulated",
        name="Simulated 535B-A23B MoE (demo)",
        start=DEMO_START,
        planned_days=days,
        entity="demo",
        project="simulated_moe",
        runs=("sim-hero",),
        repo="demo-org/simulated-run",
        issues=(1, 2),
        labels=("hero-run",),
        url="https://example.org/chronicle-demo/",
        author="chronicle demo",
        pulls="pulls: {paths: ['experiments/grug/moe_hero_ep/*'], labels: [hero-run]}",
    )


def run_demo(
    out: Path, days: int, echo: Callable[[str], None] = print, build: bool = True,
    nights: int | None = None, executor: Executor | None = None,
) -> DemoReport:
    """Scaffold `out` (if new), take one snapshot per night for `days` days, build.

    `nights` stops after that many nights (a later call continues: the store is
    append-only), so the bench can time one nightly run on a long chronicle. `executor`:
    the command's, for every night and the build (without one, the demo has its own).

    The nights run in a child process of the executor, the build in this one: what the
    nights hold (the simulated run, the store's tables as they grew, vl-convert's runtime
    that drew the sealed charts) goes back to the system before the build starts, instead
    of staying beside it. The child's progress lines and its error come back here.
    """
    if executor is None:
        with Executor() as own:
            return run_demo(out, days, echo, build, nights, own)
    from chronicle.site.build import build_site

    if not (out / "chronicle.yml").exists():
        init_chronicle(out, demo_options(days))
    config = load_config(out)
    require_han_font(config.site.languages, "the demo")
    if config.source != "simulated":
        raise ChronicleError(
            f"{out / 'chronicle.yml'}: source is {config.source!r}; the demo "
            "only runs on a simulated chronicle (pick another --out)"
        )
    last = min(config.simulated.days, nights or config.simulated.days)
    echo(f"simulating the run (seed {config.simulated.seed}), then taking one snapshot a "
         f"night up to night {last}, each sealing the day before")
    child = executor.start(_nights_child, out, last, tuple(executor.without), executor.cores,
                           name="the demo's nights")
    seconds: dict[str, float] = {}
    while True:
        try:
            message = child.recv()
        except ChildGone as err:
            raise BuildProcessError(
                f"the demo's nights ended before they finished ({child.describe_end()}); "
                "the nights snapshotted so far are kept (each one whole): run the demo again "
                "to continue") from err
        if message[0] == "line":
            echo(message[1])
        elif message[0] == "done":
            seconds.update(message[1])
            break
        elif message[0] == "error":
            error = ChronicleError(message[1])
            error.exit_code = message[2]
            raise error
        elif message[0] == "raise":
            raise message[1]
        else:
            raise RuntimeError(f"the demo's nights failed:\n{message[1]}")
    child.join()
    if build:
        started = time.perf_counter()
        echo(f"building the site ({', '.join(config.site.languages)})")
        build_site(config, executor=executor, say=echo)
        seconds["build"] = time.perf_counter() - started
    store = Store(config.docs_dir)
    return DemoReport(
        snapshots=len(store.snapshots()), sealed=len(store.sealed_days()), seconds=seconds
    )


def _nights_child(conn: Connection, out: Path, last: int, without: tuple[str, ...] = (),
                  cores: int | None = None) -> None:
    """Take the demo's nights 1 to `last` in this child process (`run_demo`); report each
    progress line, then the seconds taken or the error, over `conn`.

    The nights have an executor of their own, like the command's (`without`, `cores`):
    its render workers draw the sealed charts, and it ends them with the nights."""
    try:
        with Executor(without=without, cores=cores) as executor:
            seconds = _take_nights(out, last, lambda line: conn.send(("line", line)),
                                   executor)
        conn.send(("done", seconds))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the parent is gone or stopping
    except ChronicleError as err:  # said by the parent, with its exit code
        conn.send(("error", str(err), err.exit_code))
    except OSError as err:  # a disk that refused a write: the parent's CLI names it
        conn.send(("raise", OSError(err.errno, err.strerror, err.filename, None,
                                    err.filename2)))
    except Exception:
        conn.send(("crash", traceback.format_exc()))


def _take_nights(out: Path, last: int, echo: Callable[[str], None],
                 executor: Executor | None = None) -> dict[str, float]:
    """Take one snapshot per night up to night `last` (skipping those an earlier demo run
    took), their charts drawn by `executor`'s render workers (none: in this process);
    return the seconds of the simulation and of the nights."""
    from chronicle.snapshot.fetch import fetch_simulated_source
    from chronicle.snapshot.take import take_snapshot
    from chronicle.sources.simulated import SimulatedRun

    config = load_config(out)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    sim = SimulatedRun(config)
    seconds["simulate"] = time.perf_counter() - started
    store = Store(config.docs_dir)
    latest = store.latest()
    started = time.perf_counter()
    for night in range(1, last + 1):
        as_of = datetime.combine(config.run.start + timedelta(days=night), NIGHTLY)
        if latest is not None and as_of <= latest.taken_at:
            continue  # already taken by an earlier demo run: the store is append-only
        result = take_snapshot(
            config,
            as_of,
            store=store,
            fetcher=lambda c, s, t: fetch_simulated_source(c, s, t, sim=sim),
            executor=executor,
        )
        # About one line every ten seconds on two cores.
        if night == 1 or night % 10 == 0 or night == config.simulated.days:
            echo(f"night {night:3d}: snapshot {result.snapshot}, sealed {', '.join(result.sealed)}")
    seconds["snapshots"] = time.perf_counter() - started
    return seconds
