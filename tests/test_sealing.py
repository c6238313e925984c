"""Provenance and corrections through the real snapshot pipeline (simulated source)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.analysis.corrections import differs, find_corrections, late_days
from chronicle.cli import main
from chronicle.config import RunConfig, load_config
from chronicle.models import Fetched
from chronicle.snapshot.fetch import fetch_simulated_source
from chronicle.snapshot.provenance import Artifact, MetricsFile, day_provenance, metrics_for
from chronicle.snapshot.take import take_snapshot
from chronicle.store import Store, sha256_file, verify_store
from tests.support.config import scaffold_simulated
from tests.support.rows import as_rows

START = date(2026, 8, 20)
LAG_FROM = datetime(2026, 8, 20, 18, 0, tzinfo=UTC)  # rows of day 1 after this arrive late


def _night(n: int) -> datetime:
    return datetime(2026, 8, 20, 3, 17, tzinfo=UTC) + timedelta(days=n)


@pytest.fixture
def config(tmp_path: Path) -> RunConfig:
    return load_config(scaffold_simulated(tmp_path / "c"))


def lagging(config: RunConfig, store: Store, as_of: datetime) -> Fetched:
    """The simulated source, but on the first night W&B has not yet served day 1's evening."""
    got = fetch_simulated_source(config, store, as_of)
    if as_of == _night(1) and got.metrics is not None:
        cut = [r for r in as_rows(got.metrics) if r["timestamp"] < LAG_FROM.timestamp()]
        return Fetched(cut, got.runs, got.threads, got.failures, got.statuses)
    return got


def test_provenance_names_stored_files_by_their_sha256(config: RunConfig) -> None:
    for n in (1, 2):
        take_snapshot(config, _night(n), fetcher=fetch_simulated_source)
    docs = config.docs_dir
    day2 = json.loads((docs / "days" / "2026-08-21.json").read_bytes())
    figures = day2["provenance"]["figures"]
    assert figures["loss.train_last"]["kind"] == "OBSERVED"
    assert figures["tokens.day"]["kind"] == "DERIVED"
    assert figures["tokens.day"]["method"] == "chronicle.days.tokens_day/1"
    assert "total_tokens (throughput/total_tokens)" in figures["tokens.day"]["inputs"]
    # tokens that day need the last row before it: the first night's file is named too.
    paths = [a["path"] for a in figures["tokens.day"]["artifacts"]]
    assert paths == ["data/2026-08-21T031700Z/metrics.parquet",
                     "data/2026-08-22T031700Z/metrics.parquet"]
    assert [a["path"] for a in figures["loss.train_change"]["artifacts"]][-1] == \
        "days/2026-08-20.json"
    for entry in figures.values():
        for a in entry["artifacts"]:
            path = config.root / a["path"] if a["path"] == "chronicle.yml" else docs / a["path"]
            assert sha256_file(path) == a["sha256"], a["path"]
            assert path.stat().st_size == a["size"]
    page = (docs / "days" / "2026-08-21.md").read_text()
    assert '??? info "Where each figure comes from"' in page
    assert "`chronicle.days.tokens_day/1`" in page
    assert "(../data/2026-08-22T031700Z/metrics.parquet)" in page


def test_late_rows_become_a_correction_and_the_sealed_page_stays(config: RunConfig) -> None:
    store = Store(config.docs_dir)
    take_snapshot(config, _night(1), fetcher=lagging, store=store)
    sealed = {p: p.read_bytes() for p in (config.docs_dir / "days").rglob("*") if p.is_file()}
    before = json.loads((config.docs_dir / "days" / "2026-08-20.json").read_bytes())
    take_snapshot(config, _night(2), fetcher=lagging, store=store)

    # The sealed day is untouched; the manifest and the next entry carry the corrections.
    for path, blob in sealed.items():
        assert path.read_bytes() == blob, path
    manifest = store.latest().manifest  # type: ignore[union-attr]
    found = {c["figure"]: c for c in manifest["corrections"]}
    assert {"tokens.day", "loss.train_last", "data.rows"} <= set(found)
    rows = found["data.rows"]
    assert rows["day"] == "2026-08-20" and rows["sealed"] == before["data"]["rows"]
    assert rows["corrected"] > rows["sealed"]
    assert rows["id"] == "2026-08-20/data.rows/2026-08-22T031700Z"
    assert f"{rows['corrected'] - rows['sealed']} metric row(s)" in rows["reason"]
    assert found["downtime_seconds"]["corrected"] < found["downtime_seconds"]["sealed"]
    day2 = json.loads((config.docs_dir / "days" / "2026-08-21.json").read_bytes())
    assert [c["id"] for c in day2["corrections"]] == [c["id"] for c in manifest["corrections"]]
    page = (config.docs_dir / "days" / "2026-08-21.md").read_text()
    assert "## Corrections to earlier entries" in page and "[2026-08-20](2026-08-20.md)" in page

    # Nothing new about day 1: the third night finds no correction, and verify is clean.
    take_snapshot(config, _night(3), fetcher=lagging, store=store)
    assert "corrections" not in store.latest().manifest  # type: ignore[union-attr]
    assert verify_store(store) == []


def test_find_corrections_compares_with_the_latest_published_value() -> None:
    sealed = {"sealed_by": "s1", "tokens": {"day": 100.0}, "loss": {"train_last": 2.0},
              "data": {"rows": 10}, "downtime_seconds": 0.0}
    now = {"tokens": {"day": 150.0}, "loss": {"train_last": 2.0}, "data": {"rows": 15},
           "downtime_seconds": 0.0}
    at = datetime(2026, 8, 23, tzinfo=UTC)
    first = find_corrections(START, sealed, now, [], 5, "s2", at)
    assert [(c["figure"], c["previous"], c["corrected"]) for c in first] == [
        ("tokens.day", 100.0, 150.0), ("data.rows", 10, 15)]
    # Once published, the same values are not corrected again.
    assert find_corrections(START, sealed, now, first, 5, "s3", at) == []
    assert differs(None, 1.0, "tokens.day") and not differs(1.0, 1.0 + 1e-12, "loss.train_last")
    assert late_days([LAG_FROM.timestamp(), LAG_FROM.timestamp() + 86400]) == {
        START: 1, START + timedelta(days=1): 1}


def test_metric_scopes_add_the_file_holding_the_row_before_the_day() -> None:
    a = Artifact("data/a/metrics.parquet", "aa", 1)
    b = Artifact("data/b/metrics.parquet", "bb", 1)
    c = Artifact("data/c/metrics.parquet", "cc", 1)
    files = [MetricsFile(a, 0.0, 50.0), MetricsFile(b, 60.0, 120.0), MetricsFile(c, 130.0, 200.0)]
    scopes = metrics_for(files, 100.0, 150.0)
    assert scopes == {"day": [b, c], "through": [b, c]}
    assert metrics_for(files, 125.0, 180.0) == {"day": [c], "through": [b, c]}
    prov = day_provenance({"tokens": {"day": 5.0, "budget": None}}, {"total_tokens": "t/t"},
                          metrics_for(files, 125.0, 180.0))
    assert set(prov["figures"]) == {"tokens.day"}  # missing figures have no provenance
    assert prov["figures"]["tokens.day"]["inputs"] == ["total_tokens (t/t)"]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunConfig, RunConfig]:
    """The same three days sealed nightly, and by one backfill snapshot two days later."""
    configs = []
    for name in ("nightly", "backfill"):
        root = tmp_path_factory.mktemp("replay") / name
        result = CliRunner().invoke(main, ["init", str(root), "--source", "simulated"])
        assert result.exit_code == 0, result.output
        text = (root / "chronicle.yml").read_text().replace("days: 100", "days: 4")
        (root / "chronicle.yml").write_text(text.replace("planned_days: 100", "planned_days: 4"))
        configs.append(load_config(root))
    nightly, backfill = configs
    for n in (1, 2, 3):
        take_snapshot(nightly, _night(n), fetcher=fetch_simulated_source)
    take_snapshot(backfill, _night(3), fetcher=fetch_simulated_source, backfilled=True)
    return nightly, backfill


REPLAYED = ("2026-08-20", "2026-08-21", "2026-08-22")


def test_backfill_seals_the_figures_the_nightly_job_would_have(
        replayed: tuple[RunConfig, RunConfig]) -> None:
    nightly, backfill = replayed
    # Every figure and the summary; not the issue threads (GitHub shows a comment's latest
    # text only, so a backfill cannot see what an edited comment said on the night).
    figures = ("data", "steps", "tokens", "phase", "loss", "throughput", "moe", "grad_norm",
               "learning_rate", "downtime_seconds", "restarts", "runs", "forks",
               "accelerator_hours", "cost", "cumulative", "failures", "previous", "summary")
    for day in REPLAYED:
        a, b = (json.loads((c.docs_dir / "days" / f"{day}.json").read_bytes())
                for c in (nightly, backfill))
        assert {k: a[k] for k in figures} == {k: b[k] for k in figures}, day
        assert b["backfilled"] is True and b["sealed_at"] == "2026-08-23T03:17:00Z"
        assert a["backfilled"] is False
        page = (backfill.docs_dir / "days" / f"{day}.md").read_text()
        assert "backfilled on 2026-08-23 03:17 UTC" in page


def test_backfill_seals_the_charts_the_nightly_job_would_have(
        replayed: tuple[RunConfig, RunConfig]) -> None:
    nightly, backfill = replayed
    for day in REPLAYED:
        for spec in sorted((nightly.docs_dir / "days" / day).iterdir()):
            assert spec.read_bytes() == (backfill.docs_dir / "days" / day / spec.name).read_bytes()


# The seal reads only the verified store (issue #24, item 1). ----------------------------

def _nights(config: RunConfig, nights: range) -> None:
    for n in nights:
        result = CliRunner().invoke(main, ["snapshot", "--dir", str(config.root), "--as-of",
                                           _night(n).isoformat()])
        assert result.exit_code == 0, result.output


def _sealed_bytes(docs: Path, day: str) -> dict[str, bytes]:
    return {p.relative_to(docs).as_posix(): p.read_bytes()
            for p in (docs / "days").rglob(f"{day}*") if p.is_file()}


def _poison_metrics_copies(root: Path, factor: float) -> int:
    """Multiply the loss column of every Arrow file under .cache/chronicle by `factor`, as
    an attacker who can write the cache (restored from elsewhere) would; return how many."""
    import pyarrow as pa
    import pyarrow.compute as pc

    poisoned = 0
    for path in (root / ".cache").rglob("*.arrow"):
        with pa.OSFile(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        col = table.schema.get_field_index("train/loss")
        table = table.set_column(col, "train/loss", pc.multiply(table["train/loss"], factor))
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        poisoned += 1
    return poisoned


def test_a_poisoned_cache_cannot_change_what_a_night_seals(tmp_path: Path) -> None:
    # Two copies of one chronicle after three nights; in one, every metrics table kept
    # under .cache/ gets 3x the loss before the fourth night. Both must seal the same bytes.
    clean = load_config(scaffold_simulated(tmp_path / "clean"))
    _nights(clean, range(1, 4))
    import shutil

    shutil.copytree(clean.root, tmp_path / "attacked")
    attacked = load_config(tmp_path / "attacked")
    # Whatever metrics table a cache holds (before #24: the compact copy the night
    # started from) is poisoned now; a chronicle with no such table is at least as safe.
    _poison_metrics_copies(attacked.root, 3.0)
    _nights(clean, range(4, 5))
    _nights(attacked, range(4, 5))
    day = "2026-08-23"
    got, want = _sealed_bytes(attacked.docs_dir, day), _sealed_bytes(clean.docs_dir, day)
    assert sorted(got) == sorted(want)
    changed = sorted(p for p in want if got[p] != want[p])
    assert not changed, f"a poisoned cache changed sealed files: {changed}"
    assert verify_store(Store(attacked.docs_dir)) == []
