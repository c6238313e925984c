"""`chronicle verify --recompute` (snapshot/recompute.py): every sealed day re-derived from
the stored snapshots by the sealing code; a figure or page that is not what the stored data
gives fails, naming the day and the figure, even where the hash chain was fixed up."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.models import Fetched
from chronicle.snapshot.fetch import fetch_simulated_source
from chronicle.snapshot.take import take_snapshot
from chronicle.store import Store, dump_json, sha256_bytes
from tests.support.chain import edit_day_json, rewrite_manifest, rewrite_sealed
from tests.support.commands import cli
from tests.support.config import scaffold_simulated
from tests.support.rows import as_rows

LATE_FROM = datetime(2026, 8, 21, 18, 0, tzinfo=UTC)  # rows of day 2 after this arrive late


def _night(n: int) -> datetime:
    return datetime(2026, 8, 20, 3, 17, tzinfo=UTC) + timedelta(days=n)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-day simulated run, one night each, W&B serving day 2's evening a night late
    (a correction), then continued with two --as-of nights after the run's end (which
    seal nothing: a finished run's last day is its closing entry)."""
    root = scaffold_simulated(tmp_path_factory.mktemp("recompute") / "c", days=4)
    config = load_config(root)

    def lagging(config_: object, store: Store, as_of: datetime) -> Fetched:
        got = fetch_simulated_source(config, store, as_of)
        if as_of == _night(2) and got.metrics is not None:
            rows = [r for r in as_rows(got.metrics) if r["timestamp"] < LATE_FROM.timestamp()]
            return Fetched(rows, got.runs, got.threads, got.failures, got.statuses,
                           pulls=got.pulls)
        return got

    store = Store(config.docs_dir)
    for n in range(1, 5):
        take_snapshot(config, _night(n), fetcher=lagging, store=store)
    for n in (6, 9):  # continued with --as-of nights, as a backfill or a late night would
        result = cli("snapshot", "--dir", str(root), "--as-of", _night(n).isoformat())
        assert result.exit_code == 0, result.output
    assert any("corrections" in s.manifest for s in Store(config.docs_dir).snapshots())
    return root


def _copy(sealed: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sealed, tmp_path / "c"))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".chronicle.lock"}


def test_every_sealed_day_recomputes_to_its_sealed_figures_and_bytes(sealed: Path) -> None:
    before = _tree(sealed)
    result = cli("verify", "--dir", str(sealed), "--recompute")
    assert result.exit_code == 0, result.output
    days = len(list((sealed / "docs" / "days").glob("*.json")))
    assert days == 5  # the run's days, up to the day it finished: none after it
    assert f"ok: recomputed {days} sealed days from the stored snapshots" in result.output
    assert f"{days} pages byte-identical" in result.output
    assert "not comparable" not in result.output
    assert _tree(sealed) == before  # read-only: nothing written


def test_an_edited_figure_with_the_chain_fixed_up_fails_naming_day_and_figure(
        sealed: Path, tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    edit_day_json(root / "docs", "2026-08-21", {"loss.train_last": 9.0})
    assert cli("verify", "--dir", str(root)).exit_code == 0  # the chain holds
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert "FAIL day 2026-08-21: loss.train_last: sealed 9.0, recomputed 1.46637" in result.output
    assert "chronicle.days.last_finite/1" in result.output
    assert "Traceback" not in result.output


def test_an_edited_page_with_the_chain_fixed_up_fails_naming_the_file(
        sealed: Path, tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    rel = "days/2026-08-22.md"
    page = (root / "docs" / rel).read_text()
    rewrite_sealed(root / "docs", rel, page.replace("## ", "## Quietly ", 1).encode())
    assert cli("verify", "--dir", str(root)).exit_code == 0
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert f"FAIL day 2026-08-22: {rel}: differs from the page rendered from its figures " \
           "at line" in result.output


def test_an_edited_chart_spec_fails(sealed: Path, tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    rel = "days/2026-08-23/loss.vl.json"
    spec = json.loads((root / "docs" / rel).read_bytes())
    spec["title"] = "edited"
    rewrite_sealed(root / "docs", rel, (json.dumps(spec) + "\n").encode())
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert f"FAIL day 2026-08-23: {rel}: differs" in result.output


NEWEST = "2026-08-24"  # no later day cites its JSON (a day cites the day before's sha256)


def test_an_edit_shows_in_the_next_day_too(sealed: Path, tmp_path: Path) -> None:
    # The next day cites the edited day's JSON by sha256, and compares with its figures.
    root = _copy(sealed, tmp_path)
    edit_day_json(root / "docs", "2026-08-21", {"loss.train_last": 9.0})
    result = cli("verify", "--dir", str(root), "--recompute")
    assert "FAIL day 2026-08-22: loss.train_change: sealed -0.0604" in result.output
    assert ("FAIL day 2026-08-22: cumulative.accelerator_hours: its provenance differs: the "
            "sealed day cites [\"days/2026-08-21.json") in result.output
    assert ("FAIL day 2026-08-22: previous: previous.loss_train_last: sealed 1.46637"
            in result.output)


def test_a_figure_sealed_by_another_method_is_not_comparable(sealed: Path,
                                                             tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    # As if the day's budget had been read by an older method, with another value.
    edit_day_json(root / "docs", NEWEST, {
        "tokens.budget": 9.0,
        ("provenance", "figures", "tokens.budget", "read_by"): "chronicle.days.config/0"})
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 0, result.output
    assert ("not comparable: tokens.budget: sealed by chronicle.days.config/0, the "
            f"code's method is chronicle.days.config/1 ({NEWEST})") in result.output
    assert "pages not compared (a figure's method changed): 1 day(s)" in result.output
    assert "4 pages byte-identical" in result.output


def test_a_day_sealed_before_provenance_is_not_comparable(sealed: Path,
                                                          tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    edit_day_json(root / "docs", NEWEST, {"-provenance": None})
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 0, result.output
    assert "not comparable: sealed before chronicle recorded each figure's method" \
        in result.output
    assert "pages not compared (sealed before provenance): 1 day(s)" in result.output


def test_a_removed_correction_fails(sealed: Path, tmp_path: Path) -> None:
    # The snapshot that stored day 2's late rows recorded corrections; dropping them from
    # its manifest (and fixing the chain up) is caught: they are recomputed too.
    root = _copy(sealed, tmp_path)
    docs = root / "docs"
    snap = next(s for s in Store(docs).snapshots() if "corrections" in s.manifest)
    manifest = json.loads((snap.path / "MANIFEST.json").read_bytes())
    manifest.pop("corrections")
    rewrite_manifest(docs, snap.id, manifest)
    assert cli("verify", "--dir", str(root)).exit_code == 0
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert f"FAIL snapshot {snap.id}: corrections: the manifest records []" in result.output


def test_recompute_runs_only_on_a_store_that_verifies(sealed: Path, tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    (root / "docs" / "days" / "2026-08-21.json").write_text("{}")  # chain not fixed up
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1
    assert "days/2026-08-21.json: altered" in result.output
    assert "recomputed" not in result.output


def test_days_sealed_late_after_a_source_failed_recompute_as_of_their_first_snapshot(
        tmp_path: Path) -> None:
    # W&B fails on night 2 (day 2 waits), GitHub on night 3 (day 3 waits; day 2 has had
    # both answers since it ended: sealed, as of night 2), night 4 seals day 3 as of night
    # 3: recompute rebuilds that evidence (rows up to then, threads as they stood then)
    # from the store alone.
    from chronicle.models import SourceStatus

    root = scaffold_simulated(tmp_path / "c", days=4)
    config = load_config(root)

    def flaky(config_: object, store: Store, as_of: datetime) -> Fetched:
        got = fetch_simulated_source(config, store, as_of)
        if as_of == _night(2):
            return Fetched(None, None, got.threads, got.failures,
                           (SourceStatus("wandb", False, "HTTP 502"), got.statuses[1]),
                           pulls=got.pulls)
        if as_of == _night(3):
            return Fetched(got.metrics, got.runs, None, got.failures,
                           (got.statuses[0], SourceStatus("github", False, "rate limited")))
        return got

    store = Store(config.docs_dir)
    for n in range(1, 5):
        take_snapshot(config, _night(n), fetcher=flaky, store=store)
    sealers = {d.isoformat(): s.id for d, s in Store(config.docs_dir).sealed_days().items()}
    assert (sealers["2026-08-21"], sealers["2026-08-22"]) == ("2026-08-23T031700Z",
                                                             "2026-08-24T031700Z")
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 0, result.output
    assert "ok: recomputed 4 sealed days" in result.output
    assert "4 pages byte-identical" in result.output


def test_a_snapshot_is_replayed_by_the_sealing_rules_it_was_taken_with(
        sealed: Path, tmp_path: Path) -> None:
    # A snapshot written before a finished run stopped sealing days (its manifest has no
    # `sealing`) is replayed by the rules it had: it would have sealed the days after.
    root = _copy(sealed, tmp_path)
    sid = "2026-08-26T031700Z"
    manifest = json.loads((root / "docs/data" / sid / "MANIFEST.json").read_bytes())
    assert manifest.pop("sealing") == 2 and list(manifest["sealed"]) == ["2026-08-24"]
    rewrite_manifest(root / "docs", sid, manifest)
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert ("FAIL day 2026-08-25: its data was complete when snapshot 2026-08-26T031700Z was "
            "taken, but that snapshot's manifest does not seal it") in result.output


def test_a_changed_chronicle_yml_is_said_and_its_figures_still_compared(
        sealed: Path, tmp_path: Path) -> None:
    root = _copy(sealed, tmp_path)
    config = root / "chronicle.yml"
    config.write_text(config.read_text() + "# a comment: no figure moves\n")
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 0, result.output
    assert "pages not compared (chronicle.yml changed since it was sealed): 5 day(s)" \
        in result.output
    text = config.read_text()
    config.write_text(text.replace("token_budget: 18.0e+12", "token_budget: 20.0e+12"))
    assert config.read_text() != text
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 1, result.output
    assert "FAIL day 2026-08-20: tokens.budget: sealed 18000000000000.0, recomputed " \
           "20000000000000.0 (chronicle.days.config/1) (chronicle.yml changed since the " \
           "day was sealed" in result.output


def _as_stored_before_evidence_facts(docs: Path) -> None:
    """Rewrite the store as chronicle.day_page/11 left it: failure records without their
    evidence's facts (`detail.evidence`), days citing those files (chain fixed up)."""
    moved: dict[str, tuple[str, int]] = {}  # old sha256 -> (new sha256, size)
    for snap in Store(docs).snapshots():
        path = snap.path / "failures.json"
        if "failures.json" not in snap.files:
            continue
        records = json.loads(path.read_bytes())
        for r in records:
            r.get("detail", {}).pop("evidence", None)
        blob = dump_json(records)
        path.write_bytes(blob)
        manifest = json.loads((snap.path / "MANIFEST.json").read_bytes())
        old = manifest["files"]["failures.json"]["sha256"]
        manifest["files"]["failures.json"] = {"sha256": sha256_bytes(blob), "size": len(blob)}
        moved[old] = (sha256_bytes(blob), len(blob))
        rewrite_manifest(docs, snap.id, manifest)
    for path in sorted((docs / "days").glob("*.json")):
        day = json.loads(path.read_bytes())
        day["provenance"]["page"] = "chronicle.day_page/11"
        for figure in day["provenance"]["figures"].values():
            for a in figure.get("artifacts") or ():
                if a["sha256"] in moved:
                    a["sha256"], a["size"] = moved[a["sha256"]]
        old = sha256_bytes(path.read_bytes())
        blob = (json.dumps(day, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
        rewrite_sealed(docs, f"days/{path.name}", blob)
        moved[old] = (sha256_bytes(blob), len(blob))


def test_a_store_from_before_evidence_facts_still_recomputes(sealed: Path,
                                                             tmp_path: Path) -> None:
    # Records stored before their evidence carried facts are made again as they were
    # stored (the days cite those files by sha256), and a day a snapshot sealed with the
    # one before it cites that one as sealed, not as this code would seal it.
    root = _copy(sealed, tmp_path)
    _as_stored_before_evidence_facts(root / "docs")
    assert cli("verify", "--dir", str(root)).exit_code == 0
    result = cli("verify", "--dir", str(root), "--recompute")
    assert result.exit_code == 0, result.output
    assert "pages not compared (page version chronicle.day_page/11" in result.output
    assert "figures equal to the sealed ones" in result.output
