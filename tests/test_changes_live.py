"""What the run changes, end to end on the live path: the real wandb and PyGithub clients
against fake servers on 127.0.0.1 serving the hero run's real config, a forked child with
a longer context and fewer steps, a mixture switch and merged pull requests; four nights of
`chronicle snapshot` (one with a failing PR listing), then `chronicle build`."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import feedparser
import pytest
import yaml
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.errors import EXIT_DEGRADED
from tests.support.fakes.github_server import FakeGithub
from tests.support.fakes.hero import HERO, SENTINEL, hero_config, hero_rows
from tests.support.fakes.wandb_server import FakeRun, FakeWandb
from tests.support.live import client_env
from tests.support.specs import all_rows

pytestmark = pytest.mark.integration  # nights end to end, against the fake servers

CHILD = "hero-child-16k"
T0 = datetime(2026, 8, 20, 2, 14, 1, tzinfo=UTC).timestamp()
FORK, PARENT_LAST, SWITCH, CHILD_LAST = 20_000, 20_500, 25_000, 30_000
CHILD_START = T0 + PARENT_LAST * 19.0 + 3600.0  # an hour after the parent's last row
NIGHTS = ("2026-08-22T03:17:00Z", "2026-08-25T03:17:00Z", "2026-08-27T03:17:00Z",
          "2026-08-31T03:17:00Z")
PULLS = "/repos/marin-community/marin/pulls"
BATCH, SEQ, STEPS, SHORTER = 11_264, 4096, 390_251, 100_000


def weights(stage: int) -> dict[str, float]:
    """The real run's mixture weights of `stage` (its config's train_weights)."""
    found = hero_config()["data"]["value"]["train_weights"][stage][1]
    return {f"mixture/weight/{k}": v for k, v in found.items()}


def rows(run: str) -> list[dict[str, Any]]:
    """History every 10 steps from the recorded rows' values: the parent at 19 s a step
    to PARENT_LAST, the child (rewound to FORK) at 38 s a step, 16K tokens a step."""
    base = [r for r in hero_rows() if r["_step"] > 0]
    out = []
    steps = range(0, PARENT_LAST + 1, 10) if run == HERO else range(FORK, CHILD_LAST, 10)
    for i, step in enumerate(steps):
        row = dict(base[i % len(base)])
        row["_step"] = step
        if run == HERO:
            row["_timestamp"] = T0 + step * 19.0
            row["throughput/total_tokens"] = (step + 1) * BATCH * SEQ
        else:
            row["_timestamp"] = CHILD_START + (step - FORK) * 38.0
            row["throughput/total_tokens"] = (FORK + 4 * (step - FORK + 1)) * BATCH * SEQ
            row["moe/drop_fraction"] = 3 * float(row["moe/drop_fraction"])
        out.append(row)
    out[0].update({"mixture/stage": 0, **weights(0)})  # logged at each (re)start
    if run == CHILD:
        at = (SWITCH - FORK) // 10
        out[at].update({"mixture/stage": 1, **weights(1)})
        out[at - 50]["mixture/stage"] = "NaN"  # a NaN stage is no switch
    return out


def child_config() -> dict[str, Any]:
    """The real config, forked: a 16K context, fewer steps, its own id and checkpoints."""
    cfg = copy.deepcopy(hero_config())
    cfg["model"]["value"]["max_seq_len"] = 4 * SEQ
    trainer = cfg["trainer"]["value"]["trainer"]
    trainer["num_train_steps"] = SHORTER
    trainer["id"] = CHILD
    ckpt = trainer["checkpointer"]
    ckpt["base_path"] = ckpt["base_path"].replace(HERO, CHILD)
    return cfg


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class World:
    root: Path
    outputs: list[Any]
    pull_requests: list[int]  # GitHub requests to the pulls endpoints, per night
    changes: dict[str, Any]  # the built site's api/changes.json


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("changes")
    with pytest.MonkeyPatch.context() as mp:
        client_env(tmp, mp)
        root = tmp / "c"
        runner = CliRunner()
        assert runner.invoke(main, ["init", str(root)]).exit_code == 0
        data = yaml.safe_load((root / "chronicle.yml").read_text())
        data["run"].update(start="2026-08-20", planned_days=12)
        data["run"].pop("example", None)  # the run values are set
        data["wandb"].update(entity="e", project="p", runs=[HERO, CHILD], timeout_seconds=2)
        data["github"] = {"repo": "marin-community/marin", "issues": [8506],
                          "labels": ["hero-run"], "failure_labels": ["incident"],
                          "max_rate_limit_wait_seconds": 1,
                          "pulls": {"paths": ["experiments/grug/moe_hero_ep/*"],
                                    "labels": ["hero-run"]}}
        (root / "chronicle.yml").write_text(yaml.safe_dump(data))
        with FakeGithub.from_fixture(pulls="marin-pulls.json") as gh, \
                FakeWandb(api_key=SENTINEL) as wb:
            mp.setenv("WANDB_BASE_URL", wb.url)
            mp.setenv("GITHUB_API_URL", gh.base_url)
            wb.add_run(FakeRun("e", "p", HERO, "2026-08-20T02:04:58Z", state="crashed",
                               config=hero_config(), rows=rows(HERO)))
            child = wb.add_run(FakeRun("e", "p", CHILD, iso(CHILD_START - 1800),
                                       config=child_config(), rows=rows(CHILD)))
            outputs, counts = [], []
            for night in NIGHTS:
                before = len(gh.requests)
                gh.failure = "500" if night == NIGHTS[2] else None
                gh.fail_path = "/pulls"
                if night == NIGHTS[3]:  # the running child's config is edited in place
                    child.config["optimizer"]["value"]["learning_rate"] = 0.002
                result = runner.invoke(main, ["snapshot", "--dir", str(root), "--as-of", night])
                outputs.append(result)
                counts.append(sum(1 for r in gh.requests[before:]
                                  if r.path.startswith(PULLS)))
        built = runner.invoke(main, ["build", "--dir", str(root)])
        assert built.exit_code == 0, built.output
        changes = json.loads((root / "site" / "api" / "changes.json").read_text())
        yield World(root, outputs, counts, changes)


def merged_step(when: str) -> int:
    """The run's last logged step at `when` (a PR's merge time)."""
    t = datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
    logged = [(r["_timestamp"], r["_step"]) for r in rows(HERO) if r["_step"] < FORK]
    logged += [(r["_timestamp"], r["_step"]) for r in rows(CHILD)]
    return max(step for ts, step in logged if ts <= t)


def test_exactly_the_expected_changes_at_the_right_steps(world: World) -> None:
    assert [o.exit_code for o in world.outputs] == [0, 0, EXIT_DEGRADED, 0]
    got = [(c["kind"], c["key"], c["step"], c["before"], c["after"])
           for c in world.changes["changes"]]
    first_after_n3 = min(r["_step"] for r in rows(CHILD) if r["_timestamp"] > datetime(
        2026, 8, 27, 3, 17, tzinfo=UTC).timestamp())
    implied = FORK * BATCH * SEQ + (SHORTER - FORK) * BATCH * 4 * SEQ
    assert got == [
        ("pull_request", "#8620", merged_step("2026-08-24T10:00:00Z"), None,
         "Hero: fork with a 16K context and a shorter schedule"),
        ("budget", "implied_budget", FORK, STEPS * BATCH * SEQ, implied),
        ("config", "trainer.trainer.num_train_steps", FORK, STEPS, SHORTER),
        ("sequence_length", "model.max_seq_len", FORK, SEQ, 4 * SEQ),
        ("pull_request", "#8625", merged_step("2026-08-26T09:30:00Z"), None,
         "Mixture stage 1 weights"),
        ("mixture", "mixture/stage", SWITCH, 0, 1),
        ("config", "optimizer.learning_rate", first_after_n3, 0.003290470163258143, 0.002),
    ]
    assert world.changes["budget"] == {"configured": 18.0e12, "implied": implied}
    assert world.changes["sequence_lengths"] == {HERO: SEQ, CHILD: 4 * SEQ}
    fork_day = world.changes["changes"][1]
    assert fork_day["day"] == "2026-08-24" and fork_day["parent"] == HERO
    assert fork_day["day_page"] == "https://example.org/chronicle/days/2026-08-24.html"


def test_evidence_names_stored_files_with_their_sha256(world: World) -> None:
    docs = world.root / "docs"
    for change in world.changes["changes"]:
        stored = [e for e in change["evidence"] if "path" in e]
        assert stored, change["id"]
        for e in stored:
            manifest = json.loads((docs / Path(e["path"]).parent / "MANIFEST.json").read_text())
            assert manifest["files"][Path(e["path"]).name]["sha256"] == e["sha256"]
    pr = world.changes["changes"][4]
    assert pr["recorded_by"] == "2026-08-31T031700Z"  # listed once GitHub answered again
    assert {"url": "https://github.com/marin-community/marin/pull/8625"} in pr["evidence"]


def test_a_failing_pr_listing_degrades_github_and_the_metrics_still_land(
        world: World) -> None:
    failed = world.outputs[2]
    assert "source github failed" in failed.output and "pull requests" in failed.output
    manifest = json.loads((world.root / "docs/data/2026-08-27T031700Z/MANIFEST.json")
                          .read_text())
    assert manifest["sources"]["wandb"]["status"] == "ok"
    assert manifest["sources"]["github"]["status"] == "failed"
    assert "metrics.parquet" in manifest["files"]
    assert "pulls.json" not in manifest["files"] and "threads.json" not in manifest["files"]
    assert CliRunner().invoke(main, ["verify", "--dir", str(world.root)]).exit_code == 0


def test_the_pr_listing_costs_a_few_requests_a_night(world: World) -> None:
    # Night 1: one listing page; night 2: a page + the files of 8620 and 8630 (merged in
    # the window); night 3 fails after retries; night 4: a page + the files of 8625.
    assert world.pull_requests[0] == 1
    assert world.pull_requests[1] == 3
    assert world.pull_requests[3] == 2


def test_sealed_days_carry_their_changes_and_sequence_lengths(world: World) -> None:
    days = world.root / "docs" / "days"
    fork = json.loads((days / "2026-08-24.json").read_text())
    assert [c["kind"] for c in fork["changes"]] == [
        "pull_request", "budget", "config", "sequence_length"]
    assert fork["sequence_length"] == [SEQ, 4 * SEQ]
    by_length = fork["moe"]["by_sequence_length"]
    assert set(by_length) == {"4096", "16384"}  # the sealed JSON sorts its keys
    assert by_length["16384"]["p50"] > by_length["4096"]["p50"]
    assert "sequence_length" in fork["provenance"]["figures"]
    # GitHub was down the night 2026-08-26 closed: the day waited for it (issue #14), so
    # it is sealed once GitHub answered again, with the PR merged that day (#8625).
    switch = json.loads((days / "2026-08-26.json").read_text())
    assert [c["kind"] for c in switch["changes"]] == ["pull_request", "mixture"]
    assert switch["sealed_by"] == "2026-08-31T031700Z"
    quiet = json.loads((days / "2026-08-21.json").read_text())
    assert quiet["changes"] == [] and quiet["sequence_length"] == [SEQ]
    page = (days / "2026-08-24.md").read_text()
    assert "## What changed" in page and "Context length 4,096 → 16,384" in page
    assert "No change to the configuration" in (days / "2026-08-21.md").read_text()


def test_changes_page_feed_and_markers(world: World) -> None:
    site = world.root / "site"
    page = (site / "changes.html").read_text()
    for c in world.changes["changes"]:
        assert f'id="{c["id"]}"' in page
    assert page.index("#8625") < page.index("#8620")  # newest first
    assert 'href="days/2026-08-24.html"' in page
    assert "https://github.com/marin-community/marin/pull/8620" in page
    # Each change is its sentence, which names its kind: no "Config: Config …" label.
    text = re.sub(r"<[^>]+>", "", page)
    for word in ("Config", "Pull request", "Context length", "Data-mixture stage"):
        assert f"{word}: {word}" not in text
    assert "Pull request #8620 merged" in text
    feed = feedparser.parse(str(site / "feed_changes.xml"))
    assert len(feed.entries) == len(world.changes["changes"])
    assert {e.id for e in feed.entries} == {
        f"https://example.org/chronicle/changes.html#{c['id']}"
        for c in world.changes["changes"]}
    jfeed = json.loads((site / "feed_changes.json").read_text())
    assert len(jfeed["items"]) == len(world.changes["changes"])
    assert "feed_changes.xml" in (site / "index.html").read_text()
    spec = json.loads((site / "charts" / "drop_fraction.vl.json").read_text())
    marks = [v for v in all_rows(spec) if isinstance(v, dict) and "kind" in v]
    assert {"context", "mixture", "budget"} <= {m["kind"] for m in marks}
    day = json.loads((world.root / "docs/days/2026-08-24/moe.vl.json").read_text())
    day_marks = [v for v in all_rows(day) if isinstance(v, dict) and "kind" in v]
    assert "context" in {m["kind"] for m in day_marks}
    throughput = (site / "throughput.html").read_text()
    assert "Token dropping by sequence length" in throughput
    assert (site / "watch" / "drop_by_sequence_length.vl.json").is_file()
