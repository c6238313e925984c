"""The rehearsal's checks: after each night, and once at the end (see tests/rehearsal/runner.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from chronicle.store import Store, snapshot_id
from tests.rehearsal.world import (
    EDIT_BODY,
    EDITED_ISSUE,
    KILL_NIGHT,
    MAINTAINER_SUBJECT,
    QUIET_NIGHT,
    RUN,
    Night,
    World,
    history_rows,
)
from tests.support.git import BOT_EMAIL, git

TRACKED_ISSUES = (8506, 8453)
TRACKED_LABEL = "hero-run"


class RehearsalFailure(Exception):
    """A rehearsal check failed: names the night (0 = set-up), the check and what was seen."""

    def __init__(self, night: int, check: str, detail: str) -> None:
        where = f"night {night}" if night else "set-up"
        super().__init__(f"{where}: check {check!r} failed: {detail}")
        self.night, self.check = night, check


@dataclass(frozen=True)
class NightResult:
    """What one night did, as the report prints it."""

    number: int
    story: str
    snapshot: str
    exit_code: int
    rows: int  # history rows this night stored
    sealed: tuple[str, ...]
    threads: int
    commit: str
    seconds: float
    note: str = ""

    @staticmethod
    def header() -> str:
        return (f"{'night':>5}  {'snapshot':<18}  {'exit':>4}  {'rows':>5}  {'threads':>7}  "
                f"{'sealed':<10}  {'commit':<10}  {'s':>5}  story")

    def line(self) -> str:
        text = (f"{self.number:>5}  {self.snapshot:<18}  {self.exit_code:>4}  {self.rows:>5}  "
                f"{self.threads:>7}  {','.join(self.sealed):<10}  {self.commit[:10]:<10}  "
                f"{self.seconds:>5.1f}  {self.story}")
        return text + (f"\n{'':>7}{self.note}" if self.note else "")


def _require(ok: bool, night: int, check: str, detail: str) -> None:
    if not ok:
        raise RehearsalFailure(night, check, detail)


def _tree(repo: Path, commit: str) -> dict[str, str]:
    """Return path -> blob id of every file at `commit` (equal ids: equal bytes)."""
    lines = git(repo, "ls-tree", "-r", commit).splitlines()
    return {line.split("\t", 1)[1]: line.split()[2] for line in lines}


def _exit_code(root: Path, night: Night) -> int:
    """The exit code of tonight's `chronicle snapshot`, as the PATH shim recorded it."""
    calls = (root / "chronicle-calls").read_text(encoding="utf-8").splitlines()
    mine = [c for c in calls if c.split()[1:] == ["snapshot", "--as-of", night.stamp]]
    _require(len(mine) == 1, night.number, "snapshot ran once with --as-of",
             f"calls recorded: {calls}")
    return int(mine[0].split()[0])


def _step_log(logs: Sequence[str], name: str) -> str:
    return next(log for log in logs if log.startswith(f"--- snapshot / {name}"))


def check_night(root: Path, night: Night, world: World, before: Sequence[NightResult],
                logs: Sequence[str], seconds: float, note: str) -> NightResult:
    """Check what `night` left in the checkout, the remote and the site; return its result."""
    code = check_snapshot(root, night, before, logs)
    rows, threads = check_data(root, night, world, before)
    head = check_git(root, night, before)
    check_site(root, night)
    return NightResult(night.number, night.story, snapshot_id(night.as_of), code, rows,
                       night.seals, threads, head, seconds, note)


def check_snapshot(root: Path, night: Night, before: Sequence[NightResult],
                   logs: Sequence[str]) -> int:
    """Exit code, annotation, one whole new snapshot and its manifest; return the code."""
    n, docs = night.number, root / "work" / "docs"
    sid = snapshot_id(night.as_of)
    code = _exit_code(root, night)
    _require(code == (3 if night.wandb_fails else 0), n, "snapshot exit code",
             f"chronicle snapshot exited {code}")
    snap_log = _step_log(logs, "Take a snapshot")
    warnings = [ln for ln in snap_log.splitlines() if ln.startswith("::warning")]
    if night.wandb_fails:
        _require(len(warnings) == 1 and "source(s) failed: wandb." in warnings[0], n,
                 "::warning annotation names wandb", snap_log)
    else:
        _require(not warnings, n, "no ::warning on a good night", snap_log)
    ids = [s.id for s in Store(docs).snapshots()]
    _require(ids == [r.snapshot for r in before] + [sid], n, "exactly one new snapshot",
             f"store holds {ids}")
    leftovers = sorted(str(p.relative_to(docs)) for p in docs.rglob("*")
                       if p.name.startswith(".tmp-") or p.name.endswith(".part"))
    _require(not leftovers, n, "no half-written snapshot or page left", str(leftovers))
    manifest = json.loads((docs / "data" / sid / "MANIFEST.json").read_text("utf-8"))
    statuses = {k: v["status"] for k, v in manifest["sources"].items()}
    want = {"wandb": "failed" if night.wandb_fails else "ok", "github": "ok"}
    _require(statuses == want, n, "source statuses in the manifest", str(manifest["sources"]))
    _require(tuple(sorted(manifest["sealed"])) == night.seals, n,
             "seals exactly the closed days whose sources all answered",
             f"sealed {sorted(manifest['sealed'])}, expected {list(night.seals)}")
    waiting = [w["day"] for w in manifest.get("waiting", [])]
    want_waiting = [(night.as_of.date() - timedelta(days=1)).isoformat()] \
        if night.wandb_fails else []
    _require(waiting == want_waiting, n, "the manifest lists the days that wait",
             f"waiting {waiting}, expected {want_waiting}")
    return code


def check_data(root: Path, night: Night, world: World,
               before: Sequence[NightResult]) -> tuple[int, int]:
    """Every history row once, none lost; threads as GitHub shows them; return the counts."""
    n, store = night.number, Store(root / "work" / "docs")
    table = store.load_metrics()
    keys = list(zip(table.column("run").to_pylist(), table.column("step").to_pylist(),
                    strict=True))
    _require(len(keys) == len(set(keys)), n, "no history row stored twice",
             f"{len(keys) - len(set(keys))} duplicates")
    rows = len(keys) - sum(r.rows for r in before)
    if night.wandb_fails:
        _require(rows == 0, n, "a failed source stores nothing", f"{rows} rows stored")
    else:
        # Every row W&B serves tonight, including any it could not serve on earlier nights.
        expected = {(RUN, r["_step"]) for r in history_rows(night.wandb_until)}
        _require(set(keys) == expected, n, "stored rows are exactly those W&B served",
                 f"{len(expected - set(keys))} missing, {len(set(keys) - expected)} extra")
    threads_file = store.data / snapshot_id(night.as_of) / "threads.json"
    threads = json.loads(threads_file.read_text("utf-8")) if threads_file.is_file() else []
    if n == QUIET_NIGHT:
        _require(rows == 0 and threads == [], n, "quiet night: no new data",
                 f"{rows} rows, {len(threads)} threads")
    _check_threads(store, world, n)
    return rows, len(threads)


def check_git(root: Path, night: Night, before: Sequence[NightResult]) -> str:
    """One new commit on the remote, child of the last, adding only tonight's files."""
    n, remote = night.number, root / "remote.git"
    sid = snapshot_id(night.as_of)
    head = git(remote, "rev-parse", "main")
    previous = before[-1].commit if before else git(remote, "rev-list", "--max-parents=0", "main")
    parent = git(remote, "rev-parse", "main^")
    if night.maintainer_push:
        # The job's commit was replayed on top of the maintainer's (pull --rebase), not forced.
        pushed = git(remote, "log", "-1", "--format=%s", "main^")
        _require(pushed == MAINTAINER_SUBJECT and git(remote, "rev-parse", "main^^") == previous,
                 n, "history only grows (rebased on the maintainer's push)",
                 f"main^ is {pushed!r}, main^^ is not the previous night's {previous[:10]}")
    else:
        _require(parent == previous, n, "history only grows",
                 f"main^ is not the previous night's commit {previous[:10]}")
    subject, author = git(remote, "log", "-1", "--format=%s%n%ae", "main").splitlines()
    said = ("sealed " + ", ".join(night.seals)) if night.seals else "no day sealed"
    _require(subject.startswith(f"snapshot {sid}: {said}") and author == BOT_EMAIL, n,
             "commit message names the snapshot", f"{subject!r} by {author}")
    _require(subject.endswith("(degraded: wandb failed)") == night.wandb_fails, n,
             "commit message says degraded only when degraded", subject)
    tree, old = _tree(remote, "main"), _tree(remote, previous)
    changed = sorted(p for p, blob in old.items() if tree.get(p) != blob)
    _require(not changed, n, "earlier files byte-for-byte unchanged", f"changed: {changed}")
    added = sorted(set(tree) - set(_tree(remote, parent)))
    ours = (f"docs/data/{sid}/", *(f"docs/days/{day}" for day in night.seals))
    # A sealed day's other editions beside it: docs/days/<lang>/<day>.md and its charts.
    def edition(path: str) -> bool:
        parts = path.split("/")
        return len(parts) >= 4 and parts[:2] == ["docs", "days"] and parts[2].isalpha() \
            and (parts[3].removesuffix(".md") if len(parts) == 4 else parts[3]) in night.seals
    bad = [p for p in added if not p.startswith(ours) and not edition(p)]
    _require(not bad, n, "the commit adds only tonight's snapshot and the days it seals",
             str(bad))
    status = git(root / "work", "status", "--porcelain")
    _require(status == "", n, "checkout clean after the commit", status)
    return head


def check_site(root: Path, night: Night) -> None:
    """The built home page says stale (naming wandb) exactly when W&B failed, and which
    day waits to be sealed."""
    n, site = night.number, root / "work" / "site"
    closed = (night.as_of.date() - timedelta(days=1)).isoformat()
    day = night.seals[-1] if night.seals else (night.as_of.date() - timedelta(days=2)).isoformat()
    home = (site / "index.html").read_text(encoding="utf-8")
    latest = json.loads((site / "api" / "latest.json").read_text(encoding="utf-8"))
    stale = [s["source"] for s in latest["stale_sources"]]
    waiting = [w["day"] for w in latest["waiting_days"]]
    if night.wandb_fails:
        _require("stale" in home.lower() and "wandb" in home and stale == ["wandb"], n,
                 "home page says stale and names wandb", f"stale_sources {stale}")
        _require("Days waiting to be sealed" in home and closed in home
                 and waiting == [closed], n, "home page names the day that waits",
                 f"waiting_days {waiting}")
    else:
        _require("Stale data" not in home and stale == [], n, "home page not stale",
                 f"stale_sources {stale}")
    _require(latest["snapshot"] == snapshot_id(night.as_of) and latest["latest_sealed_day"] == day,
             n, "api/latest.json names tonight's snapshot and day", str(latest))


def _check_threads(store: Store, world: World, n: int) -> None:
    """The newest stored state of every tracked thread matches GitHub's, comment by comment."""
    history = store.thread_history()
    for issue in world.github.world["issues"]:
        number = issue["number"]
        # The issues endpoint lists pull requests too; chronicle archives issues only.
        labelled = TRACKED_LABEL in issue["labels"] and not issue.get("pull_request")
        tracked = number in TRACKED_ISSUES or labelled
        if not tracked or not world.github._visible(issue["created_at"]):
            continue
        _require(number in history, n, f"issue {number} archived", "never stored")
        stored = [(c.id, c.body) for c in history[number][-1][1].comments]
        served = [(c["id"], c["body"]) for c in world.issue_comments(number)]
        _require(stored == served, n, f"issue {number} up to date",
                 f"{len(stored)} comments stored, {len(served)} on GitHub")
    if n >= KILL_NIGHT:
        newest = history[EDITED_ISSUE][-1][1]
        _require(newest.comments[1].body == EDIT_BODY, n, f"edit of issue {EDITED_ISSUE}",
                 "the edited comment body was not stored")


def check_final(root: Path, plan: Sequence[Night], results: Sequence[NightResult],
                secrets: Sequence[str]) -> None:
    """A fresh clone of the remote verifies; no secret reached a committed or built file."""
    fresh = root / "fresh-clone"
    git(root, "clone", "-q", str(root / "remote.git"), str(fresh))
    chronicle = Path(sys.executable).parent / "chronicle"
    verify = subprocess.run([str(chronicle), "verify"], cwd=fresh, capture_output=True,
                            text=True, timeout=120, check=False)
    last = len(plan)
    _require(verify.returncode == 0, last, "fresh clone verifies",
             verify.stdout + verify.stderr)
    snapshots = sorted(p.name for p in (fresh / "docs" / "data").iterdir())
    _require(snapshots == [r.snapshot for r in results], last, "fresh clone holds every snapshot",
             str(snapshots))
    for folder in (root / "work", fresh):
        for path in folder.rglob("*"):
            if ".git" in path.parts or not path.is_file():
                continue
            blob = path.read_bytes()
            leaked = [s for s in secrets if s.encode() in blob]
            _require(not leaked, last, "no secret in any file", f"{path} holds a secret")
