"""A week's release notes (`chronicle release-notes`): its sealed days with their sha256,
SWHID (checked against git itself) and mementos; nothing while the week can still change."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.cli import main as cli
from chronicle.site.publish.release import parse_week, release_notes, week_of, week_release
from chronicle.store import Store
from tests.support.site_factory import Built, make_chronicle

W34 = parse_week("2026-W34")  # 2026-08-17 .. 2026-08-23; the chronicle seals 08-20 .. 08-23


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("release") / "c", nights=4)


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day + "T04:00:00+00:00").astimezone(UTC)


def test_weeks_are_iso_weeks() -> None:
    assert (W34.monday.isoformat(), W34.sunday.isoformat(), W34.tag) == \
        ("2026-08-17", "2026-08-23", "week-2026-W34")
    assert week_of(W34.sunday) == W34 and parse_week("2027-W01").monday.isoformat() == "2027-01-04"
    for bad in ("2026-47", "2026-W54", "2025-W53", "W47", "2026-W47\n", " 2026-W47",
                "２０２６-W47", "2026-W٤٧"):  # whole, and in ASCII digits only
        with pytest.raises(Exception, match="expected an ISO week"):
            parse_week(bad)


def test_a_closed_week_lists_its_sealed_days(made: Built, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "api").mkdir(parents=True)
    memento = "https://web.archive.org/web/20260822101500/https://example.org/chronicle/days/2026-08-21.html"
    (site / "api" / "mementos.json").write_text(json.dumps([
        {"url": "https://example.org/chronicle/days/2026-08-21.html", "memento": memento,
         "datetime": "2026-08-22T10:15:00Z", "day": "2026-08-21"},
        {"url": "https://example.org/chronicle/", "memento": "https://web.archive.org/web/1/x",
         "datetime": "2026-08-22T10:16:00Z", "day": None},
        {"day": "2026-08-22", "memento": "javascript:alert(1)", "datetime": "x"},
    ]))
    release = week_release(made.config, W34, _at("2026-08-24"), site)
    assert release.wait == ""
    assert [d.date.isoformat() for d in release.days] == \
        ["2026-08-20", "2026-08-21", "2026-08-22", "2026-08-23"]
    store = Store(made.config.docs_dir)
    docs = made.config.docs_dir
    for d in release.days:
        page = docs / "days" / f"{d.date}.md"
        blob = subprocess.run(["git", "hash-object", str(page)], capture_output=True,
                              text=True, check=True).stdout.strip()
        assert d.swhid == f"swh:1:cnt:{blob}"
        snap = store.sealed_days()[d.date]
        assert (d.sealed_by, d.sha256) == \
            (snap.id, snap.sealed[d.date.isoformat()][f"days/{d.date}.md"]["sha256"])
    assert release.days[1].mementos == (("2026-08-22T10:15:00Z", memento),)
    assert release.warnings == (f"{site}/api/mementos.json: 1 entry without a day, time or "
                                "memento URL left out",)
    notes = release_notes(made.config, release)
    assert notes.startswith("Week 2026-W34 (2026-08-17 to 2026-08-23) of ")
    assert f"[2026-08-22T10:15:00Z]({memento})" in notes and "javascript" not in notes
    assert notes.count("\n| [2026-08-2") == 4 and notes.count("none yet") == 3


def test_a_week_waits_until_it_cannot_change(made: Built) -> None:
    w35 = parse_week("2026-W35")
    assert "has not ended" in week_release(made.config, w35, _at("2026-08-29")).wait
    # Its Sunday is not sealed, and could still be (sealing.max_wait_days is 7).
    assert "2026-08-30 is not sealed yet" in week_release(made.config, w35, _at("2026-09-03")).wait
    # Once no day of it can be sealed any more: released if it has days; this has none.
    assert "no day of it is sealed" in week_release(made.config, w35, _at("2026-09-10")).wait
    # Without a mementos file (the site not built), nothing is listed, nothing fails.
    assert all(d.mementos == () for d in week_release(made.config, W34, _at("2026-09-10")).days)


def test_the_command_prints_the_notes_or_nothing(made: Built) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["release-notes", "--dir", str(made.root), "--week", "2026-W34"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Week 2026-W34 ") and "swh:1:cnt:" in result.stdout
    empty = runner.invoke(cli, ["release-notes", "--dir", str(made.root), "--week", "2026-W30"])
    assert (empty.exit_code, empty.stdout) == (0, "")
    assert "no release: week 2026-W30: no day of it is sealed" in empty.stderr
    bad = runner.invoke(cli, ["release-notes", "--dir", str(made.root), "--week", "47"])
    assert bad.exit_code == 2 and "expected an ISO week" in bad.output


@pytest.mark.parametrize(("content", "said"), [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
    (b'{"mementos": ' + b"[" * 900 + b"]" * 900 + b"}", "nested deeper than 64 levels"),
    (b"\xff\xfe", "not read"),
])
def test_a_hostile_site_mementos_file_is_a_warning_never_a_traceback(
        made: Built, tmp_path: Path, content: bytes, said: str) -> None:
    site = tmp_path / "site"
    (site / "api").mkdir(parents=True)
    (site / "api" / "mementos.json").write_bytes(content)
    result = CliRunner().invoke(cli, ["release-notes", "--dir", str(made.root), "--week",
                                      "2026-W34", "--site-dir", str(site)])
    assert result.exit_code == 0 and result.exception is None, result.output
    assert said in result.stderr and "the notes list no memento" in result.stderr
    assert result.stdout.count("none yet") == 4
