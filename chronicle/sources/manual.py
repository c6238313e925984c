"""Failure records written by hand (failures.yml) or filed as GitHub issues.

failures.yml is validated like chronicle.yml: every problem at once, each naming the
record's index and field and saying what is expected.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from chronicle.config import RunConfig, read_yaml
from chronicle.errors import ConfigError
from chronicle.models import FAILURE_KINDS, FailureRecord, Thread, parse_time

REQUIRED = ("id", "start", "what", "evidence")
OPTIONAL = ("end", "kind", "accelerator_hours_lost")
KEYS = REQUIRED + OPTIONAL
_URL = re.compile(r"^https?://\S+$")
_TIME_HINT = "a UTC time like 2026-09-02T04:10:00Z"


def load_failures_file(config: RunConfig) -> list[FailureRecord]:
    """Return the records in failures.yml ([] if absent); raise ConfigError listing problems."""
    if not config.failures.file:
        return []
    path = config.root / config.failures.file
    if not path.is_file():
        return []
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
    if not isinstance(item, Mapping):
        problems.append(f"{at}: expected a mapping with {', '.join(REQUIRED)}, "
                        f"got {type(item).__name__}")
        return None
    before = len(problems)
    for key in item:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{at}.{key}: unknown key{hint}; allowed: {', '.join(KEYS)}")
    for key in REQUIRED:
        if item.get(key) is None:
            problems.append(f"{at}.{key}: missing (required)")
    rid = item.get("id")
    if rid is not None and not (isinstance(rid, str) and rid.strip()):
        problems.append(f"{at}.id: expected a non-empty string, e.g. rack-7-power, got {rid!r}")
    what = item.get("what")
    if what is not None and not (isinstance(what, str) and what.strip()):
        problems.append(f"{at}.what: expected a sentence saying what broke, got {what!r}")
    start = _time(item, "start", at, problems)
    end = _time(item, "end", at, problems)
    if start is not None and end is not None and end < start:
        problems.append(f"{at}.end: {end:%Y-%m-%dT%H:%M:%SZ} is before start "
                        f"{start:%Y-%m-%dT%H:%M:%SZ}")
    kind = item.get("kind", "manual")
    if kind not in FAILURE_KINDS:
        problems.append(f"{at}.kind: expected one of {', '.join(FAILURE_KINDS)}, got {kind!r}")
    lost = item.get("accelerator_hours_lost")
    if lost is not None and (isinstance(lost, bool) or not isinstance(lost, int | float)
                             or lost < 0):
        problems.append(f"{at}.accelerator_hours_lost: expected a number >= 0, got {lost!r}")
    evidence = item.get("evidence")
    if evidence is not None and not (
        isinstance(evidence, list) and evidence
        and all(isinstance(u, str) and _URL.match(u) for u in evidence)
    ):
        problems.append(f"{at}.evidence: expected a list of one or more http(s) URLs, "
                        f"e.g. [https://github.com/owner/repo/issues/123], got {evidence!r}")
    if len(problems) > before or start is None:
        return None
    return FailureRecord(
        id=str(rid).strip(),
        kind=str(kind),
        start=start,
        end=end,
        what=str(what).strip(),
        accelerator_hours_lost=(float(lost) if lost is not None
                                else _hours(config, start, end)),
        evidence=tuple(evidence or ()),
        source="manual",
    )


def _time(item: Mapping[str, Any], key: str, at: str, problems: list[str]) -> datetime | None:
    """Read a time; YAML gives datetimes, dates or strings. Times without a zone are UTC."""
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    try:
        parsed = parse_time(value) if isinstance(value, datetime | str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        problems.append(f"{at}.{key}: expected {_TIME_HINT}, got {value!r}")
        return None
    return parsed.astimezone(UTC)
