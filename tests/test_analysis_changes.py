"""What the run changes mid-flight (analysis/changes.py, run_config.py, mixture.py), from
stored run records, stage rows and pull requests shaped as the store holds them."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from chronicle.analysis.changes import ChangeInputs, RunChanges, run_changes
from chronicle.analysis.context_length import drop_by_length, in_effect
from chronicle.analysis.run_config import Segment, differences, implied_budget, lookup
from chronicle.analysis.series import build_series
from chronicle.models import PullRequest, RunRecord
from chronicle.store import rows_to_table
from tests.support.config import make_config
from tests.support.fakes.hero import hero_config

T0 = datetime(2026, 8, 20, 2, 14, tzinfo=UTC)
STEP_S = 19.0
BATCH, SEQ, STEPS = 11_264, 4096, 390_251


@dataclass(frozen=True)
class Snap:
    """A stored snapshot as a change cites it."""

    id: str
    taken_at: datetime
    files: dict[str, dict[str, Any]] = field(default_factory=dict)


def snap(day: int) -> Snap:
    when = T0.replace(hour=3, minute=17) + timedelta(days=day)
    sid = when.strftime("%Y-%m-%dT%H%M%SZ")
    names = ("runs.json", "pulls.json", "metrics.parquet")
    return Snap(sid, when, {n: {"sha256": f"{n}-{sid}", "size": 1} for n in names})


def unwrap(config: dict[str, Any]) -> dict[str, Any]:
    """The real config as the store keeps it: W&B's {"value": ...} removed, no _wandb."""
    return {k: v["value"] for k, v in config.items() if not k.startswith("_wandb")}


def real() -> dict[str, Any]:
    return unwrap(hero_config())


def row(run: str, step: int, offset: float = 0.0, **extra: Any) -> dict[str, Any]:
    return {"run": run, "step": step, "timestamp": T0.timestamp() + step * STEP_S + offset,
            "throughput/total_tokens": float((step + 1) * BATCH * SEQ),
            "moe/drop_fraction": 0.02, **extra}


def record(run: str, config: dict[str, Any], created: datetime,
           parent: str | None = None) -> RunRecord:
    return RunRecord(run, run, "running", created, None, config, {}, parent, None,
                     f"https://wandb.ai/e/p/runs/{run}")


def child_config(parent: str, child: str, **changes: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(real())
    cfg["model"]["max_seq_len"] = changes.get("seq", 16_384)
    cfg["trainer"]["trainer"]["num_train_steps"] = changes.get("steps", 100_000)
    # A forked run names itself: its id and checkpoint paths are not changes.
    trainer = cfg["trainer"]["trainer"]
    trainer["id"] = trainer["id"].replace(parent, child)
    ckpt = trainer["checkpointer"]
    ckpt["base_path"] = ckpt["base_path"].replace(parent, child)
    return cfg


def lineage(fork: int = 20_000) -> tuple[list[dict[str, Any]], list[RunRecord]]:
    parent, child = "hero-12d8b6f0-dee637", "hero-child"
    gap = 3600.0
    rows = [row(parent, s) for s in range(0, fork + 500, 10)]
    rows += [row(child, s, gap + 500 * STEP_S) for s in range(fork, fork + 5000, 10)]
    runs = [record(parent, real(), T0),
            record(child, child_config(parent, child),
                   T0 + timedelta(seconds=(fork + 500) * STEP_S + 1800), parent)]
    return rows, runs


def detect(rows: list[dict[str, Any]], history: list[tuple[Snap, list[RunRecord]]],
           stages: Any = (), pulls: Any = ()) -> RunChanges:
    config = make_config(source="live", wandb__runs=[r.id for r in history[-1][1]])
    series = build_series(rows_to_table(rows), history[-1][1], config)
    return run_changes(ChangeInputs(history, pulls, stages), series, config)


def by_kind(known: RunChanges) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in known.changes:
        out.setdefault(c["kind"], []).append(dict(c))
    return out


def test_real_config_paths_read_through_the_default_config_keys() -> None:
    config = make_config()
    cfg = real()
    assert lookup(cfg, config.wandb.config_keys["sequence_length"]) == SEQ
    assert lookup(cfg, config.wandb.config_keys["train_steps"]) == STEPS
    assert lookup(cfg, config.wandb.config_keys["batch_size"]) == BATCH
    # Still wrapped as W&B serves it: the same values.
    assert lookup(hero_config(), "trainer.trainer.num_train_steps") == STEPS
    seg = [Segment("r", 0, cfg)]
    assert implied_budget(seg, config) == STEPS * BATCH * SEQ  # ~18.0T: the "18T" run


def test_a_forked_child_with_longer_context_and_fewer_steps() -> None:
    rows, runs = lineage()
    known = detect(rows, [(snap(6), runs)])
    kinds = by_kind(known)
    assert sorted(kinds) == ["budget", "config", "sequence_length"]
    (ctx,) = kinds["sequence_length"]
    assert (ctx["before"], ctx["after"], ctx["step"]) == (4096, 16_384, 20_000)
    assert ctx["key"] == "model.max_seq_len" and ctx["run"] == "hero-child"
    assert ctx["parent"] == "hero-12d8b6f0-dee637"
    # The child's id and checkpoint paths name the run itself: not config changes.
    (steps,) = kinds["config"]
    assert (steps["key"], steps["name"]) == ("trainer.trainer.num_train_steps", "train_steps")
    assert (steps["before"], steps["after"], steps["step"]) == (STEPS, 100_000, 20_000)
    (budget,) = kinds["budget"]
    trained = 20_000 * BATCH * SEQ  # at 4K until the fork, then 80,000 steps at 16K
    assert budget["before"] == STEPS * BATCH * SEQ
    assert budget["after"] == trained + 80_000 * BATCH * 16_384 == known.implied_budget
    assert budget["step"] == 20_000
    assert math.isclose(budget["budget_fraction"], 19_991 * BATCH * SEQ / 18.0e12)
    fork_time = datetime.fromtimestamp(rows[[r["run"] for r in rows].index("hero-child")]
                                       ["timestamp"], UTC)
    assert ctx["time"] == fork_time.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ctx["evidence"][0] == {"path": f"data/{snap(6).id}/runs.json",
                                  "sha256": f"runs.json-{snap(6).id}"}
    assert ctx["recorded_by"] == snap(6).id
    assert known.sequence_lengths == {"hero-12d8b6f0-dee637": 4096, "hero-child": 16_384}


def test_ids_are_stable_when_found_again_by_later_snapshots() -> None:
    rows, runs = lineage()
    once = detect(rows, [(snap(6), runs)])
    again = detect(rows, [(snap(6), runs), (snap(7), runs), (snap(8), runs)])
    assert [c["id"] for c in once.changes] == [c["id"] for c in again.changes]
    assert [c["recorded_by"] for c in again.changes] == [snap(6).id] * len(again.changes)


def test_config_changed_between_two_snapshots_of_the_same_run() -> None:
    rows, runs = lineage()
    edited = copy.deepcopy(runs[1].config)
    edited["optimizer"]["learning_rate"] = 0.002
    later = [runs[0], record("hero-child", edited, runs[1].created_at, runs[0].id)]
    known = detect(rows, [(snap(5), runs), (snap(6), later)])
    (lr,) = [c for c in known.changes if c["key"] == "optimizer.learning_rate"]
    assert lr["kind"] == "config" and lr["detail"]["how"] == "update"
    assert lr["before"] == real()["optimizer"]["learning_rate"] and lr["after"] == 0.002
    # It applies from the first row the run logged after the earlier snapshot.
    first_after = min(r["step"] for r in rows if r["run"] == "hero-child"
                      and r["timestamp"] > snap(5).taken_at.timestamp())
    assert lr["step"] == first_after and lr["recorded_by"] == snap(6).id
    assert lr["id"].endswith(snap(6).id)


def test_unknown_config_path_is_unknown_never_zero() -> None:
    rows, runs = lineage()
    bare = copy.deepcopy(runs[1].config)
    del bare["model"]["max_seq_len"]
    runs = [runs[0], record("hero-child", bare, runs[1].created_at, runs[0].id)]
    known = detect(rows, [(snap(6), runs)])
    (ctx,) = by_kind(known)["sequence_length"]
    assert ctx["before"] == 4096 and ctx["after"] is None  # unknown: not 0, no crash
    # Without a sequence length for the child (run.sequence_length unset), the budget it
    # implies is unknown: no budget change, and the last known budget stands.
    assert "budget" not in by_kind(known)
    assert known.implied_budget == STEPS * BATCH * SEQ
    assert known.sequence_lengths["hero-child"] is None


def test_differences_skip_run_names_and_summarise_large_nodes() -> None:
    before = {"a": 1, "ckpt": "s3://b/run-1/ckpt",
              "big": {f"key{i}": 1000 * i for i in range(20)}, "list": list(range(100))}
    after = {"a": 2, "ckpt": "s3://b/run-2/ckpt",
             "big": {f"key{i}": 1000 * i + 1 for i in range(20)}, "list": list(range(101))}
    diffs = {d.path: d for d in differences(before, after, ("run-1", "run-2"))}
    assert sorted(diffs) == ["a", "big", "list"]
    assert diffs["big"].before == {"summary": "a mapping of 20 entries",
                                   "sha256": diffs["big"].before["sha256"]}
    assert diffs["list"].after["summary"] == "a list of 101 entries"


def stage_row(run: str, step: int, stage: float, **weights: float) -> dict[str, Any]:
    return row(run, step, **{"mixture/stage": stage},
               **{f"mixture/weight/{k}": v for k, v in weights.items()})


def test_mixture_switch_with_relogs_nan_and_gaps_makes_one_change() -> None:
    rows, runs = lineage()
    parent, child = runs[0].id, runs[1].id
    w0, w1 = real()["data"]["train_weights"][0][1], real()["data"]["train_weights"][1][1]
    stored = [
        (snap(1), [stage_row(parent, 0, 0, **w0)]),
        # The child logs its stage again after the restart: no switch.
        (snap(6), [stage_row(child, 20_000, 0, **w0),
                   stage_row(child, 21_000, math.nan)]),  # NaN: no switch either
        (snap(7), [stage_row(child, 24_000, 1, **w1)]),
        # A parent row superseded by the child does not count.
        (snap(6), [stage_row(parent, 20_100, 1, **w1)]),
    ]
    known = detect(rows, [(snap(7), runs)], stages=stored)
    (mix,) = by_kind(known)["mixture"]
    assert (mix["before"], mix["after"], mix["step"], mix["run"]) == (0, 1, 24_000, child)
    assert mix["evidence"] == [{"path": f"data/{snap(7).id}/metrics.parquet",
                                "sha256": f"metrics.parquet-{snap(7).id}"}]
    movers = mix["detail"]["movers"]
    assert len(movers) == 5
    deltas = [abs(m["after"] - m["before"]) for m in movers]
    assert deltas == sorted(deltas, reverse=True)
    every = {k: abs(w1.get(k, 0.0) - w0.get(k, 0.0)) for k in set(w0) | set(w1)}
    assert deltas[0] == max(every.values())


def test_merged_pulls_are_changes_once_at_the_runs_step() -> None:
    rows, runs = lineage()
    merged = T0 + timedelta(seconds=10_000 * STEP_S + 5)
    pr = PullRequest(8620, "Fork with a 16K context", "someone", merged,
                     "https://github.com/o/r/pull/8620", ("hero-run",), ("exp/launch.py",))
    known = detect(rows, [(snap(6), runs)], pulls=[(snap(1), [pr]), (snap(2), [pr])])
    (change,) = by_kind(known)["pull_request"]
    assert change["id"] == "pr-8620" and change["key"] == "#8620"
    assert change["step"] == 10_000 and change["recorded_by"] == snap(1).id
    assert change["evidence"][0] == {"url": "https://github.com/o/r/pull/8620"}
    assert change["detail"]["pull_request"]["files"] == ["exp/launch.py"]


def test_drop_fraction_by_sequence_length_of_the_run_that_logged_it() -> None:
    rows, runs = lineage()
    for r in rows:
        if r["run"] == "hero-child":
            r["moe/drop_fraction"] = 0.06
    config = make_config(source="live", wandb__runs=[r.id for r in runs])
    series = build_series(rows_to_table(rows), runs, config)
    lengths = {"hero-12d8b6f0-dee637": 4096, "hero-child": 16_384}
    table = drop_by_length(series, lengths, None)
    assert list(table) == ["4096", "16384"]
    assert table["4096"]["p50"] == 0.02 and table["16384"]["max"] == 0.06
    assert table["4096"]["rows"] + table["16384"]["rows"] == len(series)
    assert in_effect(series, lengths, None) == [4096, 16_384]
    unknown = drop_by_length(series, {"hero-child": 16_384}, None)
    assert list(unknown) == ["16384", "unknown"]  # no config and no fallback: unknown
    assert in_effect(series, {}, 4096) == [4096]  # run.sequence_length as the fallback
