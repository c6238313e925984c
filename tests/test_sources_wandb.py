"""The live W&B fetcher: the real wandb client (wandb-core) against a fake GraphQL server."""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import resource
import subprocess
import sys
import time
import traceback
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chronicle.errors import SourceError
from chronicle.sources.wandb import PAGE_SIZE, WandbFetch, fetch_wandb
from tests.support.config import make_config
from tests.support.fakes.hero import HERO, SENTINEL, add_run, hero_node, hero_rows
from tests.support.fakes.wandb_server import Failure, FakeWandb, SyntheticRows
from tests.support.rows import as_rows

CHILD = "hero-12d8b6f0-rewind"
END = datetime(2026, 12, 1, tzinfo=UTC)


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def fetch(runs: list[str] | None = None, last_steps: dict[str, int] | None = None,
          as_of: datetime = END, api_key: str | None = None, **wandb: Any) -> WandbFetch:
    settings = {"runs": [HERO] if runs is None else runs, "timeout_seconds": 2, **wandb}
    config = make_config(Path("."), source="live",
                         **{f"wandb__{k}": v for k, v in settings.items()})
    return fetch_wandb(config, last_steps or {}, as_of, api_key=api_key)


def rows_of(result: WandbFetch) -> list[dict[str, Any]]:
    return as_rows(result.rows)


def steps_of(result: WandbFetch, run: str = HERO) -> list[int]:
    return [r["step"] for r in rows_of(result) if r["run"] == run]


def last_steps_of(rows: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        out[row["run"]] = max(out.get(row["run"], -1), row["step"])
    return out


@pytest.fixture
def wandb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("WANDB_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        monkeypatch.setenv(name, str(folder))
    monkeypatch.setenv("WANDB_API_KEY", SENTINEL)
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    return tmp_path


@pytest.fixture
def server(wandb_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeWandb]:
    with FakeWandb(api_key=SENTINEL) as fake:
        monkeypatch.setenv("WANDB_BASE_URL", fake.url)
        yield fake
    # The fake must answer everything the client asks, or tests prove nothing.
    assert fake.unknown == []


# -- what a fetch returns -------------------------------------------------------------


def test_run_record_and_rows_match_the_fixture(server: FakeWandb) -> None:
    add_run(server)
    result = fetch()
    (run,) = result.runs
    assert run.id == HERO and run.state == "running"
    assert run.created_at == t("2026-08-20T02:04:58")
    assert run.heartbeat_at == t("2026-08-30T15:45:59")
    assert run.config["resources"] == {"replicas": 176, "device": {"count": 4}}
    assert "_wandb" not in run.config
    assert run.summary["train/loss"] == pytest.approx(1.2619009017944336)
    assert "train/router/layer_9/routing_hist/histogram" not in run.summary  # not scalar
    assert run.parent is None and run.fork_step is None
    assert run.url.endswith(f"/e/p/runs/{HERO}")

    expected = hero_rows()
    assert steps_of(result) == [r["_step"] for r in expected]
    by_step = {r["step"]: r for r in rows_of(result)}
    for raw in expected[::37]:
        row = by_step[raw["_step"]]
        assert row["timestamp"] == pytest.approx(raw["_timestamp"])
        assert row["train/loss"] == pytest.approx(raw["train/loss"])
    assert result.detail["rows"] == 300 and result.detail["runs"] == 1


def test_history_is_read_in_several_pages_at_full_resolution(server: FakeWandb) -> None:
    add_run(server)
    result = fetch()
    pages = server.pages(HERO)
    # Fixture steps 0..2990: three windows of PAGE_SIZE steps, the last cut at lastStep + 1.
    assert [(p["minStep"], p["maxStep"]) for p in pages] == [
        (0, PAGE_SIZE), (PAGE_SIZE, 2 * PAGE_SIZE), (2 * PAGE_SIZE, 2991)]
    assert result.rows.num_rows == 300 and result.detail["history_pages"] == 3
    assert "sampledHistory" not in " ".join(server.operations())


def test_go_ints_come_back_as_floats(server: FakeWandb) -> None:
    add_run(server)
    result = fetch()
    first = rows_of(result)[0]
    # Logged as 0 and 46137344.0; wandb-core hands both back as JSON integers.
    assert first["optim/adam_lr"] == 0.0 and type(first["optim/adam_lr"]) is float
    assert first["throughput/total_tokens"] == 46137344.0
    for row in rows_of(result):
        assert type(row["step"]) is int and type(row["timestamp"]) is float
        assert all(type(v) is float for k, v in row.items() if k not in ("run", "step"))


def test_only_configured_keys_are_kept(server: FakeWandb) -> None:
    add_run(server)
    result = fetch(keys=["train/*"])
    keys = set().union(*(r.keys() for r in rows_of(result)))
    assert {"train/loss", "train/cross_entropy_loss"} <= keys
    assert "memory/peak_gib" in keys  # a mapped metric is always kept
    assert "memory/in_use_gib" not in keys and "moe/sender_drop_fraction" not in keys


# -- incremental, as_of, forks, rewinds ----------------------------------------------------

NIGHTS = [t("2026-08-20T06:00"), t("2026-08-20T12:00"), t("2026-08-20T12:00"),
          t("2026-08-21T00:00"), t("2026-08-21T12:00")]


def test_incremental_nights_fetch_each_step_once_and_lose_none(server: FakeWandb) -> None:
    everything = hero_rows()
    run = add_run(server, rows=[])
    store: dict[tuple[str, int], float] = {}
    for night in NIGHTS:
        # The run has logged what it logged by this night; the snapshot sees that.
        run.rows = [r for r in everything if r["_timestamp"] <= night.timestamp()]
        last = last_steps_of([{"run": k[0], "step": k[1]} for k in store])
        before = len(server.requests)
        result = fetch(last_steps=last, as_of=night)
        for row in rows_of(result):
            key = (row["run"], row["step"])
            assert key not in store, f"{key} fetched twice"
            store[key] = row["train/loss"]
        pages = [r.variables for r in server.requests[before:] if r.operation == "HistoryPage"]
        if pages:  # the night starts reading right after what the store already has
            assert pages[0]["minStep"] == last.get(HERO, -1) + 1
    assert sorted(s for _, s in store) == [r["_step"] for r in everything]


def test_as_of_keeps_later_rows_for_the_next_snapshot(server: FakeWandb) -> None:
    add_run(server)
    cut = t("2026-08-20T12:00")
    early = fetch(as_of=cut)
    assert early.rows.num_rows and all(r["timestamp"] <= cut.timestamp()
                                      for r in rows_of(early))
    later = [r["_step"] for r in hero_rows() if r["_timestamp"] > cut.timestamp()]
    assert early.detail["after_as_of"] == len(later)
    rest = fetch(last_steps=last_steps_of(rows_of(early)))
    assert steps_of(rest) == later


def test_a_run_created_after_as_of_is_left_out(server: FakeWandb) -> None:
    add_run(server)
    add_run(server, CHILD, rows=[], created_at="2026-08-22T00:00:00Z")
    result = fetch(runs=[HERO, CHILD], as_of=t("2026-08-21T00:00"))
    assert [r.id for r in result.runs] == [HERO]


def child_rows(start: int, end: int, start_time: float) -> list[dict[str, Any]]:
    """The child re-does steps from `start` on, logging them later with other values."""
    base = hero_rows()
    return [{**base[i % len(base)], "_step": step, "_timestamp": start_time + 19.0 * i,
             "train/loss": 2.5 + i / 1000}
            for i, step in enumerate(range(start, end, 10))]


def test_fork_child_starts_before_parent_last_step(server: FakeWandb) -> None:
    add_run(server)  # steps 0..2990
    child_start = t("2026-08-21T10:00").timestamp()
    add_run(server, CHILD, rows=child_rows(2500, 3500, child_start),
            created_at="2026-08-21T09:50:00Z")
    result = fetch(runs=[HERO, f"e/p/{CHILD}"])
    parent, child = result.runs
    assert (parent.id, parent.parent, parent.fork_step) == (HERO, None, None)
    assert (child.id, child.parent, child.fork_step) == (CHILD, HERO, 2500)
    assert steps_of(result, HERO)[-1] == 2990  # the parent's rewound tail is kept, as data
    assert steps_of(result, CHILD) == list(range(2500, 3500, 10))
    keys = [(r["run"], r["step"]) for r in rows_of(result)]
    assert len(keys) == len(set(keys))


def test_group_lineage_is_ordered_by_creation(server: FakeWandb) -> None:
    add_run(server, CHILD, rows=child_rows(2500, 2600, 1787303000.0),
            created_at="2026-08-21T09:50:00Z", group="hero")
    add_run(server, group="hero")
    add_run(server, "unrelated", rows=[], created_at="2026-08-21T00:00:00Z", group="other")
    result = fetch(runs=[], group="hero")
    assert [(r.id, r.parent) for r in result.runs] == [(HERO, None), (CHILD, HERO)]
    (listing,) = [r for r in server.requests if r.operation == "Runs"]
    assert json.loads(listing.variables["filters"]) == {"group": "hero"}


def test_relogged_and_rewound_steps_give_one_row_each(server: FakeWandb) -> None:
    rows = hero_rows()
    relogged = {**rows[10], "train/loss": 99.0}  # step 100 logged again after a restart
    run = add_run(server, rows=[*rows[:11], relogged, *rows[11:]])
    first = fetch()
    assert steps_of(first).count(100) == 1 and first.detail["duplicates_dropped"] == 1
    assert next(r for r in rows_of(first) if r["step"] == 100)["train/loss"] != 99.0

    # Overnight the run is rewound to step 2000 and re-logs 2010.. with new values.
    run.rows = [*rows[:201], *child_rows(2010, 3600, t("2026-08-21T10:00").timestamp())]
    second = fetch(last_steps=last_steps_of(rows_of(first)))
    assert steps_of(second) == list(range(3000, 3600, 10))
    keys = [(r["run"], r["step"]) for r in rows_of(first) + rows_of(second)]
    assert len(keys) == len(set(keys))


# -- failures ------------------------------------------------------------------------


def test_server_error_is_a_clean_source_error(server: FakeWandb) -> None:
    add_run(server)
    server.failure = Failure("500", frozenset({"HistoryPage"}))
    with pytest.raises(SourceError) as caught:
        fetch()
    message = str(caught.value)
    assert caught.value.source == "wandb" and f"e/p/{HERO}" in message
    assert "retry later" in message and caught.value.__cause__ is not None
    # Bounded: wandb-core gave up after 1 + RETRIES attempts at the page.
    assert len(server.pages(HERO)) == 4


def test_server_down_at_sign_in(server: FakeWandb) -> None:
    server.failure = Failure("500")
    with pytest.raises(SourceError, match=r"signing in to W&B at http://127\.0\.0\.1"):
        fetch()


def test_connection_refused(server: FakeWandb) -> None:
    server.stop()
    with pytest.raises(SourceError, match="WANDB_BASE_URL"):
        fetch()


def test_slow_server_times_out(server: FakeWandb) -> None:
    add_run(server)
    server.failure = Failure("slow", frozenset({"Run"}), delay=5.0)
    with pytest.raises(SourceError, match=f"loading run e/p/{HERO} failed.*retry later"):
        fetch()


def test_wrong_api_key(server: FakeWandb) -> None:
    add_run(server)
    server.api_key = "another-key-" + "0" * 40
    with pytest.raises(SourceError, match="check WANDB_API_KEY"):
        fetch()


def test_forbidden_history(server: FakeWandb) -> None:
    add_run(server)
    server.failure = Failure("403", frozenset({"HistoryPage"}))
    with pytest.raises(SourceError, match=f"e/p/{HERO}.*check WANDB_API_KEY"):
        fetch()


def test_missing_api_key_fails_before_any_request(server: FakeWandb,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WANDB_API_KEY")
    with pytest.raises(SourceError, match="set the WANDB_API_KEY"):
        fetch()
    assert server.requests == []


def _nested(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize("broken", ["json", "row", "node", "a config 5,000 deep",
                                    "a config 200 deep"])
def test_malformed_payload(server: FakeWandb, broken: str) -> None:
    rows: list[Any] = hero_rows()
    if broken == "json":
        add_run(server)
        server.failure = Failure("malformed", frozenset({"Run"}))
    elif broken == "row":
        add_run(server, rows=[*rows[:5], '{"_step": 50, "_timestamp": 17871', *rows[6:]])
    elif broken.startswith("a config"):
        # json.dumps of the fake's own payload must not recurse as deep: built as text.
        depth = int(broken.split()[2].replace(",", ""))
        config = {"deep": {"value": _nested(50)}}
        run = add_run(server, config=config)
        run.config_text = json.dumps(config).replace(
            '"value": ' + json.dumps(_nested(50)), '"value": ' + '{"k": ' * depth + "1"
            + "}" * depth)
    else:
        add_run(server, created_at="")
    with pytest.raises(SourceError, match=f"run e/p/{HERO} failed"):
        fetch()


def test_unknown_run(server: FakeWandb) -> None:
    add_run(server)
    with pytest.raises(SourceError, match=r"e/p/nope.*check wandb\.runs"):
        fetch(runs=[HERO, "nope"])


def test_empty_group(server: FakeWandb) -> None:
    with pytest.raises(SourceError, match=r"no runs in group 'hero'.*wandb\.group"):
        fetch(runs=[], group="hero")


def _texts_under(folders: list[Path]) -> Iterator[tuple[Path, bytes]]:
    for folder in folders:
        if folder.is_dir():
            for path in folder.rglob("*"):
                if path.is_file():
                    yield path, path.read_bytes()


def _core_logs() -> list[Path]:
    """Return the log files our wandb-core child process has open.

    wandb-core starts once per test process and keeps the WANDB_CACHE_DIR of that
    moment, so its log may sit in another test's temp folder: ask /proc where it is.
    """
    children = set()
    for task in Path("/proc/self/task").iterdir():
        children.update((task / "children").read_text().split())
    logs = set()
    for pid in children:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            target = Path(os.readlink(fd)) if fd.is_symlink() else None
            if target is not None and target.name.startswith("core-debug"):
                logs.add(target)
    return sorted(logs)


@pytest.mark.parametrize("scenario", ["ok", "wrong key", "500", "malformed", "unknown run",
                                      "echo at sign-in", "echo on history"])
def test_api_key_never_leaks(server: FakeWandb, wandb_env: Path, scenario: str,
                             caplog: pytest.LogCaptureFixture,
                             capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    add_run(server)
    if scenario == "wrong key":
        server.api_key = "another-key-" + "0" * 40
    elif scenario == "500":
        server.failure = Failure("500", frozenset({"HistoryPage"}))
    elif scenario == "malformed":
        server.failure = Failure("malformed", frozenset({"Run"}))
    elif scenario.startswith("echo"):  # the server's error text repeats the key
        ops = None if scenario == "echo at sign-in" else frozenset({"HistoryPage"})
        server.failure = Failure("echo", ops)
    message = ""
    try:
        fetch(runs=["nope"] if scenario == "unknown run" else None)
    except SourceError as err:
        message = "".join(traceback.format_exception(err))  # as a log would show it
    assert (message == "") == (scenario == "ok")
    if scenario.startswith("echo"):
        assert "[WANDB_API_KEY]" in message  # it reached us, and was scrubbed
    basic = base64.b64encode(f"api:{SENTINEL}".encode()).decode()
    assert any(basic in r.authorization for r in server.requests)  # the key was used
    out, err_text = capfd.readouterr()
    core_logs = _core_logs()
    assert core_logs  # wandb-core's own log is among the files read
    files = dict(_texts_under([wandb_env]))
    files.update((path, path.read_bytes()) for path in core_logs)
    for secret in (SENTINEL, basic):
        assert secret not in message and secret not in caplog.text
        assert secret not in out and secret not in err_text
        for path, data in files.items():
            assert secret.encode() not in data, f"API key written to {path}"


def test_importing_the_source_does_not_import_wandb() -> None:
    code = "import sys, chronicle.sources.wandb; print('wandb' in sys.modules)"
    root = Path(__file__).parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(root)})
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_fifty_thousand_rows(server: FakeWandb) -> None:
    n = 50_000
    add_run(server, rows=SyntheticRows(hero_rows(), n, start_time=1787192041.0))
    started = time.perf_counter()
    result = fetch()
    seconds = time.perf_counter() - started
    assert steps_of(result) == list(range(n))
    assert len(server.pages(HERO)) == n // PAGE_SIZE
    # High-water mark of this whole test process (server included; wandb-core's Go
    # process is apart): if it stayed under 1 GiB, so did the fetch.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert peak < 1 << 30
    print(f"\n{n} rows in {seconds:.1f} s, peak RSS of the test process {peak / 2**20:.0f} MiB")


# -- hostile payloads ------------------------------------------------------------------

CONTROL = "\x00\x07\x1b[2J\x1b]0;owned\x07\x9b31m\x7f"


def test_rows_at_impossible_times_are_left_out_and_named(server: FakeWandb) -> None:
    rows = hero_rows()
    bad = {5: -1e12, 7: 0, 9: "NaN", 11: 4.2e9, 13: rows[0]["_timestamp"] - 40 * 86400}
    for i, when in bad.items():
        rows[i] = {**rows[i], "_timestamp": when}
    del rows[15]["_timestamp"]
    add_run(server, rows=rows)
    result = fetch()
    wanted = [r["_step"] for i, r in enumerate(rows) if i not in bad and i != 15]
    assert steps_of(result) == wanted
    assert result.detail["bad_rows"] == 6 and result.detail["rows"] == 294
    first = result.detail["first_bad_row"]
    assert (first["run"], first["step"], float(first["timestamp"])) == (HERO, 50, -1e12)
    assert result.problem is not None
    assert "6 history rows left out as bad, the first of run " in result.problem
    assert f"{HERO} at step 50" in result.problem and "294 other new rows" in result.problem


def test_a_fetch_without_bad_rows_names_none(server: FakeWandb) -> None:
    add_run(server)
    result = fetch()
    assert result.problem is None and result.detail["bad_rows"] == 0
    assert "first_bad_row" not in result.detail


def test_nan_missing_and_duplicated_values_as_the_readme_promises(server: FakeWandb) -> None:
    rows = hero_rows()
    rows[3] = {**rows[3], "train/loss": "NaN"}  # a NaN loss is data
    del rows[4]["train/loss"]  # a row without the key: missing
    rows[5] = {**rows[5], "train/loss": True}  # not a metric value: missing, never 1
    again = {**rows[6], "train/loss": 42.0}  # step 60 logged twice: the first stands
    add_run(server, rows=[*rows[:7], again, *rows[7:]])
    result = fetch()
    by_step = {r["step"]: r for r in rows_of(result)}
    assert math.isnan(by_step[30]["train/loss"])
    assert "train/loss" not in by_step[40] and "train/loss" not in by_step[50]
    assert by_step[60]["train/loss"] == pytest.approx(rows[6]["train/loss"])
    assert steps_of(result) == [r["_step"] for r in rows]


def test_control_characters_never_leave_the_run_record_or_the_keys(server: FakeWandb) -> None:
    node = hero_node()
    config = {**node["config"], f"notes{CONTROL}": {"value": f"lr sweep{CONTROL} 3"},
              "nested": {"value": {"tags": [f"a{CONTROL}", 1.5], f"k{CONTROL}": "v"}}}
    summary = {**node["summaryMetrics"], "status": f"done{CONTROL}\nok"}
    rows = [{**r, f"throughput/x{CONTROL}": 1.0} for r in hero_rows()]
    add_run(server, rows=rows, config=config, summary=summary,
            display_name=f"hero{CONTROL}\nrun")
    result = fetch()
    (run,) = result.runs
    assert run.name == "hero[2J]0;owned31m run"
    assert run.config["notes[2J]0;owned31m"] == "lr sweep[2J]0;owned31m 3"
    assert run.config["nested"] == {"tags": ["a[2J]0;owned31m", 1.5], "k[2J]0;owned31m": "v"}
    assert run.summary["status"] == "done[2J]0;owned31m\nok"
    assert "throughput/x[2J]0;owned31m" in result.rows.column_names
    text = json.dumps(run.to_json(), ensure_ascii=False) + "".join(result.rows.column_names)
    assert not [c for c in text if unicodedata.category(c) == "Cc" and c not in "\t\n"]
