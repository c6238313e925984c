"""The world the nightly rehearsal runs against: a night plan, and the fake W&B and GitHub
servers' state for each night (history rows that grow, threads that change)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from tests.support.fakes.github_server import FakeGithub
from tests.support.fakes.wandb_server import Failure, FakeRun, FakeWandb
from tests.support.paths import FIXTURES

RUN = "hero-12d8b6f0-dee637"
ENTITY, PROJECT = "marin-community", "marin_moe"
START = date(2026, 8, 20)  # day 1: the hero run's first history row is 2026-08-20T02:14Z
NIGHTLY = time(3, 17, tzinfo=UTC)  # the workflow's cron time
FAIL_NIGHT, QUIET_NIGHT, KILL_NIGHT = 3, 4, 2
PUSH_NIGHT = 4  # a maintainer pushes while the job runs: its push must rebase, not force
MAINTAINER_SUBJECT = "notes: who to ask about the run"
MIN_NIGHTS = 5  # night 5 proves the rows missed on nights 3-4 arrive, once each
EDITED_ISSUE = 8453  # a tracked issue whose second comment is edited on night 2
EDIT_BODY = "Edited on night 2 of the rehearsal: the data mix question moved to 8506."
# Keys that only ever grow in a real run: continued past the fixture's rows from its rate.
TOKENS_PER_STEP = 46137344.0
STEPS_PER_ROW = 10
PLANNED_STEPS = 390251


@dataclass(frozen=True)
class Night:
    """One night of the rehearsal: when it runs and what the fake servers do."""

    number: int
    as_of: datetime
    wandb_until: datetime  # history rows logged up to here are on the W&B server
    wandb_fails: bool  # W&B answers 500 to everything
    github_now: datetime  # GitHub's world as it stood then (World keeps night 4 quiet)
    interrupted_first: bool  # a first attempt is killed halfway, then the night reruns
    maintainer_push: bool  # someone else pushes to the branch while the job runs
    # The days this night's snapshot seals: none while W&B fails (the day waits), then
    # every waiting day at once on the next night W&B answers.
    seals: tuple[str, ...] = ()

    @property
    def stamp(self) -> str:
        """The night's time as the workflow's as_of input takes it."""
        return self.as_of.strftime("%Y-%m-%dT%H:%M:%SZ")

    @property
    def story(self) -> str:
        if self.wandb_fails:
            return "W&B answers 500"
        if self.number == QUIET_NIGHT:
            return "no new data on either source" + (
                "; a maintainer pushes meanwhile" if self.maintainer_push else "")
        if self.number == KILL_NIGHT:
            return "first attempt killed halfway, then rerun"
        return "normal"


def night_time(n: int) -> datetime:
    """Return when night `n` runs: 03:17 UTC on the morning after day `n`."""
    return datetime.combine(START + timedelta(days=n), NIGHTLY)


def night_plan(nights: int) -> list[Night]:
    """Return the plan: normal nights, a killed attempt, a W&B outage, a quiet night
    during which a maintainer pushes."""
    if nights < MIN_NIGHTS:
        raise ValueError(f"the rehearsal needs at least {MIN_NIGHTS} nights, got {nights}")
    plan = []
    waiting: list[str] = []
    for n in range(1, nights + 1):
        waiting.append((night_time(n).date() - timedelta(days=1)).isoformat())
        seals = () if n == FAIL_NIGHT else tuple(waiting)
        waiting = waiting if n == FAIL_NIGHT else []
        # W&B's ingestion stalls from night 3 to night 4 (the run's client buffers its
        # rows) and on night 3 its API answers 500 too; night 5 gets every buffered row.
        stalled = n in (FAIL_NIGHT, QUIET_NIGHT)
        plan.append(Night(
            number=n,
            as_of=night_time(n),
            wandb_until=night_time(FAIL_NIGHT - 1) if stalled else night_time(n),
            wandb_fails=n == FAIL_NIGHT,
            github_now=night_time(n),
            interrupted_first=n == KILL_NIGHT,
            maintainer_push=n == PUSH_NIGHT,
            seals=seals,
        ))
    return plan


def history_rows(until: datetime) -> list[dict[str, Any]]:
    """Return the run's history rows logged up to `until`, oldest first.

    The recorded fixture rows come first, as logged; later rows repeat the last 100
    recorded rows' values at the recorded pace, with steps, tokens and progress growing.
    """
    lines = (FIXTURES / "wandb" / f"{RUN}.history.jsonl").read_text(encoding="utf-8")
    base = [json.loads(line) for line in lines.splitlines()]
    pace = (base[-1]["_timestamp"] - base[0]["_timestamp"]) / (len(base) - 1)
    cutoff = until.timestamp()
    rows: list[dict[str, Any]] = []
    i = 0
    while True:
        if i < len(base):
            row = dict(base[i])
        else:
            row = dict(base[len(base) - 100 + (i - len(base)) % 100])
            step = i * STEPS_PER_ROW
            row["_step"] = step
            row["_timestamp"] = base[-1]["_timestamp"] + (i - len(base) + 1) * pace
            row["throughput/total_tokens"] = (step + 1) * TOKENS_PER_STEP
            row["run_progress"] = step / PLANNED_STEPS
        if row["_timestamp"] > cutoff:
            return rows
        rows.append(row)
        i += 1


class World:
    """The fake W&B and GitHub servers (started by `with`), set up night by night."""

    def __init__(self, api_key: str) -> None:
        self.wandb = FakeWandb(api_key=api_key)
        self.github = FakeGithub.from_fixture()
        node = json.loads((FIXTURES / "wandb" / f"{RUN}.run.json").read_text(encoding="utf-8"))
        self.run = self.wandb.add_run(FakeRun(
            entity=ENTITY, project=PROJECT, name=RUN, created_at=node["createdAt"],
            state=node["state"], heartbeat_at=node["heartbeatAt"], config=node["config"],
            summary=node["summaryMetrics"],
        ))
        self._edit_comment()
        self._quiet_before(night_time(QUIET_NIGHT))

    def _edit_comment(self) -> None:
        """Edit an old comment of a tracked issue during night 2's window (no new comment)."""
        issue = next(i for i in self.github.world["issues"] if i["number"] == EDITED_ISSUE)
        comment = issue["comments"][1]
        at = (night_time(KILL_NIGHT) - timedelta(hours=15)).strftime("%Y-%m-%dT%H:%M:%SZ")
        comment["versions"] = [*copy.deepcopy(comment["versions"]), {"at": at, "body": EDIT_BODY}]

    def _quiet_before(self, night: datetime) -> None:
        """Move the GitHub activity of the day before `night` one day later (a quiet day)."""
        since = night - timedelta(days=1)

        def later(text: str | None) -> str | None:
            when = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
            if when is None or not since < when <= night:
                return text
            return (when + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")

        for issue in self.github.world["issues"]:
            issue["created_at"], issue["closed_at"] = (
                later(issue["created_at"]), later(issue.get("closed_at")))
            for comment in issue.get("comments", []):
                comment["created_at"] = later(comment["created_at"])
                comment["versions"] = sorted(
                    ({**v, "at": later(v["at"])} for v in comment["versions"]),
                    key=lambda v: v["at"])
            issue["comments"] = sorted(issue.get("comments", []), key=lambda c: c["created_at"])

    def __enter__(self) -> World:
        self.wandb.start()
        self.github.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.github.__exit__(*exc)
        self.wandb.stop()

    def set_night(self, night: Night) -> None:
        """Put both servers in the state they have on `night`."""
        self.run.rows = history_rows(night.wandb_until)
        self.run.heartbeat_at = night.wandb_until.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.wandb.failure = Failure("500") if night.wandb_fails else None
        self.github.now = night.github_now

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        """Return an issue's comments as the GitHub server shows them now."""
        issue = next(i for i in self.github.world["issues"] if i["number"] == number)
        return self.github.comments_of(issue)
