"""Weights & Biases: run records and full-resolution history, fetched incrementally.

`parse_*` turn raw payloads (GraphQL run nodes, `scan_history` rows) into models; they
are shared by the live fetcher and the simulated source. `fetch_wandb` is the only
function here that touches the network; it imports wandb lazily so that `chronicle
build` never loads it.
"""

from __future__ import annotations

import base64
import json
import math
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chronicle.clean import clean_line, safe_url, scrub_urls
from chronicle.config import RunConfig, secret
from chronicle.errors import SourceError
from chronicle.models import MetricRow, RunRecord, parse_time

# Steps per HistoryPage request (wandb-core asks for the window [min, min + PAGE_SIZE)).
PAGE_SIZE = 1000
# wandb-core retries a failing request itself; bound it so a dead server fails the
# snapshot in about (RETRIES + 1) x timeout instead of hanging the nightly job.
RETRIES = 3
DEFAULT_BASE_URL = "https://api.wandb.ai"

_SPECIAL = {"NaN": math.nan, "nan": math.nan, "Infinity": math.inf, "-Infinity": -math.inf,
            "inf": math.inf, "-inf": -math.inf}


def _json_field(value: Any) -> dict[str, Any]:
    """W&B returns config/summary as JSON strings in GraphQL, dicts from the client."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
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
    return out


def _clean_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Keep scalar summary values only (media/histograms are not chronicle data)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key.startswith("_wandb"):
            continue
        if isinstance(value, bool) or value is None or isinstance(value, str):
            out[key] = value
        elif isinstance(value, int | float):
            out[key] = value if math.isfinite(value) else None
    return out


def parse_run(raw: Mapping[str, Any], parent: str | None = None,
              fork_step: int | None = None, url: str = "") -> RunRecord:
    """Return a RunRecord from a GraphQL run node (`name`, `state`, `createdAt`, ...)."""
    created = parse_time(raw.get("createdAt"))
    if created is None:
        raise ValueError(f"run {raw.get('name')!r} has no createdAt")
    return RunRecord(
        id=str(raw["name"]),  # a key: rows name their run by it, verbatim
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


def parse_value(value: Any) -> float | None:
    """Normalise one history value to float: ints (Go turns 1.0 into 1), NaN strings."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _SPECIAL:
            return _SPECIAL[value]
        try:
            return float(value)
        except ValueError:
            return None
    return None  # media, histograms, nested dicts: not metric values


def parse_history_row(run_id: str, raw: Mapping[str, Any],
                      keys: frozenset[str] | None = None) -> MetricRow | None:
    """Return a MetricRow from one `scan_history` row, or None if it has no step/time.

    `keys` restricts the row to those W&B keys (None keeps every numeric key).
    """
    step, stamp = raw.get("_step"), parse_value(raw.get("_timestamp"))
    if step is None or stamp is None or not math.isfinite(stamp):
        return None
    row: MetricRow = {"run": run_id, "step": int(step), "timestamp": stamp}
    for key, value in raw.items():
        if key.startswith("_") or (keys is not None and key not in keys):
            continue
        number = parse_value(value)
        if number is not None:
            row[key] = number
    return row


@dataclass(frozen=True)
class WandbFetch:
    """What one W&B fetch returned: the lineage's run records and its new history rows."""

    runs: list[RunRecord]  # lineage order
    rows: list[MetricRow]  # only steps past last_steps, keys kept by wandb.keys
    detail: dict[str, Any]  # counts for the snapshot manifest


def fetch_wandb(config: RunConfig, last_steps: dict[str, int], as_of: datetime,
                api_key: str | None = None) -> WandbFetch:
    """Return the lineage's run records and every history row logged since `last_steps`.

    Rows logged after `as_of` are left for a later snapshot; raises SourceError.
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
    cutoff = as_of.timestamp()
    runs: list[RunRecord] = []
    rows: list[MetricRow] = []
    stats = {"pages": 0, "duplicates": 0, "after_as_of": 0, "unusable": 0}
    parent: str | None = None
    for path, run in lineage:
        with _failing(f"reading run {path}", key):
            node = _node(run)
            created = parse_time(node["createdAt"])
            if created is not None and created > as_of:
                continue  # did not exist yet at as_of (a replayed snapshot)
            first = len(rows)
            rows.extend(_scan(run, str(node["name"]), last_steps, cutoff, config, stats))
            fork_step = None
            if parent is not None and node["name"] not in last_steps and len(rows) > first:
                fork_step = min(int(r["step"]) for r in rows[first:])
            runs.append(parse_run(node, parent=parent, fork_step=fork_step,
                                  url=safe_url(str(run.url))))
        parent = runs[-1].id
    # Save outputs.
    detail = {"rows": len(rows), "runs": len(runs), "history_pages": stats["pages"],
              "duplicates_dropped": stats["duplicates"], "after_as_of": stats["after_as_of"],
              "unusable_rows": stats["unusable"],
              "seconds": round(time.monotonic() - started, 2)}
    return WandbFetch(runs=runs, rows=rows, detail=detail)


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


def _scan(run: Any, run_id: str, last_steps: Mapping[str, int], cutoff: float,
          config: RunConfig, stats: dict[str, int]) -> Iterator[MetricRow]:
    """Yield the run's new rows, one page in memory at a time, each step once."""
    start = last_steps.get(run_id, -1) + 1
    scan = run.scan_history(min_step=start, page_size=PAGE_SIZE)
    stats["pages"] += max(0, math.ceil((scan.max_step + 1 - start) / PAGE_SIZE))
    decided: set[str] = set()
    kept: frozenset[str] = frozenset()
    seen: set[int] = set()
    for raw in scan:
        if not isinstance(raw, Mapping):
            raise ValueError(f"history row is a {type(raw).__name__}, not an object")
        new = raw.keys() - decided
        if new:  # decide each W&B key once, not once per row
            decided |= new
            kept = kept | {k for k in new if config.wandb.keeps(k)}
        row = parse_history_row(run_id, raw, kept)
        if row is None:
            stats["unusable"] += 1
        elif row["step"] < start or row["step"] in seen:
            stats["duplicates"] += 1  # re-logged or rewound step: the first one stands
        elif row["timestamp"] > cutoff:
            stats["after_as_of"] += 1
        else:
            seen.add(row["step"])
            yield row


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
