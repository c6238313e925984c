"""Weights & Biases: run records and full-resolution history, fetched incrementally.

`parse_*` turn raw payloads (GraphQL run nodes, `scan_history` rows) into models; they
are shared by the live fetcher and the simulated source. `fetch_wandb` is the only
function here that touches the network; it imports wandb lazily so that `chronicle
build` never loads it.
"""

from __future__ import annotations

import base64
import math
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from chronicle.clean import (
    MAX_JSON_DEPTH,
    clean_line,
    clean_text,
    json_depth,
    load_json,
    safe_url,
    scrub_urls,
)
from chronicle.config import RunConfig, secret
from chronicle.errors import SourceError
from chronicle.models import RunRecord, parse_time
from chronicle.sources.history import BadRows, HistoryTable, RowBounds

# Steps per HistoryPage request (wandb-core asks for the window [min, min + PAGE_SIZE)).
PAGE_SIZE = 1000
# wandb-core retries a failing request itself; bound it so a dead server fails the
# snapshot in about (RETRIES + 1) x timeout instead of hanging the nightly job.
RETRIES = 3
DEFAULT_BASE_URL = "https://api.wandb.ai"
# A run's config or summary as W&B sends it (a JSON string): megabytes at most in practice.
MAX_FIELD_CHARS = 64 * 1024 * 1024


def _json_field(value: Any) -> dict[str, Any]:
    """W&B returns config/summary as JSON strings in GraphQL, dicts from the client."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = load_json(value, MAX_FIELD_CHARS)
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    if json_depth(value) > MAX_JSON_DEPTH:  # a dict from the client: never walked recursively
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return dict(value)


def _unwrap_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """GraphQL config values come wrapped as {"value": ..., "desc": ...}; unwrap them."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key.startswith("_wandb"):
            continue
        if isinstance(value, Mapping) and "value" in value and set(value) <= {"value", "desc"}:
            out[key] = value["value"]
        else:
            out[key] = value
    return _clean_json(out)


def _clean_json(value: Any) -> Any:
    """Return a config value with the control characters out of every string in it (keys
    too): a run's config is typed by whoever launched it, and is stored forever.
    A number JSON cannot hold (NaN, infinity) becomes null, as in the summary."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_line(str(k)): _clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _clean_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Keep scalar summary values only (media/histograms are not chronicle data)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key.startswith("_wandb"):
            continue
        name = clean_line(str(key))
        if isinstance(value, bool) or value is None:
            out[name] = value
        elif isinstance(value, str):
            out[name] = clean_text(value)
        elif isinstance(value, int | float):
            out[name] = value if math.isfinite(value) else None
    return out


def parse_run(raw: Mapping[str, Any], parent: str | None = None,
              fork_step: int | None = None, url: str = "") -> RunRecord:
    """Return a RunRecord from a GraphQL run node (`name`, `state`, `createdAt`, ...)."""
    created = parse_time(raw.get("createdAt"))
    if created is None:
        raise ValueError(f"run {raw.get('name')!r} has no createdAt")
    return RunRecord(
        id=run_key(raw["name"]),  # rows name their run by it
        name=clean_line(str(raw.get("displayName") or raw["name"])),
        state=clean_line(str(raw.get("state") or "unknown")),
        created_at=created,
        heartbeat_at=parse_time(raw.get("heartbeatAt")),
        config=_unwrap_config(_json_field(raw.get("config"))),
        summary=_clean_summary(_json_field(raw.get("summaryMetrics"))),
        parent=parent,
        fork_step=fork_step,
        url=url,
    )


def run_key(name: Any) -> str:
    """Return the id a run's rows and records name it by (a W&B run id, cleaned)."""
    return clean_line(str(name))


@dataclass(frozen=True)
class WandbFetch:
    """What one W&B fetch returned: the lineage's run records and its new history rows."""

    runs: list[RunRecord]  # lineage order
    rows: pa.Table  # only steps past last_steps, keys kept by wandb.keys (sources/history.py)
    detail: dict[str, Any]  # counts for the snapshot manifest
    problem: str | None = None  # bad rows were left out: what and how many (exit 3)


def fetch_wandb(config: RunConfig, last_steps: dict[str, int], as_of: datetime,
                api_key: str | None = None, now: datetime | None = None) -> WandbFetch:
    """Return the lineage's run records and every history row logged since `last_steps`.

    Rows logged after `as_of` are left for a later snapshot; rows with an impossible step
    or time (sources/history.py; `now` is the wall clock, default the machine's) are left
    out and named in `problem`. Raises SourceError.
    """
    if as_of.tzinfo is None:
        raise ValueError(f"as_of must be an aware UTC datetime, got {as_of!r}")
    key = api_key or secret("WANDB_API_KEY")
    if key is None:
        raise SourceError("wandb", "no API key: set the WANDB_API_KEY environment variable "
                          "(https://wandb.ai/authorize)")
    started = time.monotonic()
    # Load inputs.
    api = _open_api(config, key)
    lineage = _lineage(api, config, key)
    # Process.
    history = HistoryTable(config.wandb.keeps,
                           RowBounds.of_run(config.run.start, now or datetime.now(UTC)),
                           as_of.timestamp())
    runs: list[RunRecord] = []
    pages = 0
    parent: str | None = None
    for path, run in lineage:
        with _failing(f"reading run {path}", key):
            node = _node(run)
            created = parse_time(node["createdAt"])
            if created is not None and created > as_of:
                continue  # did not exist yet at as_of (a replayed snapshot)
            run_id = run_key(node["name"])
            pages += _scan(run, run_id, last_steps, history)
            fork_step = None
            if parent is not None and run_id not in last_steps:
                fork_step = history.first_step(run_id)
            runs.append(parse_run(node, parent=parent, fork_step=fork_step,
                                  url=clean_line(safe_url(str(run.url)))))
        parent = runs[-1].id
    rows = history.table()
    # Save outputs.
    detail: dict[str, Any] = {
        "rows": rows.num_rows, "runs": len(runs), "history_pages": pages,
        "duplicates_dropped": history.stats["duplicates"],
        "after_as_of": history.stats["after_as_of"], "bad_rows": history.bad.count}
    if history.bad.first is not None:
        detail["first_bad_row"] = history.bad.first
    detail["seconds"] = round(time.monotonic() - started, 2)
    return WandbFetch(runs=runs, rows=rows, detail=detail,
                      problem=bad_rows_message(history.bad, rows.num_rows))


def bad_rows_message(bad: BadRows, stored: int) -> str | None:
    """Return what a snapshot says of the bad rows it left out (None: there were none)."""
    if bad.first is None:
        return None
    first = bad.first
    return (f"{bad.count:,} history row{'s' if bad.count != 1 else ''} left out as bad, "
            f"the first of run {first['run']} at step {first['step']} with _timestamp "
            f"{first['timestamp']} ({first['why']}); the {stored:,} other new rows were "
            "stored. W&B holds what the training job logged: check the clock of the hosts "
            "that logged these rows (chronicle never stores a row it cannot place in time)")


def _open_api(config: RunConfig, key: str) -> Any:
    """Return a fresh wandb.Api (it caches run objects) with bounded retries."""
    os.environ.setdefault("WANDB_ERROR_REPORTING", "false")  # else it posts telemetry
    base_url = os.environ.get("WANDB_BASE_URL", DEFAULT_BASE_URL)
    timeout = config.wandb.timeout_seconds
    with _failing(f"signing in to W&B at {safe_url(base_url)}", key):
        import wandb

        wandb.setup(settings=wandb.Settings(
            x_graphql_retry_max=RETRIES,
            x_graphql_retry_wait_min_seconds=min(2.0, timeout / 4),
            x_graphql_retry_wait_max_seconds=min(10.0, timeout / 2),
            x_graphql_timeout_seconds=float(timeout),
        ))
        return wandb.Api(timeout=timeout, api_key=key)


def _lineage(api: Any, config: RunConfig, key: str) -> list[tuple[str, Any]]:
    """Return (path, run) for each run of the lineage, in order."""
    wb = config.wandb
    if wb.runs:
        out = []
        for ref in wb.runs:
            path = ref if ref.count("/") == 2 else f"{wb.entity}/{wb.project}/{ref}"
            with _failing(f"loading run {path}", key):
                out.append((path, api.run(path)))
        return out
    project = f"{wb.entity}/{wb.project}"
    with _failing(f"listing the runs of group {wb.group!r} in {project}", key):
        found = list(api.runs(project, filters={"group": wb.group}, order="+created_at"))
    if not found:
        raise SourceError("wandb", f"no runs in group {wb.group!r} of {project}: check "
                          "wandb.group (or list wandb.runs) in chronicle.yml")
    return [(f"{project}/{run.id}", run) for run in found]


def _node(run: Any) -> dict[str, Any]:
    """Return a wandb Run object's fields shaped like a GraphQL run node (for parse_run)."""
    return {
        "name": run.id,
        "displayName": run.name,
        "state": run.state,
        "createdAt": run.created_at,
        "heartbeatAt": getattr(run, "heartbeat_at", None),
        "config": run.config,
        "summaryMetrics": run.summary_metrics,
    }


def _scan(run: Any, run_id: str, last_steps: Mapping[str, int],
          history: HistoryTable) -> int:
    """Add the run's new rows to `history`, a page at a time; return the pages read."""
    start = last_steps.get(run_id, -1) + 1
    scan = run.scan_history(min_step=start, page_size=PAGE_SIZE)
    history.add(run_id, scan, start)
    return max(0, math.ceil((scan.max_step + 1 - start) / PAGE_SIZE))


_AUTH_WORDS = ("401", "403", "unauthorized", "forbidden", "permission", "api key",
               "invalid key", "not logged in")
_DOWN_WORDS = ("did not respond", "timeout", "timed out", "refused", "giving up",
               "connection", "unreachable", "http 5", "error 5")


def _hint(text: str) -> str:
    """Return how to fix a failure, judged from the client's message."""
    low = text.lower()
    if "could not find run" in low or "not found" in low:
        return "check wandb.runs (entity/project/run id) in chronicle.yml"
    if any(w in low for w in _DOWN_WORDS):
        return ("W&B did not answer: check WANDB_BASE_URL and the network, or retry later "
                "(a snapshot keeps the data it already has)")
    if any(w in low for w in _AUTH_WORDS):
        return "check WANDB_API_KEY (a key with read access to the project)"
    return ("W&B returned an unexpected answer; retry later, and report it if it persists "
            "(check WANDB_BASE_URL if you use a private server)")


def _scrub(text: str, key: str) -> str:
    """Remove the API key (plain or in a Basic auth header) and the credentials of any URL
    (WANDB_BASE_URL's user:pass@, ?token=) from a message."""
    basic = base64.b64encode(f"api:{key}".encode()).decode()
    return scrub_urls(text.replace(key, "[WANDB_API_KEY]").replace(basic, "[credentials]"))


def _safe_cause(err: BaseException, key: str) -> BaseException:
    """Return `err` to chain from, or a scrubbed stand-in if its chain shows the key.

    A server or proxy may echo the credentials in an error; a logged traceback of the
    chained exception must not carry them.
    """
    chain, seen = [err], set()
    while chain[-1].__cause__ or chain[-1].__context__:
        nxt = chain[-1].__cause__ or chain[-1].__context__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        chain.append(nxt)
    texts = [f"{e!r} {e}" for e in chain]
    if all(_scrub(text, key) == text for text in texts):
        return err
    stand_in = RuntimeError(_scrub(f"{type(err).__name__}: {err}", key))
    return stand_in.with_traceback(err.__traceback__)


@contextmanager
def _failing(what: str, key: str) -> Iterator[None]:
    """Turn any failure inside into a SourceError naming `what` and how to fix it."""
    try:
        yield
    except SourceError:
        raise
    except Exception as err:
        text = _scrub(" ".join(str(err).split()).rstrip(".") or type(err).__name__, key)
        message = f"{what} failed: {text[:400]}; {_hint(text)}"
        raise SourceError("wandb", message) from _safe_cause(err, key)
