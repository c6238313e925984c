"""When a day is sealed (snapshot/plan.py), through `chronicle snapshot` with the real wandb
and PyGithub clients against the fake servers: a night with a failed source seals nothing
and says which day waits; the next healthy night seals it with the bytes a timely seal
would have had; a day waits at most `sealing.max_wait_days`; nothing is sealed before the
run's first logged row; the scaffold's example values are refused."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from chronicle.cli import main
from chronicle.errors import EXIT_DEGRADED
from tests.rehearsal.world import history_rows, night_time
from tests.support.fakes.hero import HERO
from tests.support.fakes.wandb_server import Failure, FakeWandb
from tests.support.live import Live

pytestmark = pytest.mark.integration  # nights end to end, against the fake servers

# Fields that name the sealing snapshot, when, and the stored files the figures were read
# from: they differ between a timely and a late seal by construction; nothing else may.
SEALING_FIELDS = ("sealed_by", "sealed_at", "provenance")


def snapshot(root: Path, night: int) -> Result:
    stamp = night_time(night).strftime("%Y-%m-%dT%H:%M:%SZ")
    return CliRunner().invoke(main, ["snapshot", "--dir", str(root), "--as-of", stamp])


def serve_until(wandb: FakeWandb, night: int, gap: tuple[datetime, datetime] | None = None
                ) -> None:
    """Put the hero run's history, logged up to `night` (none inside `gap`), on the fake
    W&B server."""
    rows = history_rows(night_time(night))
    if gap is not None:
        rows = [r for r in rows if not gap[0].timestamp() <= r["_timestamp"] < gap[1].timestamp()]
    wandb.runs[f"e/p/{HERO}"].rows = rows


def edit_config(root: Path, **sections: dict[str, Any]) -> None:
    data = yaml.safe_load((root / "chronicle.yml").read_text())
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    (root / "chronicle.yml").write_text(yaml.safe_dump(data))


def day_files(root: Path, day: str) -> dict[str, bytes]:
    days = root / "docs" / "days"
    files = [days / f"{day}.md", days / f"{day}.json", *sorted((days / day).iterdir())]
    return {p.name: p.read_bytes() for p in files}


def without_sealing(blob: bytes) -> bytes:
    """Canonical bytes of a day JSON without the fields that name its sealing."""
    doc = {k: v for k, v in json.loads(blob).items() if k not in SEALING_FIELDS}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False).encode()


def page_without_sealing(blob: bytes, sealed_json: bytes) -> bytes:
    """A day page with its sealing snapshot and time as placeholders, and without its
    provenance section (which stored files hold the rows names the sealing too)."""
    sealed = json.loads(sealed_json)
    sid, at = sealed["sealed_by"], sealed["sealed_at"]  # 2026-08-23T031700Z, ...T03:17:00Z
    text = blob.decode()
    for token in (sid, at, at.replace("T", " ").replace(":00Z", " UTC")):
        text = text.replace(token, "<sealing>")
    head, provenance = text.split('??? info "Where each figure comes from"\n', 1)
    after = re.search(r"^\S", provenance, re.M)  # the first line outside the admonition
    return (head + (provenance[after.start():] if after else "")).encode()


def test_a_failed_night_seals_nothing_and_the_next_seals_what_a_timely_one_would(
        live: tuple[Path, FakeWandb], tmp_path: Path) -> None:
    root, wandb = live
    # The job stops at 23:00 on 2026-08-21 and resumes after the next night's snapshot: a
    # timely seal sees the gap still open; a late one must too (not closed at 10:00).
    serve_until(wandb, 3, gap=(datetime(2026, 8, 21, 23, tzinfo=UTC),
                               datetime(2026, 8, 22, 10, tzinfo=UTC)))
    timely = tmp_path / "timely"
    shutil.copytree(root, timely)
    for night in (1, 2, 3):
        assert snapshot(timely, night).exit_code == 0

    assert snapshot(root, 1).exit_code == 0
    wandb.failure = Failure("500")
    failed = snapshot(root, 2)
    wandb.failure = None
    assert failed.exit_code == EXIT_DEGRADED, failed.output
    assert "sealed: none" in failed.output
    assert re.search(r"waiting: 2026-08-21 is not sealed: wandb has not answered since the "
                     r"day ended \(wandb: .*\); .* sealed anyway after 2026-08-29T00:00:00Z",
                     failed.output), failed.output
    manifest = json.loads((root / "docs/data/2026-08-22T031700Z/MANIFEST.json").read_text())
    assert manifest["sealed"] == {}
    assert [(w["day"], [s["source"] for s in w["sources"]], w["seal_anyway_at"])
            for w in manifest["waiting"]] == [("2026-08-21", ["wandb"], "2026-08-29T00:00:00Z")]
    assert manifest["waiting"][0]["sources"][0]["last_ok"] == "2026-08-21T031700Z"
    assert not (root / "docs/days/2026-08-21.md").exists()

    built = CliRunner().invoke(main, ["build", "--dir", str(root)])
    assert built.exit_code == 0, built.output
    home = (root / "site" / "index.html").read_text()
    assert "Days waiting to be sealed" in home and "2026-08-21: waiting for wandb" in home
    latest = json.loads((root / "site/api/latest.json").read_text())
    assert [w["day"] for w in latest["waiting_days"]] == ["2026-08-21"]

    healthy = snapshot(root, 3)
    assert healthy.exit_code == 0, healthy.output
    assert "sealed: 2026-08-21, 2026-08-22" in healthy.output
    assert "waiting" not in healthy.output
    # The late seal equals the timely one byte for byte, but for what names its sealing.
    for day in ("2026-08-21", "2026-08-22"):
        late, on_time = day_files(root, day), day_files(timely, day)
        assert sorted(late) == sorted(on_time)
        for name in late:
            if name.endswith(".json") and not name.endswith(".vl.json"):
                assert without_sealing(late[name]) == without_sealing(on_time[name]), name
            elif name.endswith(".md"):
                json_name = name.replace(".md", ".json")
                assert page_without_sealing(late[name], late[json_name]) == \
                    page_without_sealing(on_time[name], on_time[json_name])
            else:
                assert late[name] == on_time[name], name
    sealed = json.loads((root / "docs/days/2026-08-21.json").read_text())
    assert sealed["sealed_by"] == "2026-08-23T031700Z" and "missing_sources" not in sealed
    gap = [f for f in sealed["failures"] if f["kind"] == "gap" and f["start"] > "2026-08-21T22"]
    assert len(gap) == 1 and gap[0]["end"] is None  # open, as the night it closed saw it
    assert CliRunner().invoke(main, ["verify", "--dir", str(root)]).exit_code == 0


def test_a_day_waits_at_most_max_wait_days_then_is_sealed_marked(
        live: tuple[Path, FakeWandb]) -> None:
    root, wandb = live
    serve_until(wandb, 5)
    edit_config(root, sealing={"max_wait_days": 2})
    assert snapshot(root, 1).exit_code == 0
    wandb.failure = Failure("500")
    assert "waiting: 2026-08-21" in snapshot(root, 2).output
    third = snapshot(root, 3)
    assert "sealed: none" in third.output and "waiting: 2026-08-22" in third.output
    forced = snapshot(root, 4)  # 2026-08-21 ended 2 days before 2026-08-24T00:00
    assert forced.exit_code == EXIT_DEGRADED
    assert re.search(r"sealed: 2026-08-21$", forced.output, re.M), forced.output
    assert "2026-08-21 sealed without every source" in forced.output
    day = json.loads((root / "docs/days/2026-08-21.json").read_text())
    assert [m["source"] for m in day["missing_sources"]] == ["wandb"]
    assert day["missing_sources"][0]["last_ok"] == "2026-08-21T031700Z"
    assert "Sealed without wandb" in day["summary"]
    page = (root / "docs/days/2026-08-21.md").read_text()
    assert '!!! warning "Sealed with a missing source"' in page
    assert "after waiting the configured 2 days" in page

    wandb.failure = None
    back = snapshot(root, 5)
    assert back.exit_code == 0, back.output
    assert "sealed: 2026-08-22, 2026-08-23, 2026-08-24" in back.output
    for day_name in ("2026-08-22", "2026-08-23", "2026-08-24"):
        assert "missing_sources" not in json.loads(
            (root / f"docs/days/{day_name}.json").read_text())
    # The rows W&B could not serve about the day sealed without it are corrections.
    manifest = json.loads((root / "docs/data/2026-08-25T031700Z/MANIFEST.json").read_text())
    assert {c["day"] for c in manifest["corrections"]} == {"2026-08-21"}
    assert CliRunner().invoke(main, ["verify", "--dir", str(root)]).exit_code == 0


def test_nothing_is_sealed_before_the_run_logs_its_first_row(
        live: tuple[Path, FakeWandb]) -> None:
    root, wandb = live
    edit_config(root, run={"start": "2026-08-01"})  # planned start, weeks before any row
    wandb.runs[f"e/p/{HERO}"].rows = []
    empty = snapshot(root, 1)
    assert empty.exit_code == 0, empty.output
    assert "sealed: none" in empty.output and "waiting" not in empty.output
    serve_until(wandb, 2)
    first = snapshot(root, 2)
    assert first.exit_code == 0, first.output
    # The first row was logged on 2026-08-20: the 19 days before it are never sealed.
    assert "sealed: 2026-08-20, 2026-08-21" in first.output
    assert sorted(p.name for p in (root / "docs/days").glob("*.md")) == [
        "2026-08-20.md", "2026-08-21.md"]


def test_each_source_needs_one_answer_after_the_day_not_one_night_of_both(
        live_world: Live) -> None:
    root, wandb, github = live_world.root, live_world.wandb, live_world.github
    serve_until(wandb, 3)
    assert snapshot(root, 1).exit_code == 0
    wandb.failure = Failure("500")
    assert "waiting: 2026-08-21 is not sealed: wandb" in snapshot(root, 2).output
    wandb.failure, github.failure = None, "500"
    third = snapshot(root, 3)
    assert third.exit_code == EXIT_DEGRADED
    # GitHub answered on night 2 and W&B on night 3, both after 2026-08-21 ended.
    assert re.search(r"sealed: 2026-08-21$", third.output, re.M), third.output
    assert "waiting: 2026-08-22 is not sealed: github has not answered" in third.output
    assert "missing_sources" not in json.loads((root / "docs/days/2026-08-21.json").read_text())
