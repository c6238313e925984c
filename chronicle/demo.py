"""`chronicle demo`: a whole chronicle from a simulated run, offline, in one command.

It scaffolds a folder like `chronicle init`, then replays the nightly job: one real
`take_snapshot` per simulated night (sealing the day before), then one build.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from pathlib import Path

from chronicle.config import load_config
from chronicle.errors import ChronicleError
from chronicle.init import InitOptions, init_chronicle
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


def run_demo(
    out: Path, days: int, echo: Callable[[str], None] = print, build: bool = True
) -> DemoReport:
    """Scaffold `out` (if new), take one snapshot per night for `days` days, build."""
    from chronicle.build import build_site
    from chronicle.pipeline import fetch_simulated_source, take_snapshot
    from chronicle.sources.simulated import SimulatedRun

    seconds: dict[str, float] = {}
    if not (out / "chronicle.yml").exists():
        init_chronicle(
            out,
            InitOptions(
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
            ),
        )
    config = load_config(out)
    if config.source != "simulated":
        raise ChronicleError(
            f"{out / 'chronicle.yml'}: source is {config.source!r}; the demo "
            "only runs on a simulated chronicle (pick another --out)"
        )
    started = time.perf_counter()
    sim = SimulatedRun(config)
    seconds["simulate"] = time.perf_counter() - started

    store = Store(config.docs_dir)
    latest = store.latest()
    started = time.perf_counter()
    taken = 0
    for night in range(1, config.simulated.days + 1):
        as_of = datetime.combine(config.run.start + timedelta(days=night), NIGHTLY)
        if latest is not None and as_of <= latest.taken_at:
            continue  # already taken by an earlier demo run: the store is append-only
        result = take_snapshot(
            config,
            as_of,
            store=store,
            fetcher=lambda c, s, t: fetch_simulated_source(c, s, t, sim=sim),
        )
        taken += 1
        if night % 10 == 0 or night == config.simulated.days:
            echo(f"night {night:3d}: snapshot {result.snapshot}, sealed {', '.join(result.sealed)}")
    seconds["snapshots"] = time.perf_counter() - started
    if build:
        started = time.perf_counter()
        build_site(config)
        seconds["build"] = time.perf_counter() - started
    return DemoReport(
        snapshots=len(store.snapshots()), sealed=len(store.sealed_days()), seconds=seconds
    )
