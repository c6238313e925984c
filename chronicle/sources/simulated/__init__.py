"""Simulated source (sources stage): a seeded MoE run that emits raw W&B and GitHub payloads.

metrics.py generates the W&B side once (vectorised, numpy; plan.py: its planned changes)
and wandb_payloads.py slices it per call, so a demo can take a snapshot per simulated
night cheaply; threads.py and pulls.py write the GitHub side from it. Payloads have the
shapes the real APIs return (GraphQL run nodes, `scan_history` rows, REST issue, comment
and pull-request JSON) and go through the same `parse_*` functions as the live source.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

import numpy as np

from chronicle.config import RunConfig
from chronicle.models import Fetched, SourceStatus
from chronicle.sources.github import parse_thread
from chronicle.sources.history import HistoryTable, RowBounds
from chronicle.sources.pulls import collect_pulls
from chronicle.sources.simulated.metrics import EVAL_KEYS, TRAIN_KEYS, utc
from chronicle.sources.simulated.plan import MIXTURE_KEYS
from chronicle.sources.simulated.pulls import PullPages, build_pulls
from chronicle.sources.simulated.threads import build_issues, issue_payloads
from chronicle.sources.simulated.wandb_payloads import SimulatedWandb
from chronicle.sources.wandb import parse_run


class SimulatedRun(SimulatedWandb):
    """A deterministic simulated run: W&B lineage, history rows and GitHub threads."""

    def __init__(self, config: RunConfig) -> None:
        super().__init__(config)
        # After the metrics: the threads draw from the same random stream.
        self._threads()

    def truth(self) -> dict[str, Any]:
        """Injected facts for tests: outages, spikes, NaNs, forks, run ids, incident issues."""
        outages = [{"start": utc(self.ts[r]), "end": utc(self.ts[r + 1]),
                    "minutes": float(self.ts[r + 1] - self.ts[r]) / 60,
                    "major": int(r) in self.major, "fork": bool(np.isin(r, self.fork_rows))}
                   for r in self.gap_rows]
        return {
            "runs": list(self.run_ids), "fork_steps": list(self.fork_steps),
            "planned_forks": [s for s, f in zip(self.fork_steps, self.forks, strict=True)
                              if f.planned],
            "rewinds": [int(r) for r in self.rewinds], "outages": outages,
            "spike_steps": list(self.spike_steps),
            "nan_steps": [int(self.step[r]) for r in self.nan_rows],
            "rows": int(self.step.size), "evals": int(self.ev_step.size),
            "incidents": [i.number for i in self._issues if self.failure_label in i.labels],
        }

    # -- GitHub ------------------------------------------------------------------------

    def _threads(self) -> None:
        """Build every issue and comment (with edit history) once."""
        gh = self.config.github
        self.failure_label = gh.failure_labels[0] if gh.failure_labels else "incident"
        tracked = gh.labels[0] if gh.labels else "hero-run"
        self._issues = build_issues(self, gh.issues, tracked, self.failure_label)
        # After the issues: PRs share their number space and draw from the same stream.
        self.pulls = build_pulls(self, max(i.number for i in self._issues), tracked)

    def issues(self, since: datetime | None,
               as_of: datetime) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """REST (issue, comments) payloads of issues updated in (since, as_of]."""
        return issue_payloads(self._issues, self.config.github.repo, since, as_of)


def fetch_simulated(config: RunConfig, last_steps: dict[str, int], since: datetime | None,
                    as_of: datetime, sim: SimulatedRun | None = None,
                    pulls_since: datetime | None = None) -> Fetched:
    """Fetch what the simulated run shows at `as_of`, through the real parsers (and, when
    `github.pulls` is configured, the PRs merged since `pulls_since`, else since the start)."""
    sim = sim or SimulatedRun(config)
    keys = frozenset(k for k in TRAIN_KEYS + EVAL_KEYS + MIXTURE_KEYS if config.wandb.keeps(k))
    nodes = sim.run_nodes(as_of)
    runs = []
    # The simulated clock is `as_of`: no row of it is later than the snapshot.
    history = HistoryTable(keys.__contains__, RowBounds.of_run(config.run.start, as_of),
                           as_of.timestamp())
    for k, node in enumerate(nodes):
        rid = str(node["name"])
        parent = str(nodes[k - 1]["name"]) if k else None
        url = f"https://wandb.ai/{config.wandb.entity}/{config.wandb.project}/runs/{rid}"
        runs.append(parse_run(node, parent=parent,
                              fork_step=sim.fork_steps[k - 1] if k else None, url=url))
        first = last_steps.get(rid, -1) + 1
        history.add(rid, sim.history(rid, first, as_of), first)
    metrics = history.table()
    threads = [parse_thread(issue, comments) for issue, comments in sim.issues(since, as_of)]
    github: dict[str, Any] = {"threads": len(threads)}
    pulls = None
    wanted = config.github.pulls
    if wanted.configured:
        start = datetime.combine(config.run.start, time(0), tzinfo=UTC)
        pulls, looked = collect_pulls(PullPages(sim.pulls, config.github.repo, as_of),
                                      config.github.repo, wanted.paths, wanted.labels,
                                      pulls_since or start, as_of)
        github.update(pulls=len(pulls), pulls_looked_at=looked)
    statuses = (SourceStatus("wandb", True, detail={"rows": history.good, "runs": len(runs)}),
                SourceStatus("github", True, detail=github))
    return Fetched(metrics=metrics, runs=runs, threads=threads, failures=[], statuses=statuses,
                   pulls=pulls)
