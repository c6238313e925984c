"""Failure records written by hand (failures.yml) or filed as GitHub issues.

failures.yml is validated like chronicle.yml: every problem at once, each naming the
record's index and field and saying what is expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from chronicle.config import CONFIG_NAME, DEFAULT_FAILURES_FILE, RunConfig, read_yaml
from chronicle.config.checks import choice, links, number, text, utc_time
from chronicle.config.fields import Invalid, Option, Problem, Schema, check_mapping, lines
from chronicle.errors import ConfigError
from chronicle.models import FAILURE_KINDS, FailureRecord, Thread

# One failures.yml record: each key declared once, checked like chronicle.yml's keys.
RECORD: Schema = {
    "id": Option(text("a non-empty string, e.g. rack-7-power"), "unique and stable"),
    "start": Option(utc_time, "when it started (UTC)"),
    "end": Option(utc_time, "when it ended (UTC; absent while ongoing)", default=None),
    "what": Option(text("a sentence saying what broke"), "what broke"),
    "kind": Option(choice(FAILURE_KINDS), "the kind of failure", default="manual"),
    "accelerator_hours_lost": Option(number(0), "default: accelerators x duration",
                                     default=None),
    "evidence": Option(links, "at least one URL"),
}


def load_failures_file(config: RunConfig) -> list[FailureRecord]:
    """Return the records in the failures file; raise ConfigError listing problems.

    The default failures.yml is optional; a file named by `failures.file` must exist.
    """
    path = config.root / config.failures.path
    if not path.is_file():
        if config.failures.file is None:
            return []  # the default file is optional
        raise ConfigError(str(config.root / CONFIG_NAME), [
            f"failures.file: {config.failures.file} does not exist in {config.root}; create "
            "it (a YAML list, [] while there are no records) or remove the key (then "
            f"{DEFAULT_FAILURES_FILE} is read when it exists)"
        ])
    return parse_failures(read_yaml(path), config, str(path))


def parse_failures(data: Any, config: RunConfig,
                   origin: str = "failures.yml") -> list[FailureRecord]:
    """Validate a loaded failures.yml document and return its records, sorted by start."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise ConfigError(origin, [
            f"expected a YAML list of records (each starting with '- id: ...'), "
            f"got a {type(data).__name__}"
        ])
    problems: list[str] = []
    records: list[FailureRecord] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(data):
        record = _record(index, item, config, problems)
        if record is None:
            continue
        if record.id in first_index:
            problems.append(f"[{index}].id: {record.id!r} is already the id of "
                            f"[{first_index[record.id]}]; ids must be unique and never reused")
        else:
            first_index[record.id] = index
        records.append(record)
    if problems:
        raise ConfigError(origin, problems)
    return sorted(records, key=lambda f: (f.start, f.id))


def failures_from_threads(threads: Iterable[Thread], config: RunConfig) -> list[FailureRecord]:
    """Return one FailureRecord per thread carrying a failure label (id gh-<number>)."""
    labels = set(config.github.failure_labels)
    latest: dict[int, Thread] = {}
    for thread in threads:
        if labels & set(thread.labels):
            latest[thread.number] = thread  # later states of the same issue win
    records = []
    for thread in latest.values():
        end = thread.closed_at if thread.state == "closed" else None
        records.append(FailureRecord(
            id=f"gh-{thread.number}",
            kind="issue",
            start=thread.created_at,
            end=end,
            what=thread.title,
            accelerator_hours_lost=_hours(config, thread.created_at, end),
            evidence=(thread.url,) if thread.url else (),
            source="github",
        ))
    return sorted(records, key=lambda f: (f.start, f.id))


def _hours(config: RunConfig, start: datetime, end: datetime | None) -> float | None:
    """Accelerator-hours of a failure that stopped the whole allocation (None while open)."""
    if end is None:
        return None
    hours = max(0.0, (end - start).total_seconds()) / 3600
    return config.run.accelerators.count * hours


def _record(index: int, item: Any, config: RunConfig, problems: list[str]) -> FailureRecord | None:
    at = f"[{index}]"
    found: list[Problem] = []
    try:
        row = check_mapping(RECORD, item)
    except Invalid as err:
        row, found = {}, err.problems
    found += _order(item)  # reported even when another key of the record is wrong
    if found:
        problems += lines(found, at)
        return None
    lost = row.get("accelerator_hours_lost")
    return FailureRecord(
        id=row["id"],
        kind=row["kind"],
        start=row["start"],
        end=row.get("end"),
        what=row["what"],
        accelerator_hours_lost=lost if lost is not None else _hours(config, row["start"],
                                                                     row.get("end")),
        evidence=row["evidence"],
        source="manual",
    )


def _order(item: Any) -> list[Problem]:
    """Return a problem when both times are valid and the end is before the start."""
    try:
        start, end = utc_time(item["start"]), utc_time(item["end"])
    except (Invalid, KeyError, TypeError):
        return []
    if end >= start:
        return []
    return [("end", f"{end:%Y-%m-%dT%H:%M:%SZ} is before start {start:%Y-%m-%dT%H:%M:%SZ}")]
