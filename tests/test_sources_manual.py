"""Failure records from failures.yml and from issues carrying a failure label."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from chronicle.config import RunConfig
from chronicle.errors import ConfigError
from chronicle.models import Thread
from chronicle.sources.manual import failures_from_threads, load_failures_file
from tests.support.config import make_config

URL = "https://github.com/marin-community/marin/issues/8508"


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def write(tmp_path: Path, text: str, **overrides: object) -> RunConfig:
    (tmp_path / "failures.yml").write_text(text, encoding="utf-8")
    return make_config(tmp_path, **overrides)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_failures_file(write(tmp_path, text))
    assert info.value.path == str(tmp_path / "failures.yml")
    return info.value.problems


def test_missing_or_empty_file_means_no_records(tmp_path: Path) -> None:
    assert load_failures_file(make_config(tmp_path)) == []
    assert load_failures_file(write(tmp_path, "# nothing yet\n")) == []
    assert load_failures_file(write(tmp_path, "[]\n")) == []
    assert load_failures_file(make_config(tmp_path, failures__file=None)) == []


def test_records_are_parsed_with_defaults(tmp_path: Path) -> None:
    config = write(tmp_path, f"""
- id: rack-7-power
  start: 2026-08-21T02:00:00Z
  end: 2026-08-21T04:30:00Z
  what: Rack 7 lost power; the job restarted from step 170
  evidence: [{URL}]
- id: storage-slow
  start: 2026-08-20 23:00          # no zone: UTC
  what: Checkpoint bucket slow
  kind: gap
  accelerator_hours_lost: 12.5
  evidence: [{URL}#issuecomment-5363371163]
- id: ongoing
  start: 2026-08-22
  what: Still investigating
  evidence: [{URL}]
""")
    records = {r.id: r for r in load_failures_file(config)}
    assert [r.id for r in load_failures_file(config)] == ["storage-slow", "rack-7-power", "ongoing"]
    rack = records["rack-7-power"]
    assert (rack.kind, rack.source, rack.start, rack.end) == (
        "manual", "manual", t("2026-08-21T02:00"), t("2026-08-21T04:30"))
    assert rack.accelerator_hours_lost == pytest.approx(704 * 2.5)  # count x duration
    assert rack.evidence == (URL,)
    slow = records["storage-slow"]
    assert (slow.kind, slow.start) == ("gap", t("2026-08-20T23:00"))
    assert slow.accelerator_hours_lost == 12.5
    ongoing = records["ongoing"]
    assert (ongoing.start, ongoing.end, ongoing.accelerator_hours_lost) == (
        t("2026-08-22T00:00"), None, None)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    found = problems(tmp_path, f"""
- id: a
  strat: 2026-08-21T02:00:00Z
  what: typo in a key
  evidence: [{URL}]
- id: b
  start: yesterday
  end: 2026-08-20T00:00:00Z
  what: ""
  kind: meteor
  accelerator_hours_lost: -3
  evidence: not-a-list
- id: a
  start: 2026-08-21T02:00:00Z
  end: 2026-08-21T01:00:00Z
  what: ends before it starts
  evidence: [ftp://example.org/x]
- just a string
""")
    expected = [
        "[0].strat: unknown key (did you mean 'start'?)",
        "[0].start: missing (required)",
        "[1].start: expected a UTC time like 2026-09-02T04:10:00Z, got 'yesterday'",
        "[1].what: expected a sentence",
        "[1].kind: expected one of issue, manual,",
        "[1].accelerator_hours_lost: expected a number >= 0, got -3",
        "[1].evidence: expected a list of one or more http(s) URLs",
        "[2].end: 2026-08-21T01:00:00Z is before start 2026-08-21T02:00:00Z",
        "[2].evidence: expected a list",
        "[3]: expected a mapping with id, start, what, evidence",
    ]
    for part in expected:
        assert any(p.startswith(part) for p in found), (part, found)
    assert len(found) == len(expected)


def test_ids_must_be_unique(tmp_path: Path) -> None:
    record = f"  start: 2026-08-21T02:00:00Z\n  what: x\n  evidence: [{URL}]\n"
    found = problems(tmp_path, f"- id: dup\n{record}- id: other\n{record}- id: dup\n{record}")
    assert found == ["[2].id: 'dup' is already the id of [0]; ids must be unique and never reused"]


def test_not_a_list_and_bad_yaml(tmp_path: Path) -> None:
    assert "expected a YAML list" in problems(tmp_path, "id: x\nstart: 2026-08-21\n")[0]
    assert "not valid YAML at line 3" in problems(tmp_path, "- id: x\n  what: [unclosed\n")[0]


def thread(number: int, labels: tuple[str, ...], closed: str | None = None,
           updated: str = "2026-08-21T16:54:26") -> Thread:
    return Thread(number=number, title=f"issue {number}", body="", labels=labels,
                  state="closed" if closed else "open", author="mcwitt",
                  created_at=t("2026-08-20T23:21:56"), updated_at=t(updated),
                  closed_at=t(closed) if closed else None,
                  url=f"https://github.com/marin-community/marin/issues/{number}")


def test_issues_with_a_failure_label_become_records(tmp_path: Path) -> None:
    config = make_config(tmp_path)  # failure_labels: [incident]
    threads = [thread(8508, ("bug", "incident"), closed="2026-08-23T14:40:20"),
               thread(8578, ("incident",)), thread(8317, ("hero-run",))]
    records = failures_from_threads(threads, config)
    assert [r.id for r in records] == ["gh-8508", "gh-8578"]
    closed, open_ = records
    assert (closed.kind, closed.source, closed.what) == ("issue", "github", "issue 8508")
    assert (closed.start, closed.end) == (t("2026-08-20T23:21:56"), t("2026-08-23T14:40:20"))
    assert closed.evidence == (URL,)
    assert closed.accelerator_hours_lost == pytest.approx(704 * (2 * 86400 + 55104) / 3600)
    assert (open_.end, open_.accelerator_hours_lost) == (None, None)


def test_the_same_issue_on_later_nights_keeps_its_id(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    night1 = failures_from_threads([thread(8508, ("incident",))], config)
    night2 = failures_from_threads(
        [thread(8508, ("incident",)),
         thread(8508, ("incident",), closed="2026-08-23T14:40:20", updated="2026-08-23T14:40:20")],
        config,
    )
    assert [r.id for r in night1] == [r.id for r in night2] == ["gh-8508"]
    assert night1[0].end is None and night2[0].end == t("2026-08-23T14:40:20")


def test_a_failures_file_named_in_chronicle_yml_must_exist(tmp_path: Path) -> None:
    config = make_config(tmp_path, failures__file="incidents.yml")
    with pytest.raises(ConfigError) as info:
        load_failures_file(config)
    assert info.value.path == str(tmp_path / "chronicle.yml")
    assert info.value.problems == [
        f"failures.file: incidents.yml does not exist in {tmp_path}; create it (a YAML list, "
        "[] while there are no records) or remove the key (then failures.yml is read when it "
        "exists)"]
    (tmp_path / "incidents.yml").write_text(f"- id: a\n  start: 2026-08-21\n  what: x\n"
                                            f"  evidence: [{URL}]\n", encoding="utf-8")
    assert [r.id for r in load_failures_file(config)] == ["a"]
    explicit_default = make_config(tmp_path, failures__file="failures.yml")
    with pytest.raises(ConfigError, match=r"failures\.file: failures\.yml does not exist"):
        load_failures_file(explicit_default)


def test_times_that_do_not_exist_or_are_absurd_are_refused(tmp_path: Path) -> None:
    found = problems(tmp_path, f"""
- id: a
  start: 2026-02-30T04:10:00Z
  end: 0001-01-01
  what: x
  accelerator_hours_lost: .inf
  evidence: [{URL}, "https://x.org/\\"onload=x"]
""")
    assert found[:3] == [
        "[0].start: expected a UTC time like 2026-09-02T04:10:00Z, got '2026-02-30T04:10:00Z' "
        "(day is out of range for month)",
        "[0].end: expected a UTC time like 2026-09-02T04:10:00Z, got 0001-01-01 "
        "(outside 1970 to 2100)",
        "[0].accelerator_hours_lost: expected a number >= 0, got .inf (NaN and infinity are "
        "not numbers a chronicle can use)",
    ]
    assert len(found) == 4 and found[3].startswith("[0].evidence: expected a list of one or ")
    assert found[3].endswith("""'https://x.org/"onload…""")  # a quote in a link is refused


def test_non_utf8_and_duplicate_keys_name_the_failures_file(tmp_path: Path) -> None:
    (tmp_path / "failures.yml").write_bytes(b"- id: caf\xe9\n")
    with pytest.raises(ConfigError) as info:
        load_failures_file(make_config(tmp_path))
    assert info.value.path == str(tmp_path / "failures.yml")
    assert info.value.problems == [
        "not UTF-8 text: byte 0xe9 at line 1, column 10; save the file as UTF-8"]
    found = problems(tmp_path, "- id: a\n  id: b\n")
    assert found == ["[0].id: key written twice (lines 1 and 2); YAML would keep only the "
                     "last: delete one"]
