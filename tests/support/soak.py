"""The soak: a live chronicle run night after night under random source failures (5xx,
timeouts, malformed payloads, rate limits; the real wandb and PyGithub clients against
the fake servers), SIGKILLs at random points and concurrent starts and rebuilds, checked
after every night against a clean run of the same nights.

    python -m tests.support.soak --nights 35 [--seed N] [--keep DIR]     (make soak)

After every night: `verify` passes, no byte of an earlier snapshot or sealed file changed,
no (run, step) is stored twice, no day is sealed twice. A SIGKILL hits the snapshot's
process alone: whatever it started (render workers, wandb-core) must have ended 4 s
later. At the end (one last clean night lets the waiting days seal): every day the clean
run sealed is sealed exactly once, with the clean run's figures
(tests/support/soak_checks.py says which, and why).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from chronicle.cli import main
from chronicle.store import snapshot_id
from tests.rehearsal.world import history_rows
from tests.support.commands import cli_process
from tests.support.fakes.github_server import FakeGithub
from tests.support.fakes.hero import HERO, add_run
from tests.support.fakes.wandb_server import Failure, FakeWandb
from tests.support.processes import left_in_session
from tests.support.soak_checks import Ledger, check_night, compare_days

KEY = "soak-wandb-key-0123456789abcdef-0123456789abcdef-SOAK"
NIGHT_ONE = datetime(2026, 8, 21, 3, 17, tzinfo=UTC)
WANDB_FAILURES = ("500", "malformed", "slow", "429")
GITHUB_FAILURES = ("500", "rate_limit", "secondary", "malformed")
KILL_POINTS = ("timer", "stage", "commit", "publish")
# A night with a failing source seals nothing: no staged file to be killed at.
KILL_POINTS_FAILING = ("timer", "commit")
MAX_WAIT_DAYS = 7
MAX_STREAK = 3  # failing nights in a row per source: days wait, none is sealed anyway
# The job stops for a few hours twice: gaps across a night's snapshot (open when sealed).
GAPS = ((datetime(2026, 8, 22, 23, tzinfo=UTC), datetime(2026, 8, 23, 6, tzinfo=UTC)),
        (datetime(2026, 8, 26, 1, tzinfo=UTC), datetime(2026, 8, 26, 5, tzinfo=UTC)))


@dataclass(frozen=True)
class Night:
    """What happens on one night of the soak."""

    number: int
    wandb: str | None = None  # how W&B fails tonight (None: it answers)
    github: str | None = None
    kill: str | None = None  # a first attempt SIGKILLed: "timer" or a killpoint
    concurrent: str | None = None  # a second command started with the snapshot
    build: bool = False  # rebuild the site afterwards (and verify against it)

    @property
    def as_of(self) -> datetime:
        return NIGHT_ONE + timedelta(days=self.number - 1)

    @property
    def stamp(self) -> str:
        return self.as_of.strftime("%Y-%m-%dT%H:%M:%SZ")


def plan_nights(nights: int, rng: random.Random) -> list[Night]:
    """Return `nights` random nights, then one clean night that lets waiting days seal.

    The first four nights hold one of each trouble whatever the seed (a W&B failure, a
    GitHub failure, a kill, a concurrent start, a rebuild), so a small soak tests them all.
    """
    forced = [Night(1), Night(2, wandb=rng.choice(WANDB_FAILURES)),
              Night(3, github=rng.choice(GITHUB_FAILURES), kill=rng.choice(KILL_POINTS_FAILING)),
              Night(4, concurrent="build")]
    plan = forced[:nights]
    streak = {"wandb": 0, "github": 0}
    for night in plan:
        for source in streak:
            streak[source] = streak[source] + 1 if getattr(night, source) else 0
    for n in range(len(plan) + 1, nights + 1):
        fails = {}
        for source, modes, p in (("wandb", WANDB_FAILURES, 0.25),
                                 ("github", GITHUB_FAILURES, 0.2)):
            fail = rng.random() < p and streak[source] < MAX_STREAK
            streak[source] = streak[source] + 1 if fail else 0
            fails[source] = rng.choice(modes) if fail else None
        points = KILL_POINTS_FAILING if any(fails.values()) else KILL_POINTS
        plan.append(Night(n, **fails, kill=rng.choice(points) if rng.random() < 0.25 else None,
                          concurrent=rng.choice(("snapshot", "build")) if rng.random() < 0.2
                          else None, build=rng.random() < 0.2))
    plan.append(Night(len(plan) + 1, build=True))
    return plan


@dataclass
class Tally:
    """What the soak did, for its report."""

    nights: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    kills: int = 0
    killed_after_commit: int = 0
    concurrent: int = 0
    refused_busy: int = 0
    builds: int = 0
    snapshots: int = 0
    sealed_days: int = 0
    bytes_changed: int = 0
    left_running: list[str] = field(default_factory=list)  # what outlived a killed snapshot
    seconds: float = 0.0

    def report(self) -> str:
        fails = ", ".join(f"{k} {v}" for k, v in sorted(self.failures.items())) or "none"
        return (f"soak: {self.nights} nights, {self.snapshots} snapshots, {self.sealed_days} "
                f"days sealed once each with the clean run's figures; failures injected: "
                f"{sum(self.failures.values())} ({fails}); SIGKILLs: {self.kills} "
                f"({self.killed_after_commit} after the commit); concurrent starts: "
                f"{self.concurrent} ({self.refused_busy} refused: store locked); rebuilds: "
                f"{self.builds}; sealed bytes changed: {self.bytes_changed}; processes "
                f"left running by a killed snapshot: {len(self.left_running)}; "
                f"{self.seconds:.0f} s")


class Soak:
    """The fake servers, a subject chronicle (the troubles) and a reference (clean)."""

    def __init__(self, base: Path, seed: int, echo: Callable[[str], None] = print) -> None:
        self.base, self.rng, self.echo = base, random.Random(seed), echo
        self.subject, self.reference = base / "subject", base / "reference"
        self.tally = Tally()
        self.ledger = Ledger(self.subject)
        self.wandb = FakeWandb(api_key=KEY)
        self.github = FakeGithub.from_fixture()
        self.env: dict[str, str] = {}

    @contextmanager
    def running(self, last: datetime) -> Iterator[Soak]:
        """Start the servers (serving history up to `last`) and point the clients at them."""
        with self.github, self.wandb:
            rows = [r for r in history_rows(last)
                    if not any(a.timestamp() <= r["_timestamp"] < b.timestamp() for a, b in GAPS)]
            add_run(self.wandb, rows=rows)
            for name in ("wandb", "wandb-cache", "wandb-config"):
                (self.base / name).mkdir(parents=True, exist_ok=True)
            self.env = {"WANDB_API_KEY": KEY, "WANDB_BASE_URL": self.wandb.url,
                        "GITHUB_API_URL": self.github.base_url, "WANDB_ERROR_REPORTING": "false",
                        "WANDB_DIR": str(self.base / "wandb"),
                        "WANDB_CACHE_DIR": str(self.base / "wandb-cache"),
                        "WANDB_CONFIG_DIR": str(self.base / "wandb-config")}
            saved = {k: os.environ.get(k) for k in (*self.env, "GITHUB_TOKEN")}
            os.environ.update(self.env)
            os.environ.pop("GITHUB_TOKEN", None)
            try:
                for root in (self.subject, self.reference):
                    _scaffold(root)
                yield self
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v

    def run(self, plan: list[Night]) -> Tally:
        started = time.monotonic()
        with self.running(plan[-1].as_of):
            for night in plan:
                self.night(night)
                self.tally.nights += 1
            self.tally.sealed_days = compare_days(self.subject, self.reference)
        self.tally.seconds = time.monotonic() - started
        return self.tally

    def night(self, night: Night) -> None:
        self.github.now = night.as_of
        ref = _cli("snapshot", "--dir", str(self.reference), "--as-of", night.stamp)
        assert ref.exit_code == 0, f"night {night.number}, clean run: {ref.output}"
        self.wandb.failure = Failure(night.wandb, delay=3.0) if night.wandb else None
        self.github.failure = night.github
        self.tally.failures.update(f"{s} {m}" for s, m in (("wandb", night.wandb),
                                                          ("github", night.github)) if m)
        try:
            if night.kill:
                self._killed_attempt(night)
            if night.concurrent:
                self._concurrent(night)
            if not (self.subject / "docs" / "data" / snapshot_id(night.as_of)).is_dir():
                self._snapshot(night)
        finally:
            self.wandb.failure, self.github.failure = None, None
        if night.build:
            self._build()
        self.tally.bytes_changed += check_night(self.subject, self.ledger, night.number)
        self.echo(f"night {night.number:2d}: wandb {night.wandb or 'ok'}, github "
                  f"{night.github or 'ok'}, kill {night.kill or '-'}, concurrent "
                  f"{night.concurrent or '-'}, build {'yes' if night.build else '-'}: ok")

    def _snapshot(self, night: Night) -> None:
        result = _cli("snapshot", "--dir", str(self.subject), "--as-of", night.stamp)
        self.tally.snapshots += 1
        want = 3 if night.wandb or night.github else 0
        assert result.exit_code == want, f"night {night.number}: {result.output}"

    def _killed_attempt(self, night: Night) -> None:
        args = ("snapshot", "--dir", str(self.subject), "--as-of", night.stamp)
        timer = night.kill == "timer"
        proc = cli_process(*args, kill_at=None if timer else night.kill, alone=True,
                           env=self.env)
        if timer:
            try:
                proc.wait(timeout=self.rng.uniform(0.3, 4.0))
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)  # the snapshot alone, as an OOM kill does
        out, _ = proc.communicate(timeout=300)
        if proc.returncode == -signal.SIGKILL:
            self.tally.kills += 1
            left = left_in_session(proc.pid)
            self.tally.left_running += [f"night {night.number}: {p.cmdline}" for p in left]
            if left:  # not to disturb the nights after: the check fails at the end
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        else:  # the timer fired after the snapshot had finished: a normal night
            assert proc.returncode in (0, 3), f"night {night.number}: {out}"
            self.tally.snapshots += 1
        if (self.subject / "docs" / "data" / snapshot_id(night.as_of)).is_dir() \
                and proc.returncode == -signal.SIGKILL:
            self.tally.killed_after_commit += 1

    def _concurrent(self, night: Night) -> None:
        snap = ("snapshot", "--dir", str(self.subject), "--as-of", night.stamp)
        other = snap if night.concurrent == "snapshot" else ("build", "--dir", str(self.subject))
        procs = [cli_process(*snap, env=self.env), cli_process(*other, env=self.env)]
        outs = [p.communicate(timeout=300)[0] for p in procs]
        self.tally.concurrent += 1
        codes = [p.returncode for p in procs]
        for code, out in zip(codes, outs, strict=True):
            assert code in (0, 2, 3), f"night {night.number}: exit {code}: {out}"
            if code == 2:
                assert "the store is locked by" in out or "not after the newest" in out \
                    or "already exists" in out, out
                self.tally.refused_busy += "the store is locked by" in out
        self.tally.snapshots += sum(1 for c in codes[: 1 + (night.concurrent == "snapshot")]
                                    if c in (0, 3))
        if night.concurrent == "build" and codes[1] == 0:
            self.tally.builds += 1

    def _build(self) -> None:
        built = _cli("build", "--dir", str(self.subject))
        assert built.exit_code == 0, built.output
        self.tally.builds += 1
        against = _cli("verify", "--dir", str(self.subject), "--against",
                       str(self.subject / "site"))
        assert against.exit_code == 0, against.output


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _scaffold(root: Path) -> None:
    assert _cli("init", str(root)).exit_code == 0
    data = yaml.safe_load((root / "chronicle.yml").read_text())
    data["run"]["start"] = "2026-08-20"
    data["run"].pop("example", None)  # the run values are set
    data["wandb"].update({"entity": "e", "project": "p", "runs": [HERO], "timeout_seconds": 1})
    data["github"] = {"repo": "marin-community/marin", "issues": [8506, 8453],
                      "labels": ["hero-run"], "failure_labels": ["incident"],
                      "max_rate_limit_wait_seconds": 1}
    data["sealing"] = {"max_wait_days": MAX_WAIT_DAYS}
    (root / "chronicle.yml").write_text(yaml.safe_dump(data))


def soak(nights: int, base: Path, seed: int, echo: Callable[[str], None] = print) -> Tally:
    """Run a soak of `nights` random nights (plus a clean last one) in `base`."""
    plan = plan_nights(nights, random.Random(seed))
    return Soak(base, seed, echo).run(plan)


def main_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.soak")
    parser.add_argument("--nights", type=int, default=35)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the chronicles here")
    args = parser.parse_args(argv)
    print(f"soak: {args.nights} nights, seed {args.seed}", flush=True)
    if args.keep:
        tally = soak(args.nights, args.keep, args.seed, echo=lambda s: print(s, flush=True))
    else:
        with tempfile.TemporaryDirectory(prefix="chronicle-soak-") as tmp:
            tally = soak(args.nights, Path(tmp), args.seed, echo=lambda s: print(s, flush=True))
    print(tally.report())
    return 0


if __name__ == "__main__":
    sys.exit(main_cli(sys.argv[1:]))
