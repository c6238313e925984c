"""Build a small chronicle in a temp folder for site tests: scaffold, store, sealed days."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.days import summarize_day
from chronicle.analysis.incidents import detect_failures
from chronicle.analysis.series import build_series
from chronicle.config import RunConfig, load_config
from chronicle.init import SIMULATED_WATCH, InitOptions, init_chronicle
from chronicle.models import Comment, FailureRecord, MetricRow, RunRecord, SourceStatus, Thread
from chronicle.render.day import render_day_files
from chronicle.render.day_charts import day_charts
from chronicle.render.i18n import ENGLISH
from chronicle.render.prose import write_summary
from chronicle.render.svg import render_svg
from chronicle.snapshot.evidence import merge_failures
from chronicle.snapshot.fetch import fetch_simulated_source
from chronicle.snapshot.take import take_snapshot
from chronicle.sources.simulated import SimulatedRun
from chronicle.store import Store, snapshot_id, write_snapshot
from tests.support.paths import REPO, SCAFFOLD

START = date(2026, 8, 20)
SITE_URL = "https://example.org/chronicle/"
SEARCH_WORD = "quokkaflux"  # appears in one comment only
HOSTILE = """---
title: owned
---
<script>alert("x")</script><img src=x onerror=alert(1)>
[click me](javascript:alert(1)) <a href="data:text/html,boom">data link</a>
{{ config.site_name }} {% raw %} <!-- bot-marker: status -->
</div></div></article>
```python
print("an unclosed fence swallows nothing")
"""

CHRONICLE_YML = """\
source: simulated
run:
  name: Test Run 7B
  start: {start}
  planned_days: 10
  token_budget: 2.0e+12
  accelerators: {{kind: GB200, count: 8}}
  prices_usd_per_accelerator_hour: {{spot: 4.22}}
wandb:
  entity: test-entity
  project: test-project
  runs: [run-a]
github:
  repo: test-org/test-repo
  issues: [101]
  labels: [hero-run]
  failure_labels: [incident]
site:
  url: {url}
  author: Test Authors
  license: CC-BY-4.0
  languages: [{languages}]
"""


@dataclass(frozen=True)
class Built:
    config: RunConfig
    root: Path


def _rows(day: date) -> list[MetricRow]:
    base = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    n0 = (day - START).days * 288
    rows = []
    for i in range(288):
        step = (n0 + i) * 10
        rows.append({
            "run": "run-a", "step": step, "timestamp": base + i * 300 + 60,
            "train/loss": 3.0 - 0.4 * math.log1p(step / 100) / 3 + 0.01 * math.sin(i),
            "eval_dropless/paloma/macro_loss": 3.2 - 0.1 * (n0 + i) / 288 if i % 72 == 0
            else None,
            "throughput/tokens_per_second": 2.4e6 + 1e4 * math.cos(i),
            "throughput/total_tokens": (n0 + i + 1) * 300 * 2.3e6,
            "throughput/mfu": 21.0 + 0.5 * math.sin(i / 3),
            "moe/drop_fraction": 0.004 + 0.002 * math.sin(i / 5) ** 2,
            "grad/norm/total": 0.2 + 0.05 * math.cos(i / 4),
            "optim/learning_rate": 3e-4,
        })
    return rows


def _thread(at: datetime, nights: int) -> Thread:
    opened = datetime(2026, 8, 20, 1, 0, tzinfo=UTC)
    issue = "https://github.com/test-org/test-repo/issues/101"
    first = opened + timedelta(hours=2)
    comments = [Comment(1, "alice", "Run started. Loss looks **fine**.", first, first,
                        f"{issue}#c1")]
    if nights >= 2:
        day2 = opened + timedelta(days=1, hours=5)
        body = "Status: all racks up." if nights < 3 else "Status: rack 3 down, restarted."
        edited = day2 if nights < 3 else day2 + timedelta(days=1)
        comments.append(Comment(2, "status-bot", f"<!-- status:start -->{body}<!-- status:end -->",
                                day2, edited, "https://github.com/test-org/test-repo/issues/101#c2"))
        comments.append(Comment(3, "mallory", HOSTILE, day2 + timedelta(hours=1),
                                day2 + timedelta(hours=1), "https://github.com/test-org/test-repo/issues/101#c3"))
    if nights >= 3:
        third = opened + timedelta(days=2, hours=3)
        comments.append(Comment(4, "bob", f"The {SEARCH_WORD} dashboard agrees.", third, third,
                                f"{issue}#c4"))
    return Thread(101, "[Hero Run] Test Run 7B <b>status</b>", "The run issue.", "open",
                  ("hero-run",), "alice", opened, at - timedelta(hours=3), None,
                  "https://github.com/test-org/test-repo/issues/101", tuple(comments))


def make_chronicle(root: Path, nights: int = 4, failed_source: str | None = None,
                   url: str = SITE_URL, languages: tuple[str, ...] = ("en",),
                   nan_row: bool = False) -> Built:
    """Scaffold a chronicle in `root` with `nights` snapshots, each sealing one day; with
    `nan_row`, the third day logs a NaN loss (step 6,760), which the detectors record as a
    failure with its facts (a record as `chronicle snapshot` stores one)."""
    shutil.copytree(SCAFFOLD, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "chronicle.yml").write_text(CHRONICLE_YML.format(
        start=START, url=url, languages=", ".join(languages)))
    config = load_config(root)
    store = Store(config.docs_dir)
    run = RunRecord("run-a", "run-a", "running", datetime(2026, 8, 20, tzinfo=UTC), None)
    failure = FailureRecord("rack-3", "manual", datetime(2026, 8, 22, 4, tzinfo=UTC),
                            datetime(2026, 8, 22, 5, 30, tzinfo=UTC), "Rack 3 lost power",
                            12.0, ("https://github.com/test-org/test-repo/issues/102",), "manual")
    open_failure = FailureRecord("slow-io", "issue", datetime(2026, 8, 23, 9, tzinfo=UTC), None,
                                 "Checkpoint writes are slow", None, (), "github")
    all_rows: list[MetricRow] = []
    history: dict[int, list[Thread]] = {}
    previous: DaySummary | None = None
    for night in range(1, nights + 1):
        day = START + timedelta(days=night - 1)
        taken = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1, hours=3,
                                                                              minutes=17)
        fail_now = failed_source is not None and night >= nights - 1 and night > 1
        rows = _rows(day)
        if nan_row and night == 3:
            rows[100]["train/loss"] = math.nan
        failures = [failure] + ([open_failure] if night >= 4 else [])
        thread = _thread(taken, night)
        if not (fail_now and failed_source == "wandb"):
            all_rows += rows
        if not (fail_now and failed_source == "github"):
            history.setdefault(101, []).append(thread)
        import pyarrow as pa

        table = pa.Table.from_pylist([{k: r.get(k) for k in sorted(set().union(*all_rows))}
                                      for r in all_rows])
        series = build_series(table, [run], config)
        if nan_row:
            nan = [f for f in detect_failures(series, config, taken) if f.kind == "nan_loss"]
            failures = merge_failures(nan, failures)
        sid = snapshot_id(taken)
        summary = summarize_day(day, series, failures, history, config, sid, taken, previous)
        summary["summary"] = write_summary(summary, ENGLISH)
        charts = day_charts(day, series, failures, config, ENGLISH)
        svgs = {n: render_svg(s) for n, s in charts.items()}
        statuses = [SourceStatus("wandb", not (fail_now and failed_source == "wandb"),
                                 "HTTP 502 from api.wandb.ai" if fail_now else None),
                    SourceStatus("github", not (fail_now and failed_source == "github"),
                                 "rate limited" if fail_now else None)]
        write_snapshot(store,
            taken, None if (fail_now and failed_source == "wandb") else rows, [run],
            None if (fail_now and failed_source == "github") else [thread], failures, statuses,
            sealed={day.isoformat(): render_day_files(summary, charts, svgs, config)})
        previous = summary
    return Built(config, root)


def chronicle_build(root: Path, site: Path) -> Path:
    """Run `chronicle build` (every language's mkdocs build --strict) in a subprocess."""
    chronicle_build_output(root, site)
    return site


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Return every file under `folder` (a built site): {path relative to it: bytes}."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def chronicle_build_output(root: Path, site: Path) -> str:
    """Run `chronicle build` in a subprocess; return what it printed on stdout."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1",
           "DISABLE_MKDOCS_2_WARNING": "true"}
    proc = subprocess.run(
        [sys.executable, "-m", "chronicle.cli", "build", "--dir", str(root), "--site-dir",
         str(site)], cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"chronicle build failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def build_site(root: Path, site: Path | None = None) -> Path:
    """Run `mkdocs build --strict` in a subprocess; return the site folder."""
    site = site or root / "site"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1",
           "DISABLE_MKDOCS_2_WARNING": "true"}
    env.pop("SOURCE_DATE_EPOCH", None)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
         "-d", str(site)], cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"mkdocs build failed:\n{proc.stdout}\n{proc.stderr}")
    return site


def add_correction(made: Built, night: int) -> None:
    """Append a snapshot to `made` (taken after its `night` nights) holding late metric rows
    of its first day and the correction they make, as `chronicle snapshot` stores one."""
    midnight = datetime(START.year, START.month, START.day, tzinfo=UTC)
    taken = midnight + timedelta(days=night, hours=15)
    late = [{**row, "step": row["step"] + 5, "timestamp": row["timestamp"] + 150,
             "train/loss": row["train/loss"] + 0.5} for row in _rows(START)[:3]]
    store = Store(made.config.docs_dir)
    sid = snapshot_id(taken)
    correction = {
        "schema": "chronicle-correction/1", "id": f"{START}/data.rows/{sid}",
        "day": START.isoformat(), "figure": "data.rows", "sealed": 288, "previous": 288,
        "corrected": 291,
        "sealed_by": snapshot_id(midnight + timedelta(days=1, hours=3, minutes=17)),
        "found_by": sid, "found_at": taken.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "reason": "3 metric row(s) of this day arrived late"}
    run = RunRecord("run-a", "run-a", "running", datetime(2026, 8, 20, tzinfo=UTC), None)
    write_snapshot(store, taken, late, [run], None, store.load_failures(),
                   [SourceStatus("wandb", True), SourceStatus("github", True)],
                   extra={"corrections": [correction]})


@dataclass(frozen=True)
class Simulated:
    """A chronicle of the simulated run with every watcher of the demo, nights taken."""

    config: RunConfig
    sim: SimulatedRun
    store: Store


def simulated_chronicle(root: Path, nights: int, start: date = START,
                        planned_days: int | None = None) -> Simulated:
    """Scaffold a simulated chronicle (the demo's watchers: prediction, risks, claims;
    the run config read at levanter's default paths) of `planned_days` (default `nights`)
    in `root` and take `nights` real snapshots (03:17 UTC), each sealing a day."""
    init_chronicle(root, InitOptions(source="simulated", name="Sim", start=start,
                                     planned_days=planned_days or nights,
                                     watch=SIMULATED_WATCH, config_keys=""))
    config = load_config(root)
    sim = SimulatedRun(config)
    store = Store(config.docs_dir)
    first = datetime(start.year, start.month, start.day, 3, 17, tzinfo=UTC)
    for n in range(1, nights + 1):
        take_snapshot(config, first + timedelta(days=n), store=store,
                      fetcher=lambda c, s, t: fetch_simulated_source(c, s, t, sim=sim))
    return Simulated(config, sim, store)
