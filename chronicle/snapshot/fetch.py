"""Fetching every configured source for one snapshot (snapshot stage; network via sources/).

A source that fails is recorded in the returned statuses, never raised: the snapshot is
still written for the sources that worked and the stored data stays as it was. A failure
message never carries the credentials of a URL (chronicle/clean.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from chronicle.clean import scrub_urls
from chronicle.config import RunConfig
from chronicle.errors import SourceError
from chronicle.models import Fetched, SourceStatus
from chronicle.store import Store

Fetcher = Callable[[RunConfig, Store, datetime], Fetched]


def fetch_live(config: RunConfig, store: Store, as_of: datetime) -> Fetched:
    """Fetch W&B and GitHub; a failing source is recorded, never fatal."""
    from chronicle.sources.github import fetch_github
    from chronicle.sources.wandb import fetch_wandb

    statuses: list[SourceStatus] = []
    metrics = runs = threads = pulls = None
    try:
        got = fetch_wandb(config, store.last_steps(), as_of)
        # A child's fork step is only seen the night it first logs: carry it forward.
        known = {r.id: r.fork_step for r in store.load_runs()}
        metrics = got.rows
        runs = [
            replace(r, fork_step=known.get(r.id)) if r.fork_step is None else r for r in got.runs
        ]
        # Bad rows were left out: the source answered (its good rows are stored, the days
        # seal), but the snapshot is degraded and names them (documentation/pages/commands.md).
        statuses.append(SourceStatus("wandb", True, error=got.problem, detail=got.detail))
    except SourceError as err:
        statuses.append(SourceStatus("wandb", False, error=scrub_urls(str(err))))
    try:
        gh = fetch_github(config, since_last_ok(store, "github"), as_of,
                          pulls_since=pulls_listed(store))
        threads, pulls = gh.threads, gh.pulls
        statuses.append(SourceStatus("github", True, detail=gh.detail))
    except SourceError as err:
        statuses.append(SourceStatus("github", False, error=scrub_urls(str(err))))
    return Fetched(metrics, runs, threads, [], tuple(statuses), pulls=pulls)


def since_last_ok(store: Store, source: str) -> datetime | None:
    """Return when `source` last succeeded (threads are fetched as updated since then)."""
    for snap in reversed(store.snapshots()):
        status = snap.sources.get(source)
        if status is not None and status.ok:
            return snap.taken_at
    return None


def pulls_listed(store: Store) -> datetime | None:
    """Return when merged PRs were last listed (the newest snapshot with a pulls.json);
    None: never, so the listing goes back to the run's start (`github.pulls` may be new)."""
    for snap in reversed(store.snapshots()):
        if "pulls.json" in snap.files:
            return snap.taken_at
    return None


def fetch_simulated_source(
    config: RunConfig, store: Store, as_of: datetime, sim: Any = None
) -> Fetched:
    """Fetch from the simulated run (offline demo) through the real parsers."""
    from chronicle.sources.simulated import fetch_simulated

    return fetch_simulated(
        config, store.last_steps(), since_last_ok(store, "github"), as_of, sim=sim,
        pulls_since=pulls_listed(store),
    )
