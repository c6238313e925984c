"""One heavy night: `chronicle snapshot` of a live chronicle whose W&B run logged 10^6
rows in one day, through the real wandb client against the fake W&B server
(tests/support/fakes/wandb_server.py) and PyGithub against the fake GitHub server.

Run as `python -m bench.night [ROWS]`: prints the snapshot's seconds, the peak RSS of its
largest process and of its processes together (chronicle's and wandb-core's, sampled from
/proc every 0.1 s). `make bench` prints the same as its "night of 10^6 rows" row.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import yaml

ROWS = 1_000_000
LAST_NIGHT = "T03:17:00Z"


@dataclass(frozen=True)
class Peak:
    """What one command cost: wall seconds, CPU seconds (its processes', user + system),
    the largest process and all of them together (MB of RSS), and its exit code."""

    seconds: float
    cpu: float
    largest_mb: float
    together_mb: float
    code: int


def _tree(pid: int) -> list[int]:
    """Return `pid` and every process descended from it (from /proc's children lists)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def measure(args: Sequence[str], env: dict[str, str] | None = None,
            cwd: Path | None = None) -> Peak:
    """Run a command; return its seconds and peak memory (largest process, and the sum over
    its process tree sampled every 0.1 s)."""
    os.sync()
    together = 0.0
    started = time.perf_counter()
    child = subprocess.Popen(list(args), env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal together
        while not done.is_set():
            together = max(together, sum(_rss_mb(p) for p in _tree(child.pid)))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = child.stderr.read() if child.stderr else b""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):
        raise SystemExit(f"bench: {' '.join(args)} failed ({code}):\n{err.decode()[-3000:]}")
    largest = usage.ru_maxrss / 1024.0
    return Peak(seconds, usage.ru_utime + usage.ru_stime, largest, max(together, largest), code)


def night(rows: int = ROWS, keep: Path | None = None) -> Peak:
    """Snapshot one night of `rows` W&B rows (logged over one day) into a fresh live
    chronicle; return what it cost."""
    from tests.support.fakes.github_server import FakeGithub
    from tests.support.fakes.hero import HERO, SENTINEL, add_run, hero_rows
    from tests.support.fakes.wandb_server import FakeWandb, SyntheticRows

    day = datetime.now(UTC).date() - timedelta(days=2)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = keep or Path(tmp_name)
        root = tmp / "night"
        env = dict(os.environ, WANDB_API_KEY=SENTINEL, WANDB_ERROR_REPORTING="false")
        env.pop("GITHUB_TOKEN", None)
        for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR"):
            (tmp / name.lower()).mkdir(parents=True, exist_ok=True)
            env[name] = str(tmp / name.lower())
        subprocess.run([sys.executable, "-m", "chronicle.cli", "init", str(root)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        _configure(root, day, HERO)
        midnight = datetime.combine(day, datetime.min.time(), tzinfo=UTC)
        with FakeGithub.from_fixture() as gh, FakeWandb(api_key=SENTINEL) as wb:
            synthetic = SyntheticRows(hero_rows(), rows, start_time=midnight.timestamp(),
                                      seconds_per_step=86_400 / rows)
            stamp = (midnight - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            add_run(wb, rows=synthetic, created_at=stamp, heartbeat_at=stamp)
            env.update(WANDB_BASE_URL=wb.url, GITHUB_API_URL=gh.base_url)
            as_of = (day + timedelta(days=1)).isoformat() + LAST_NIGHT
            return measure([sys.executable, "-m", "chronicle.cli", "snapshot", "--dir",
                            str(root), "--as-of", as_of], env=env)


def _configure(root: Path, day: date, run: str) -> None:
    path = root / "chronicle.yml"
    data = yaml.safe_load(path.read_text())
    data["run"]["start"] = day.isoformat()
    data["run"].pop("example", None)  # the run values are set
    data["wandb"].update({"entity": "e", "project": "p", "runs": [run], "timeout_seconds": 30})
    data["github"] = {"repo": "marin-community/marin", "issues": [8506],
                      "labels": ["hero-run"], "failure_labels": ["incident"],
                      "max_rate_limit_wait_seconds": 1}
    path.write_text(yaml.safe_dump(data))


def main(argv: Sequence[str]) -> None:
    rows = int(argv[0]) if argv else ROWS
    keep = Path(argv[1]) if len(argv) > 1 else None
    peak = night(rows, keep)
    print(f"night of {rows:,} rows: {peak.seconds:.1f} s ({peak.cpu:.1f} s of CPU), largest "
          f"process {peak.largest_mb:.0f} MB, together {peak.together_mb:.0f} MB "
          f"(exit {peak.code})")


if __name__ == "__main__":
    main(sys.argv[1:])
