"""The simulated run's pull requests (sources stage): one merged PR behind each config
change, plus PRs that must not count (a docs change, an abandoned and an open experiment).

Served as REST pull-request payloads through the same listing as the live source
(sources/pulls.py `collect_pulls`), as of any time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chronicle.models import iso
from chronicle.sources.simulated.metrics import SimulatedMetrics, utc
from chronicle.sources.simulated.plan import CONTEXT

PATH = "experiments/grug/moe_hero_ep"
LAUNCH = f"{PATH}/launch.py"
MIXTURE_FILE = f"{PATH}/mixture.py"
PEOPLE = ("ana-okafor", "tomas-reyes", "mei-lindqvist")


@dataclass(frozen=True)
class SimPull:
    """A pull request and its changed files; merged_at None: not merged."""

    number: int
    title: str
    author: str
    created: datetime
    closed: datetime | None
    merged: datetime | None
    labels: tuple[str, ...]
    files: tuple[str, ...]

    def payload(self, repo: str, as_of: datetime) -> dict[str, Any]:
        """Return the REST list item of the PR as it stood at `as_of`."""
        closed = self.closed if self.closed and self.closed <= as_of else None
        merged = self.merged if closed and self.merged else None
        return {
            "number": self.number, "title": self.title, "state": "closed" if closed else "open",
            "user": {"login": self.author, "type": "User"},
            "labels": [{"name": name} for name in self.labels],
            "created_at": iso(self.created), "updated_at": iso(closed or self.created),
            "closed_at": iso(closed), "merged_at": iso(merged),
            "html_url": f"https://github.com/{repo}/pull/{self.number}",
            "base": {"ref": "main"}, "head": {"ref": f"pr-{self.number}"},
        }


def build_pulls(sim: SimulatedMetrics, first_number: int, tracked: str) -> list[SimPull]:
    """Return the run's pull requests, oldest first: one per fork's change and per mixture
    stage, merged before they take effect, and three that are not changes."""
    rng = sim.rng
    plans: list[tuple[datetime, str, tuple[str, ...]]] = []
    for k, fork in enumerate(sim.forks):
        start = utc(sim.ts[fork.row])  # the parent's last row
        lead = timedelta(days=float(rng.uniform(0.6, 1.4))) if fork.planned else \
            (utc(sim.created[k + 1]) - start) * float(rng.uniform(0.2, 0.6))
        when = start - lead if fork.planned else start + lead
        files: tuple[str, ...] = (LAUNCH,)
        if any(path[0] == "model" for path, _ in fork.changes):
            files = (LAUNCH, f"{PATH}/model.py")
        plans.append((when, _title(fork.why), files))
    for stage, step in enumerate(sim.plan.mixture_steps, start=1):
        rows = [i for i, s in sim.mixture_rows.items() if s == stage]
        if rows:
            when = utc(sim.ts[min(rows)]) - timedelta(days=float(rng.uniform(2, 4)))
            plans.append((when, f"Mixture stage {stage} from step {step:,}", (MIXTURE_FILE,)))
    out = []
    number = first_number
    for when, title, files in sorted(plans):
        number += int(rng.integers(3, 40))
        opened = when - timedelta(hours=float(rng.uniform(3, 30)))
        out.append(SimPull(number, title, str(rng.choice(PEOPLE)), opened, when, when,
                           (tracked,), files))
    t0 = utc(sim.t0)
    for days, title, files, closed, merged in (
        (6, "Docs: how to read the hero-run dashboards", ("docs/hero-run.md",), 7, True),
        (30, f"Try {2 * CONTEXT[1]:,}-token context early (abandoned)", (LAUNCH,), 33, False),
        (60, "Sweep the z-loss weight on the ladder", (f"{PATH}/sweep.py",), None, False),
    ):
        number += int(rng.integers(3, 40))
        end = t0 + timedelta(days=closed) if closed is not None else None
        out.append(SimPull(number, title, str(rng.choice(PEOPLE)), t0 + timedelta(days=days),
                           end, end if merged else None, (), files))
    return sorted(out, key=lambda p: p.created)


def _title(why: str) -> str:
    return why[0].upper() + why[1:] if why else "Config change"


class PullPages:
    """The simulated PRs as the REST pulls endpoints list them at `as_of` (for
    sources/pulls.py `collect_pulls`): closed PRs newest-updated first, and their files."""

    def __init__(self, pulls: list[SimPull], repo: str, as_of: datetime) -> None:
        self.pulls, self.repo, self.as_of = pulls, repo, as_of

    def pages(self, url: str, params: dict[str, Any], what: str
              ) -> Iterator[Mapping[str, Any]]:
        if url.endswith("/files"):
            number = int(url.rsplit("/", 2)[-2])
            found = next(p for p in self.pulls if p.number == number)
            yield from ({"filename": name, "status": "modified"} for name in found.files)
            return
        items = [p.payload(self.repo, self.as_of) for p in self.pulls
                 if p.created <= self.as_of]
        items = [i for i in items if i["state"] == params.get("state", "open")]
        yield from sorted(items, key=lambda i: i["updated_at"], reverse=True)
