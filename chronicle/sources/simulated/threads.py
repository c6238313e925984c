"""The simulated run's GitHub threads: invented people and prose, figures from the series.

Built once per simulated run (with each comment's edit history) and served as REST-shaped
issue and comment payloads as of any time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

import numpy as np

from chronicle.models import iso
from chronicle.sources.simulated.metrics import SimulatedMetrics, utc
from chronicle.sources.simulated.plan import BATCH_SEQUENCES


@dataclass
class SimComment:
    """A comment and every version of its body (edits in place)."""

    id: int
    author: str
    versions: list[tuple[datetime, str]]  # (time, body); the first is the creation
    reactions: dict[str, int] = field(default_factory=dict)


@dataclass
class SimIssue:
    """An issue of the simulated run, with its comments."""

    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    author: str
    created: datetime
    closed: datetime | None
    comments: list[SimComment] = field(default_factory=list)
    reactions: dict[str, int] = field(default_factory=dict)


def issue_payloads(issues: list[SimIssue], repo: str, since: datetime | None,
                   as_of: datetime) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """REST (issue, comments) payloads of the issues updated in (since, as_of]."""
    out = []
    for issue in issues:
        if issue.created > as_of:
            continue
        comments, updated = [], issue.created
        for c in issue.comments:
            seen = [v for v in c.versions if v[0] <= as_of]
            if not seen:
                continue
            # A comment edit counts as an update of the issue here, so that an
            # incremental (`since`) fetch picks up bot edits made in place.
            updated = max(updated, seen[-1][0])
            comments.append({
                "id": c.id, "user": {"login": c.author, "type": _kind(c.author)},
                "body": seen[-1][1], "created_at": iso(seen[0][0]),
                "updated_at": iso(seen[-1][0]),
                "html_url": f"{issue_url(repo, issue.number)}#issuecomment-{c.id}",
                "reactions": _reactions(c.reactions),
            })
        closed = issue.closed if issue.closed and issue.closed <= as_of else None
        updated = max(updated, closed or updated)
        if since is not None and updated <= since:
            continue
        out.append(({
            "number": issue.number, "title": issue.title, "body": issue.body,
            "state": "closed" if closed else "open",
            "labels": [{"name": name} for name in issue.labels],
            "user": {"login": issue.author, "type": "User"},
            "created_at": iso(issue.created), "updated_at": iso(updated),
            "closed_at": iso(closed), "html_url": issue_url(repo, issue.number),
            "comments": len(comments), "reactions": _reactions(issue.reactions),
        }, comments))
    return out


def issue_url(repo: str, number: int) -> str:
    """Return the html_url of issue `number` in `repo`."""
    return f"https://github.com/{repo}/issues/{number}"


def _kind(login: str) -> str:
    return "Bot" if login.endswith("[bot]") else "User"


def _reactions(counts: dict[str, int]) -> dict[str, Any]:
    keys = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
    out: dict[str, Any] = {k: int(counts.get(k, 0)) for k in keys}
    out["total_count"] = sum(out.values())
    return out


# -- Simulated GitHub threads (invented people and prose, figures from the series) -----

PEOPLE = ("ana-okafor", "tomas-reyes", "mei-lindqvist")
BOT = "marin-bot[bot]"
CAUSES = (
    "NCCL all-to-all hangs on rack {rack} after a link flap",
    "Checkpoint write to the object store timed out",
    "Host OOM on replica {rack} after a data-loader restart",
    "GB200 node in rack {rack} dropped off the fabric",
    "Coordinator lost its lease; all replicas restarted",
    "Preemption wave took out {rack} replicas at once",
)
HOSTILE = (
    "Love following this! Quick links: [live dashboard](javascript:alert(document.cookie))\n\n"
    "<script>alert(1)</script>\n\nCan the site show {{ config }} or {% raw %}{{ secrets }}"
    "{% endraw %} too?\n\n---\ntitle: injected\n---\n"
)


def _status_text(st: dict[str, Any], day: int) -> str:
    return (
        f"**Day {day} status.** Step {st['step']:,} ({st['progress']:.1%} of plan) on "
        f"`{st['run']}`. Train loss ~{st['loss']:.3f}, grad norm ~{st['grad']:.2f}, "
        f"MFU {st['mfu']:.1f}%, drop fraction {st['drop']:.2%}. "
        f"{st['tokens'] / 1e12:.2f}T tokens so far. Downtime in the last 24 h: "
        f"{st['down_hours']:.1f} h."
    )


def _bot_text(st: dict[str, Any]) -> str:
    return (
        "Automated status for the hero run; the section below is rewritten every day.\n\n"
        "<!-- status:start -->\n| metric | value |\n|---|---|\n"
        f"| as of | {iso(st['time'])} |\n| step | {st['step']:,} |\n"
        f"| train loss | {st['loss']:.4f} |\n| tokens | {st['tokens'] / 1e12:.3f}T |\n"
        f"| MFU | {st['mfu']:.1f}% |\n| downtime (24 h) | {st['down_hours']:.2f} h |\n"
        "<!-- status:end -->\n\nQuestions about this bot go to the infra channel."
    )


def _hours(sim: SimulatedMetrics, lo: float, hi: float) -> timedelta:
    return timedelta(hours=float(sim.rng.uniform(lo, hi)))


def build_issues(sim: SimulatedMetrics, numbers: tuple[int, ...], tracked: str,
                 failure_label: str) -> list[SimIssue]:
    """The run issue, the status thread and one incident issue per major outage."""
    # The order of the calls is the order of the random draws: keep it.
    run_no = numbers[0] if numbers else 8435
    status_no = numbers[1] if len(numbers) > 1 else 8506
    issues = [_run_issue(sim, run_no, status_no, tracked),
              _status_issue(sim, status_no, tracked)]
    number = max([*numbers, run_no, status_no, 9000]) + int(sim.rng.integers(20, 200))
    for r in sorted(sim.major):
        issues.append(_incident(sim, r, number, failure_label, tracked))
        number += int(sim.rng.integers(20, 200))
    everything = sorted((c for i in issues for c in i.comments), key=lambda c: c.versions[0][0])
    next_id = 4_200_000_000 + int(sim.rng.integers(0, 10**6))
    for c in everything:
        c.id = next_id
        next_id += int(sim.rng.integers(1, 5000))
    return issues


def _run_issue(sim: SimulatedMetrics, run_no: int, status_no: int, tracked: str) -> SimIssue:
    """The run's tracking issue: its plan, the launch, a hostile visitor, every fork."""
    cfg, t0 = sim.config, utc(sim.t0)
    issue = SimIssue(
        run_no, f"[Hero Run] {cfg.run.name} on {cfg.run.token_budget / 1e12:.0f}T tokens",
        f"Tracking issue for the {cfg.run.name} pretraining run.\n\n"
        f"- plan: {sim.planned:,} steps x {BATCH_SEQUENCES:,} sequences x "
        f"{sim.tokens_per_step // BATCH_SEQUENCES:,} tokens\n"
        f"- hardware: {cfg.run.accelerators.count} x {cfg.run.accelerators.kind}\n"
        f"- expected duration: ~{cfg.run.planned_days} days\n\n"
        "Failures get their own issue with the incident label; daily numbers go to the "
        f"status thread #{status_no}.",
        (tracked, "pre-training"), PEOPLE[0], t0 - timedelta(days=2), None,
        reactions={"+1": 41, "rocket": 17, "heart": 6, "eyes": 3})
    issue.comments.append(SimComment(0, PEOPLE[0], [(t0 + _hours(sim, 0.5, 0.8),
        f"Launched: step 0 logged at {iso(t0)} in `{sim.run_ids[0]}`.")], {"hooray": 12}))
    issue.comments.append(SimComment(0, "curious-visitor-42",
                                     [(t0 + _hours(sim, 60, 80), HOSTILE)]))
    for k, fstep in enumerate(sim.fork_steps):
        when = utc(sim.created[k + 1]) + _hours(sim, 0.2, 0.5)
        fork = sim.forks[k]
        rewound = (f"{fork.rewind} steps rewound to the last checkpoint" if fork.rewind
                   else "a planned restart from a checkpoint at that step")
        issue.comments.append(SimComment(0, PEOPLE[1], [(when,
            f"Forked `{sim.run_ids[k]}` at step {fstep:,} into `{sim.run_ids[k + 1]}` "
            f"({rewound}). Config change: {fork.why}.")]))
    return issue


def _status_issue(sim: SimulatedMetrics, status_no: int, tracked: str) -> SimIssue:
    """The daily status thread: people's comments and a bot comment edited in place."""
    cfg, t0, end, rng = sim.config, utc(sim.t0), sim.end, sim.rng
    status = SimIssue(status_no, f"{cfg.run.name}: daily status", "One comment a day with the "
                      "run's numbers; the bot keeps a live table in its comment.",
                      (tracked,), PEOPLE[0], t0 - timedelta(days=1), None)
    edits = []
    day0 = datetime.combine(t0.date(), time(6, 0), tzinfo=UTC)
    for d in range(cfg.simulated.days + 1):
        when = day0 + timedelta(days=d) + timedelta(seconds=float(rng.uniform(0, 900)))
        if t0 + timedelta(hours=3) < when <= end + timedelta(days=1):
            edits.append((when, _bot_text(state_at(sim, when.timestamp()))))
        post = day0 + timedelta(days=d) + _hours(sim, 8, 16)
        if rng.random() < 0.88 and t0 < post <= end:
            status.comments.append(SimComment(0, str(rng.choice(PEOPLE)), [(post, _status_text(
                state_at(sim, post.timestamp()), d + 1))]))
    first = t0 + timedelta(hours=3)
    bot_first = (first, _bot_text(state_at(sim, first.timestamp())))
    status.comments.append(SimComment(0, BOT, [bot_first, *edits]))
    return status


def _incident(sim: SimulatedMetrics, r: int, number: int, failure_label: str,
              tracked: str) -> SimIssue:
    """The incident issue of the major outage starting at row `r`."""
    rng = sim.rng
    start, back = utc(sim.ts[r]), utc(sim.ts[r + 1])
    opened, closed = start + _hours(sim, 0.15, 0.6), back + _hours(sim, 1, 6)
    title = str(rng.choice(CAUSES)).format(rack=int(rng.integers(1, 12)))
    inc = SimIssue(number, title,
                   f"Training stopped after step {int(sim.step[r]):,} ({iso(start)}). "
                   "Investigating.", (failure_label, tracked), PEOPLE[1], opened, closed)
    inc.comments.append(SimComment(0, PEOPLE[2], [(opened + _hours(sim, 0.1, 0.4),
        "Confirmed from the logs; replicas are being drained and restarted.")]))
    resumed = f"Training resumed at {iso(back)} at step {int(sim.step[r + 1]):,}"
    if r in sim.fork_rows:
        resumed += f" in the new W&B run `{sim.run_ids[int(sim.run[r + 1])]}` (rewound)"
    inc.comments.append(SimComment(0, PEOPLE[1],
                                   [(back + _hours(sim, 0.05, 0.3), resumed + ".")]))
    inc.comments.append(SimComment(0, PEOPLE[0], [(closed, "Stable since; closing.")]))
    return inc


def state_at(sim: SimulatedMetrics, when: float) -> dict[str, Any]:
    """The stitched run's latest figures at epoch `when` (for thread text)."""
    i = max(0, int(np.searchsorted(sim.ts, when, side="right")) - 1)
    lo = max(0, i - 5)
    window = sim.values["train/loss"][lo : i + 1]
    down = sum(min(float(sim.ts[r + 1]), when) - max(float(sim.ts[r]), when - 86400)
               for r in sim.gap_rows if sim.ts[r] < when and sim.ts[r + 1] > when - 86400)
    return {"step": int(sim.step[i]), "time": utc(sim.ts[i]),
            "loss": float(np.nanmean(window)) if np.isfinite(window).any() else math.nan,
            "run": sim.run_ids[int(sim.run[i])],
            "tokens": float(sim.values["throughput/total_tokens"][i]),
            "mfu": float(sim.values["throughput/mfu"][i]),
            "drop": float(sim.values["moe/drop_fraction"][i]),
            "grad": float(np.nanmedian(sim.values["grad/norm/total"][lo : i + 1])),
            "progress": float(sim.step[i]) / sim.planned, "down_hours": down / 3600}
