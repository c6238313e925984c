"""Simulated source (sources stage): a seeded MoE run that emits raw W&B and GitHub payloads.

metrics.py generates the W&B side once (vectorised, numpy) and slices it per call, so a
demo can take a snapshot per simulated night cheaply; threads.py writes the GitHub side
from it. Payloads have the shapes the real APIs return (GraphQL run nodes, `scan_history`
rows, REST issue/comment JSON) and go through the same `parse_*` functions as the live
source.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chronicle.config import RunConfig
from chronicle.models import Fetched, SourceStatus
from chronicle.sources.github import parse_thread
from chronicle.sources.simulated.metrics import EVAL_KEYS, TRAIN_KEYS, SimulatedMetrics
from chronicle.sources.simulated.threads import build_issues, issue_payloads
from chronicle.sources.wandb import parse_history_row, parse_run


class SimulatedRun(SimulatedMetrics):
    """A deterministic simulated run: W&B lineage, history rows and GitHub threads."""

    def __init__(self, config: RunConfig) -> None:
        super().__init__(config)
        # After the metrics: the threads draw from the same random stream.
        self._threads()

    def truth(self) -> dict[str, Any]:
        """Injected facts for tests: outages, spikes, NaNs, forks, run ids, incident issues."""
        return {**super().truth(),
                "incidents": [i.number for i in self._issues if self.failure_label in i.labels]}

    # -- GitHub ------------------------------------------------------------------------

    def _threads(self) -> None:
        """Build every issue and comment (with edit history) once."""
        gh = self.config.github
        self.failure_label = gh.failure_labels[0] if gh.failure_labels else "incident"
        tracked = gh.labels[0] if gh.labels else "hero-run"
        self._issues = build_issues(self, gh.issues, tracked, self.failure_label)

    def issues(self, since: datetime | None,
               as_of: datetime) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """REST (issue, comments) payloads of issues updated in (since, as_of]."""
        return issue_payloads(self._issues, self.config.github.repo, since, as_of)


def fetch_simulated(config: RunConfig, last_steps: dict[str, int], since: datetime | None,
                    as_of: datetime, sim: SimulatedRun | None = None) -> Fetched:
    """Fetch what the simulated run shows at `as_of`, through the real parsers."""
    sim = sim or SimulatedRun(config)
    keys = frozenset(k for k in TRAIN_KEYS + EVAL_KEYS if config.wandb.keeps(k))
    nodes = sim.run_nodes(as_of)
    runs, metrics = [], []
    for k, node in enumerate(nodes):
        rid = str(node["name"])
        parent = str(nodes[k - 1]["name"]) if k else None
        url = f"https://wandb.ai/{config.wandb.entity}/{config.wandb.project}/runs/{rid}"
        runs.append(parse_run(node, parent=parent,
                              fork_step=sim.fork_steps[k - 1] if k else None, url=url))
        for raw in sim.history(rid, last_steps.get(rid, -1) + 1, as_of):
            row = parse_history_row(rid, raw, keys)
            if row is not None:
                metrics.append(row)
    threads = [parse_thread(issue, comments) for issue, comments in sim.issues(since, as_of)]
    statuses = (SourceStatus("wandb", True, detail={"rows": len(metrics), "runs": len(runs)}),
                SourceStatus("github", True, detail={"threads": len(threads)}))
    return Fetched(metrics=metrics, runs=runs, threads=threads, failures=[], statuses=statuses)
