"""The simulated source: deterministic, calibrated, as-of correct, parsed by real parsers."""

from __future__ import annotations

import itertools
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronicle.config import parse_config
from chronicle.errors import SourceError
from chronicle.models import parse_time
from chronicle.sources.simulated import SimulatedRun, fetch_simulated
from tests.support.rows import as_rows


def _config_data(seed: int = 535, days: int = 100, **wandb: Any) -> dict[str, Any]:
    return {
        "source": "simulated",
        "run": {"name": "Sim 535B-A23B", "start": "2026-08-20", "planned_days": 100,
                "token_budget": 18.0e12, "sequence_length": 4096,
                "accelerators": {"kind": "GB200", "count": 704}},
        "wandb": {"entity": "sim", "project": "moe", **wandb},
        "github": {"repo": "sim-org/sim", "issues": [8435, 8506], "labels": ["hero-run"],
                   "failure_labels": ["incident"]},
        "simulated": {"seed": seed, "days": days},
        "site": {"url": "https://example.org/chronicle/"},
    }


def make_config(seed: int = 535, days: int = 100, **wandb: Any) -> Any:
    return parse_config(_config_data(seed, days, **wandb), Path("."))


@pytest.fixture(scope="module")
def sim() -> SimulatedRun:
    return SimulatedRun(make_config())


def all_rows(sim: SimulatedRun, as_of: datetime) -> dict[str, list[dict[str, Any]]]:
    return {n["name"]: list(sim.history(n["name"], 0, as_of)) for n in sim.run_nodes(as_of)}


def nights(sim: SimulatedRun) -> list[datetime]:
    first = datetime(2026, 8, 21, 0, 10, tzinfo=UTC)
    return [first + timedelta(days=d) for d in range((sim.end - first).days + 2)]


def test_same_seed_same_payloads_other_seed_differs() -> None:
    as_of = datetime(2026, 9, 3, tzinfo=UTC)

    def payloads(s: SimulatedRun) -> str:
        nodes = s.run_nodes(as_of)
        rows = list(s.history(nodes[0]["name"], 0, as_of))
        return json.dumps([nodes, rows, s.issues(None, as_of)], sort_keys=True)

    a, b = SimulatedRun(make_config(7)), SimulatedRun(make_config(7))
    assert payloads(a) == payloads(b)
    assert a.truth() == b.truth()
    assert payloads(SimulatedRun(make_config(8))) != payloads(a)


def test_gaps_in_telemetry_are_those_of_a_real_run(sim: SimulatedRun) -> None:
    # The hero run's history (tests/fixtures: its first 10.5 days) had 3-16 gaps longer
    # than 10 minutes a day in its first five days, then two in six days. A simulated run
    # with a gap every day made every day's health orange.
    rows = [r for rs in all_rows(sim, sim.end + timedelta(hours=1)).values() for r in rs]
    ts = np.sort(np.array([r["_timestamp"] for r in rows]))
    start = datetime(2026, 8, 20, tzinfo=UTC).timestamp()
    gap_days = (ts[:-1][np.diff(ts) > 600] - start) // 86400
    early = gap_days[gap_days < 5]
    later = np.unique(gap_days[gap_days >= 5])
    assert early.size >= 10  # a rough start
    days = int((ts[-1] - start) // 86400) - 5
    assert later.size <= days * 0.4, (later.size, days)  # most later days without one


def test_history_volume_and_step_time(sim: SimulatedRun) -> None:
    after = sim.end + timedelta(hours=1)
    rows = [r for rs in all_rows(sim, after).values() for r in rs
            if "train/loss" in r]
    # ~80 days at ~19 s/step, one row per 10 steps, then ~18 days of 16K-token steps
    # 5.1x as long, minus downtime: ~32-40k rows.
    assert 30_000 <= len(rows) <= 42_000
    # ~91 days of steps and a few of downtime: it ends before its 100 planned days.
    assert timedelta(days=91) < sim.end - datetime(2026, 8, 20, 2, 14, tzinfo=UTC) \
        < timedelta(days=97)
    step = np.array([r["_step"] for r in rows])
    ts = np.array([r["_timestamp"] for r in rows])
    per_step = np.diff(ts) / np.diff(step)
    ok = (np.diff(step) == 10) & (np.diff(ts) < 600)  # consecutive rows, no downtime
    assert 18.8 < float(np.median(per_step[ok])) < 20.0
    assert float(np.std(per_step[ok])) > 0.05  # jitter, not a metronome
    first = rows[0]
    assert first["_step"] == 0 and first["optim/learning_rate"] == 0
    assert type(first["optim/learning_rate"]) is int  # Go-style int, as W&B sends it
    assert 11.0 < first["train/loss"] < 12.5 and 0.08 < first["moe/drop_fraction"] < 0.12
    context = sim.plan.context_step
    late = [r for r in rows if 10_000 < r["_step"] < context]
    assert all(r["throughput/total_tokens"] == (r["_step"] + 1) * 11_264 * 4_096 for r in late)
    longer = [r for r in rows if r["_step"] > context]
    assert longer and all(r["throughput/total_tokens"] == (
        context + 4 * (r["_step"] - context + 1)) * 11_264 * 4_096 for r in longer)
    mfu = np.array([r["throughput/mfu"] for r in late])
    assert 19 < float(np.median(mfu)) < 27  # percent, not a fraction
    assert max(r["moe/drop_fraction"] for r in late if r["_step"] > 100) < 0.2
    entropy = np.array([r["train/router/routing_entropy_mean"] for r in late])
    assert 5.92 < float(np.median(entropy)) < 5.951


def test_nothing_after_as_of_is_visible(sim: SimulatedRun) -> None:
    for as_of in (datetime(2026, 8, 20, 1, tzinfo=UTC), datetime(2026, 8, 24, 13, tzinfo=UTC),
                  datetime(2026, 10, 1, 7, 30, tzinfo=UTC)):
        nodes = sim.run_nodes(as_of)
        for node in nodes:
            assert parse_time(node["createdAt"]) <= as_of  # type: ignore[operator]
            assert parse_time(node["heartbeatAt"]) <= as_of  # type: ignore[operator]
            for row in sim.history(node["name"], 0, as_of):
                assert row["_timestamp"] <= as_of.timestamp()
        for issue, comments in sim.issues(None, as_of):
            assert parse_time(issue["created_at"]) <= as_of  # type: ignore[operator]
            assert parse_time(issue["updated_at"]) <= as_of  # type: ignore[operator]
            assert issue["closed_at"] is None or parse_time(issue["closed_at"]) <= as_of  # type: ignore[operator]
            for c in comments:
                assert parse_time(c["updated_at"]) <= as_of  # type: ignore[operator]
    before = datetime(2026, 8, 20, 1, tzinfo=UTC)
    assert all(not list(sim.history(n["name"], 0, before)) for n in sim.run_nodes(before))
    assert [i["number"] for i, _ in sim.issues(None, before)] == [8435, 8506]
    later_runs = len(sim.run_nodes(sim.end))
    assert len(sim.run_nodes(datetime(2026, 8, 22, tzinfo=UTC))) < later_runs


def test_nightly_incremental_fetch_returns_each_row_once(sim: SimulatedRun) -> None:
    config = make_config()
    last: dict[str, int] = {}
    seen: list[tuple[str, int]] = []
    comment_ids: set[int] = set()
    since = None
    for as_of in nights(sim):
        fetched = fetch_simulated(config, last, since, as_of, sim=sim)
        for row in as_rows(fetched.metrics):
            seen.append((row["run"], row["step"]))
            last[row["run"]] = max(last.get(row["run"], -1), row["step"])
        for thread in fetched.threads or []:
            assert thread.updated_at > since if since else True
            comment_ids.update(c.id for c in thread.comments)
        since = as_of
    once = fetch_simulated(config, {}, None, nights(sim)[-1], sim=sim)
    everything = [(r["run"], r["step"]) for r in as_rows(once.metrics)]
    assert len(seen) == len(set(seen))  # nothing twice
    assert sorted(seen) == sorted(everything)  # nothing lost
    assert comment_ids == {c.id for t in once.threads or [] for c in t.comments}


def test_lineage_forks_overlap_and_config_changes(sim: SimulatedRun) -> None:
    after = sim.end + timedelta(hours=2)
    fetched = fetch_simulated(make_config(), {}, None, after, sim=sim)
    runs = fetched.runs or []
    truth = sim.truth()
    # 2-4 forks after outages, and the two planned ones (plan.py): the decision, the context.
    assert 5 <= len(runs) <= 7 and [r.id for r in runs] == truth["runs"]
    assert truth["planned_forks"] == [sim.plan.decision_step, sim.plan.context_step]
    assert runs[0].parent is None and runs[0].fork_step is None
    assert [r.state for r in runs] == ["crashed"] * (len(runs) - 1) + ["finished"]
    rows = all_rows(sim, after)
    for parent, child in itertools.pairwise(runs):
        assert child.parent == parent.id
        child_first = rows[child.id][0]["_step"]
        parent_last = rows[parent.id][-1]["_step"]
        assert child.fork_step == child_first
        if child_first in truth["planned_forks"]:  # a planned restart from that step
            assert parent_last == child_first - 10
        else:
            assert 100 <= parent_last - child_first <= 500  # rewound: a few hundred steps
        assert child.created_at.timestamp() > rows[parent.id][-1]["_timestamp"]
        assert child.config != parent.config
        assert (child.config["trainer"]["train_batch_size"]
                == parent.config["trainer"]["train_batch_size"] == 11_264)
    assert [r.fork_step for r in runs[1:]] == truth["fork_steps"]
    mid = datetime.fromtimestamp(rows[runs[0].id][100]["_timestamp"], UTC)
    assert [n["state"] for n in sim.run_nodes(mid)] == ["running"]


def test_payloads_parse_through_real_parsers(sim: SimulatedRun) -> None:
    as_of = datetime(2026, 8, 27, tzinfo=UTC)
    config = make_config(keys=["train/*", "throughput/*", "eval_dropless/*macro*"])
    fetched = fetch_simulated(config, {}, None, as_of, sim=sim)
    metrics = as_rows(fetched.metrics)
    default = as_rows(fetch_simulated(make_config(), {}, None, as_of, sim=sim).metrics)
    assert any("eval/paloma/macro_loss" in r for r in default)
    assert not any("eval/paloma/macro_loss" in r for r in metrics)  # not kept by this config
    assert metrics and all(isinstance(r["step"], int) for r in metrics)
    assert all(isinstance(v, float) for r in metrics for k, v in r.items() if k != "run"
               and k != "step")
    assert any("grad/norm/total" in r for r in metrics)  # mapped metrics are always kept
    assert metrics[0]["optim/learning_rate"] == 0.0
    statuses = {s.name: s for s in fetched.statuses}
    assert statuses["wandb"].ok and statuses["wandb"].detail["rows"] == len(metrics)
    assert statuses["github"].detail["threads"] == len(fetched.threads or [])
    assert fetched.failures == [] and not fetched.degraded
    labels = {label for t in fetched.threads or [] for label in t.labels}
    assert "hero-run" in labels
    with pytest.raises(SourceError, match="unknown W&B run"):
        list(sim.history("no-such-run", 0, datetime(2026, 9, 1, tzinfo=UTC)))


def stitched(sim: SimulatedRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Child replaces parent from its first step on: (step, timestamp, loss) train rows."""
    rows = all_rows(sim, sim.end + timedelta(hours=1))
    out: list[dict[str, Any]] = []
    for rid, fork in zip(sim.truth()["runs"], [*sim.truth()["fork_steps"], None], strict=True):
        out += [r for r in rows[rid] if "train/loss" in r and (fork is None or r["_step"] < fork)]
    loss = [float(r["train/loss"]) for r in out]  # "NaN" strings become nan
    return (np.array([r["_step"] for r in out]), np.array([r["_timestamp"] for r in out]),
            np.array(loss))


def test_gaps_spikes_and_nans_are_where_truth_says(sim: SimulatedRun) -> None:
    truth = sim.truth()
    step, ts, loss = stitched(sim)
    # A row every 10 steps, every 2 at 16K tokens (5x longer steps, rows still minutes apart).
    context = sim.plan.context_step
    assert np.all(np.diff(step) == np.where(step[1:] > context, 2, 10))
    assert float(np.median(np.diff(ts)[step[1:] > context])) < 600
    hours = [o["minutes"] / 60 for o in truth["outages"]]
    assert max(hours) > 3 and sum(h > 1 for h in hours) >= 3 and min(hours) < 0.5
    for o in truth["outages"]:
        lo, hi = o["start"].timestamp(), o["end"].timestamp()
        assert not np.any((ts > lo + 0.01) & (ts < hi - 0.01))  # nothing logged in a gap
    assert 3 <= len(truth["spike_steps"]) <= 4
    for s0 in truth["spike_steps"]:
        i = int(np.searchsorted(step, s0))
        before = loss[max(0, i - 30) : i]
        assert loss[i] > np.nanmedian(before) + 0.25
    assert truth["nan_steps"]
    for s in truth["nan_steps"]:
        assert math.isnan(loss[int(np.searchsorted(step, s))])
    assert np.isnan(loss).sum() == len(truth["nan_steps"])
    raw = [r for rs in all_rows(sim, sim.end).values() for r in rs if r["_step"] in
           truth["nan_steps"] and "train/loss" in r]
    assert raw and all(r["train/loss"] == "NaN" for r in raw)  # as W&B's JSON sends it


def test_evals_every_3000_steps_decay_toward_the_prediction(sim: SimulatedRun) -> None:
    rows = [r for rs in all_rows(sim, sim.end).values() for r in rs
            if "eval_dropless/paloma/macro_loss" in r]
    assert rows and all(r["_step"] % 3000 == 2999 for r in rows)
    assert "train/loss" not in rows[0]  # evals are rows of their own
    evals = np.array([r["eval_dropless/paloma/macro_loss"] for r in rows])
    assert evals[0] > 3.0 and abs(evals[-1] - 2.04) < 0.05
    step, _, loss = stitched(sim)
    train_at = loss[np.searchsorted(step, [r["_step"] for r in rows])]
    assert np.all(evals > train_at)


def test_incident_issues_follow_outages(sim: SimulatedRun) -> None:
    issues = sim.issues(None, sim.end + timedelta(days=2))
    incidents = [(i, c) for i, c in issues if "incident" in {x["name"] for x in i["labels"]}]
    assert 3 <= len(incidents) <= 6
    assert [i["number"] for i, _ in incidents] == sim.truth()["incidents"]
    majors = [o for o in sim.truth()["outages"] if o["major"]]
    for (issue, comments), outage in zip(incidents, majors, strict=True):
        opened, closed = parse_time(issue["created_at"]), parse_time(issue["closed_at"])
        assert opened and closed and issue["state"] == "closed"
        assert outage["start"] < opened < outage["end"] < closed
        assert {x["name"] for x in issue["labels"]} == {"incident", "hero-run"}
        assert comments and all(c["user"]["login"] for c in comments)
    status = next(c for i, c in issues if i["number"] == 8506)
    authors = {c["user"]["login"] for c in status if not c["user"]["login"].endswith("[bot]")}
    assert 2 <= len(authors) <= 3 and len(status) >= 75  # a comment most of its ~92 days


def test_bot_comment_is_edited_in_place(sim: SimulatedRun) -> None:
    def bot(as_of: datetime) -> dict[str, Any]:
        status = next(c for i, c in sim.issues(None, as_of) if i["number"] == 8506)
        return next(c for c in status if c["user"]["login"] == "marin-bot[bot]")

    early = bot(datetime(2026, 8, 23, 12, tzinfo=UTC))
    late = bot(datetime(2026, 8, 26, 12, tzinfo=UTC))
    assert early["id"] == late["id"] and early["created_at"] == late["created_at"]
    assert early["updated_at"] > early["created_at"] and late["updated_at"] > early["updated_at"]
    assert early["body"] != late["body"]
    for body in (early["body"], late["body"]):
        assert "<!-- status:start -->" in body and "<!-- status:end -->" in body
    # The thread shows up again on the night of an edit, even with no new comment.
    fetched = fetch_simulated(make_config(), {}, datetime(2026, 8, 25, 12, tzinfo=UTC),
                              datetime(2026, 8, 26, 12, tzinfo=UTC), sim=sim)
    assert 8506 in {t.number for t in fetched.threads or []}


def test_hostile_comment_is_there_to_be_sanitised(sim: SimulatedRun) -> None:
    bodies = [c["body"] for _, cs in sim.issues(None, sim.end) for c in cs]
    hostile = [b for b in bodies if "<script>" in b]
    assert len(hostile) == 1
    for needle in ("<script>alert(1)</script>", "javascript:", "{{ config }}", "{% raw %}",
                   "\n---\n"):
        assert needle in hostile[0]


def test_planned_changes_happen_at_marins_steps_scaled(sim: SimulatedRun) -> None:
    plan = sim.plan
    assert plan.planned == 390_139  # 18.0e12 / (11,264 x 4,096)
    # Marin's mixture switches at 108,000 and 312,192 of 390,251, scaled and on a logged row.
    assert plan.mixture_steps == (107_970, 312_100)
    assert plan.decision_step == 97_530 and plan.shortened == 386_238  # 99%, whole 16K steps
    assert plan.context_step == 319_910
    # A quarter of the remaining steps at 16K: the token budget stays.
    assert (plan.context_steps - plan.context_step) * 4 == plan.shortened - plan.context_step
    after = sim.end + timedelta(hours=2)
    runs = {r.id: r for r in fetch_simulated(make_config(), {}, None, after, sim=sim).runs or []}
    context = [r for r in runs.values() if r.fork_step == plan.context_step]
    assert context and context[0].config["model"]["max_seq_len"] == 16_384
    assert context[0].config["trainer"]["num_train_steps"] == plan.context_steps


def test_the_mixture_is_logged_at_each_start_and_switch(sim: SimulatedRun) -> None:
    rows = all_rows(sim, sim.end + timedelta(hours=1))
    logged = [(rid, r["_step"], r["mixture/stage"]) for rid, rs in rows.items() for r in rs
              if "mixture/stage" in r]
    firsts = {(rid, rs[0]["_step"]) for rid, rs in rows.items()}
    switches = [(step, stage) for rid, step, stage in logged if (rid, step) not in firsts]
    assert switches == [(107_970, 1), (312_100, 2)]
    assert {(rid, step) for rid, step, _ in logged} >= firsts  # re-logged after restarts
    first = rows[sim.run_ids[0]][0]
    assert first["mixture/stage"] == 0 and abs(sum(
        v for k, v in first.items() if k.startswith("mixture/weight/")) - 1.0) < 1e-9
    assert type(first["mixture/stage"]) is int


def test_dropping_rises_after_the_context_change(sim: SimulatedRun) -> None:
    drop = sim.values["moe/drop_fraction"]
    ctx = np.flatnonzero(sim.run == sim.context_run)
    before = np.flatnonzero((sim.run == sim.context_run - 1)
                            & (sim.ts > sim.ts[ctx[0]] - 86400))
    after = ctx[sim.ts[ctx] > sim.ts[ctx[0]] + 86400]
    assert float(np.median(drop[after])) > 2 * float(np.median(drop[before]))
    tps = sim.values["throughput/tokens_per_second"]
    assert float(np.median(tps[after])) > 2.0e6  # above the throughput alert


def test_pull_requests_explain_the_changes_and_three_do_not_count(sim: SimulatedRun) -> None:
    config = make_config()
    pulled = parse_config({**_config_data(), "github": {
        "repo": "sim-org/sim", "issues": [8435, 8506], "labels": ["hero-run"],
        "pulls": {"paths": ["experiments/grug/moe_hero_ep/*"], "labels": ["hero-run"]}}},
        Path("."))
    after = sim.end + timedelta(days=1)
    got = fetch_simulated(pulled, {}, None, after, sim=sim).pulls or []
    assert len(got) == len(sim.forks) + 2  # one per fork's change and per mixture stage
    assert len(sim.pulls) == len(got) + 3  # a docs PR, an abandoned and an open one
    titles = " ".join(p.title for p in got)
    assert "16,384" in titles and "Mixture stage 2" in titles and "first-quarter" in titles
    for fork in sim.forks:
        pr = next(p for p in got if p.title.lower().startswith(fork.why[:20].lower()))
        first = sim.ts[fork.row + 1]
        assert pr.merged_at.timestamp() < first  # merged before the child's first step
    assert fetch_simulated(config, {}, None, after, sim=sim).pulls is None  # not configured
    # Nothing merged after as_of is seen; a later window sees only what is new.
    mid = datetime(2026, 10, 1, tzinfo=UTC)
    early = fetch_simulated(pulled, {}, None, mid, sim=sim).pulls or []
    late = fetch_simulated(pulled, {}, None, after, sim=sim, pulls_since=mid).pulls or []
    assert early and late and {p.number for p in early}.isdisjoint({p.number for p in late})
    assert sorted(p.number for p in early + late) == sorted(p.number for p in got)
