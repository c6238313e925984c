"""Checks before a snapshot fetches anything (snapshot stage).

Whatever a snapshot writes stays in the chain forever, so it refuses, before any fetch:
a live chronicle still holding the scaffold's example values (it would archive nothing, or
someone else's project), an `--as-of` outside the run's plausible time, or one that is not
after the newest snapshot. (Control characters in failures.yml are refused where it is
read, like every string of the config: config/checks.py.)
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.errors import ChronicleError, ConfigError, StoreError
from chronicle.models import iso
from chronicle.store import Store, snapshot_id

# What `chronicle init` writes for a run it knows nothing about (chronicle/init.py uses
# these): a live snapshot with any of them left in place is refused.
EXAMPLE_ENTITY = "my-entity"
EXAMPLE_PROJECT = "my-project"
EXAMPLE_RUN = "my-run-id"
EXAMPLE_REPO = "my-org/my-repo"
# A nightly job that runs a little late must not be mistaken for a clock in the future.
FUTURE_SLACK = timedelta(minutes=5)
# How far before run.start (or after a simulated run's end) a snapshot may be taken: a
# chronicle set up a few weeks before launch snapshots its threads; 1970 is a typo.
OUTSIDE_RUN = timedelta(days=31)


def check_scaffold_values(config: RunConfig) -> None:
    """Refuse a live chronicle whose chronicle.yml still names the scaffold's examples."""
    if config.source != "live":
        return
    wb, gh = config.wandb, config.github
    found = [
        (key, value) for key, value, example in (
            ("wandb.entity", wb.entity, EXAMPLE_ENTITY),
            ("wandb.project", wb.project, EXAMPLE_PROJECT),
            ("wandb.runs", EXAMPLE_RUN, EXAMPLE_RUN if EXAMPLE_RUN in wb.runs else None),
            ("github.repo", gh.repo, EXAMPLE_REPO),
        ) if value == example
    ]
    problems = [f"{key}: still the scaffold's example {value!r}; set your run's value "
                "before the first snapshot (nothing was fetched or written)"
                for key, value in found]
    if config.run.example:
        run = config.run
        problems.append(
            f"run.example: true: the run: values are still the scaffold's examples "
            f"({run.name!r}, start {run.start.isoformat()}, {run.planned_days} days, "
            f"{run.token_budget:g} tokens, {run.accelerators.count} "
            f"{run.accelerators.kind}); set your run's name, start, planned_days, "
            "token_budget, accelerators and prices, then delete the `example: true` line "
            "(nothing was fetched or written)")
    if problems:
        raise ConfigError(str(config.root / CONFIG_NAME), problems)


def check_as_of(config: RunConfig, store: Store, as_of: datetime, now: datetime) -> None:
    """Refuse an --as-of that is naive, implausible for the run, or not after the newest
    snapshot."""
    if as_of.tzinfo is None:
        raise ValueError("as_of must be an aware UTC datetime")
    start = datetime.combine(config.run.start, time(0, tzinfo=UTC))
    if as_of < start - OUTSIDE_RUN:
        raise ChronicleError(
            f"--as-of {iso(as_of)} is more than {OUTSIDE_RUN.days} days before run.start "
            f"({config.run.start}): nothing of the run exists then, and a snapshot stays in the "
            "chain forever; pass a time during the run")
    if config.source == "live" and as_of > now + FUTURE_SLACK:
        raise ChronicleError(
            f"--as-of {iso(as_of)} is in the future (now {iso(now)}); "
            "pass a time that has passed, or omit --as-of")
    end = start + timedelta(days=config.simulated.days) + OUTSIDE_RUN
    if config.source == "simulated" and as_of > end:
        raise ChronicleError(
            f"--as-of {iso(as_of)} is more than {OUTSIDE_RUN.days} days after the simulated "
            f"run ends ({config.simulated.days} days from {config.run.start}); pass an "
            "earlier time, or raise simulated.days")
    latest = store.latest()
    if latest is not None and as_of <= latest.taken_at:
        raise StoreError(
            f"--as-of {iso(as_of)} is not after the newest snapshot {latest.id} "
            f"({iso(latest.taken_at)}); snapshots are append-only: pass a later time")
    if (store.data / snapshot_id(as_of)).exists():
        raise StoreError(
            f"{store.data / snapshot_id(as_of)}: snapshot already exists; "
            "snapshots are never rewritten")
