"""`chronicle archive` against a local Save Page Now 2 server (snapshot/archive.py,
sources/wayback.py, store/mementos.py): jobs that succeed after pending polls, stay pending,
end in an error or meet a 429; nothing asked twice; the home page once a UTC day; the
mementos recorded, put in the hash chain by the next snapshot, published and verified;
the keys never written or printed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.errors import EXIT_FAILURE, EXIT_USAGE
from chronicle.snapshot import archive
from chronicle.snapshot.archive import Pacing, archive_site
from chronicle.sources.wayback import WaybackKeys
from chronicle.store import Store
from tests.support.commands import cli, night, take_nights
from tests.support.config import scaffold_simulated
from tests.support.fakes.wayback_server import FakeWayback

ACCESS = "AKIA-chronicle-test-access-7f3e9b"
SECRET = "s3cr3t-chronicle-test-secret-c0ffee42"
SITE = "https://chronicle.marin-run.org/"  # where the test chronicle says it is published
DAYS = ["2026-08-22", "2026-08-21", "2026-08-20"]  # sealed by nights 1-3, newest first
FAST = Pacing(captures_per_minute=60_000, poll_every=0.01, poll_for=0.3, backoff=0.01,
              backoff_tries=2, per_night=30, run_for=60, max_attempts=3)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chronicle with three nights taken: three sealed days (copied by each test)."""
    root = scaffold_simulated(tmp_path_factory.mktemp("archive") / "c")
    # The scaffold's example.org cannot be captured (check_archivable refuses it).
    config = root / "chronicle.yml"
    config.write_text(config.read_text().replace("https://example.org/chronicle/", SITE))
    take_nights(root)
    return root


@pytest.fixture
def root(sealed: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sealed, tmp_path / "c", symlinks=True))


@pytest.fixture
def spn(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeWayback]:
    with FakeWayback(ACCESS, SECRET) as fake:
        monkeypatch.setenv("WAYBACK_S3_ACCESS_KEY", ACCESS)
        monkeypatch.setenv("WAYBACK_S3_SECRET_KEY", SECRET)
        monkeypatch.setenv("WAYBACK_API_URL", fake.url)
        monkeypatch.setattr(archive, "PACING", FAST)
        yield fake


def _day_url(day: str) -> str:
    return f"{SITE}days/{day}.html"


def _records(root: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((root / "docs/mementos").glob("*.json"))]


def test_captures_are_recorded_and_a_second_run_asks_nothing(
        root: Path, spn: FakeWayback) -> None:
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "archive: 4 captured, 0 pending, 0 failed, 0 deferred" in result.output
    # The home page first, then the days newest first; each job polled past its pendings.
    assert spn.submitted() == [SITE, *map(_day_url, DAYS)]
    assert all(job.polls == 3 for job in spn.jobs.values())
    (record,) = _records(root)
    got = {m["url"]: m for m in record["mementos"]}  # type: ignore[attr-defined]
    day = got[_day_url("2026-08-21")]
    assert day["day"] == "2026-08-21" and got[SITE]["day"] is None
    stamp = datetime.fromisoformat(str(day["datetime"])).strftime("%Y%m%d%H%M%S")
    assert day["memento"] == f"{spn.url}/web/{stamp}/{_day_url('2026-08-21')}"
    asked = len(spn.log)

    again = cli("archive", "--dir", str(root))
    assert again.exit_code == 0, again.output
    assert "archive: 0 captured, 0 pending, 0 failed, 0 deferred" in again.output
    assert len(spn.log) == asked  # nothing asked: not even the home page, archived today
    assert len(_records(root)) == 1  # nothing learnt, nothing written


def test_the_home_page_is_asked_for_once_a_utc_day(root: Path, spn: FakeWayback) -> None:
    config = load_config(root)
    keys = WaybackKeys(ACCESS, SECRET)
    spn.on_day = "20260901"
    first = archive_site(config, datetime(2026, 9, 1, 4, tzinfo=UTC), spn.url, keys, FAST)
    assert len(first.captured) == 4
    later = archive_site(config, datetime(2026, 9, 1, 23, 59, tzinfo=UTC), spn.url, keys, FAST)
    assert not later.captured and spn.submitted().count(SITE) == 1
    # The fake's captures are dated 2026-09-01; the next UTC day asks for the home page only.
    next_day = archive_site(config, datetime(2026, 9, 2, 4, tzinfo=UTC), spn.url, keys, FAST)
    assert [m.url for m in next_day.captured] == [SITE]
    assert spn.submitted().count(SITE) == 2 and len(spn.submitted()) == 5


def test_a_job_still_pending_is_carried_to_the_next_night(root: Path, spn: FakeWayback) -> None:
    spn.plans[_day_url("2026-08-21")] = "pending"
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "archive: 3 captured, 1 pending, 0 failed, 0 deferred" in result.output
    assert f"pending {_day_url('2026-08-21')}" in result.output
    (record,) = _records(root)
    assert _day_url("2026-08-21") not in json.dumps(record)  # neither memento nor attempt
    spn.plans.clear()
    again = cli("archive", "--dir", str(root))
    assert "archive: 1 captured, 0 pending, 0 failed, 0 deferred" in again.output
    assert spn.submitted()[-1] == _day_url("2026-08-21")


def test_a_job_that_errors_is_an_attempt_retried_up_to_a_limit(
        root: Path, spn: FakeWayback) -> None:
    spn.plans[_day_url("2026-08-20")] = "error"
    spn.plans[_day_url("2026-08-22")] = "reject"  # refused at submission: an error too
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "archive: 2 captured, 0 pending, 2 failed, 0 deferred" in result.output
    (record,) = _records(root)
    attempts = {a["url"]: a for a in record["attempts"]}  # type: ignore[attr-defined]
    assert attempts[_day_url("2026-08-20")]["reason"].startswith("error:not-found")
    assert attempts[_day_url("2026-08-22")]["reason"].startswith("error:blocked-url")
    assert {m["url"] for m in record["mementos"]} == {  # type: ignore[attr-defined]
        SITE, _day_url("2026-08-21")}
    for _ in range(2):  # asked again on later nights, three times in all
        assert "0 captured, 0 pending, 2 failed" in cli("archive", "--dir", str(root)).output
    final = cli("archive", "--dir", str(root))
    assert final.exit_code == 0
    assert "0 failed, 0 deferred, 2 given up after repeated errors" in final.output
    assert spn.submitted().count(_day_url("2026-08-20")) == 3


def test_a_rate_limit_backs_off_then_defers_the_rest_and_exits_0(
        root: Path, spn: FakeWayback) -> None:
    spn.limit_after = 1  # the home page is answered; every later submission gets 429
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert "archive: 1 captured, 0 pending, 0 failed, 3 deferred (rate limited: HTTP 429" \
        in result.output
    # Backed off twice on the first day page, then stopped asking.
    assert spn.submitted() == [SITE] + [_day_url(DAYS[0])] * 3
    spn.limit_after = None
    again = cli("archive", "--dir", str(root))
    assert "archive: 3 captured, 0 pending, 0 failed, 0 deferred" in again.output
    assert spn.submitted()[4:] == [_day_url(d) for d in DAYS]


def test_mementos_are_chained_published_and_verified(root: Path, spn: FakeWayback) -> None:
    assert cli("archive", "--dir", str(root)).exit_code == 0
    (rel,) = [p.relative_to(root / "docs").as_posix()
              for p in (root / "docs/mementos").glob("*.json")]
    store = Store(root / "docs")
    assert store.mementos() == [] and store.pending_memento_paths() == [rel]
    assert cli("verify", "--dir", str(root)).exit_code == 0  # pending: not a problem

    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code in (0, 3)
    manifest = json.loads((root / "docs/data/2026-08-24T031700Z/MANIFEST.json").read_text())
    assert list(manifest["mementos"]) == [rel]
    assert "mementos" not in json.loads(
        (root / "docs/data/2026-08-23T031700Z/MANIFEST.json").read_text())
    store = Store(root / "docs")
    memento = store.memento_of(date(2026, 8, 21))
    assert memento is not None and memento.url == _day_url("2026-08-21")
    assert memento.memento.startswith(f"{spn.url}/web/{memento.datetime:%Y%m%d%H%M%S}/")

    result = cli("build", "--dir", str(root))
    assert result.exit_code == 0, result.output
    published = json.loads((root / "site/api/mementos.json").read_text())
    assert {(m["url"], m["day"]) for m in published} == {
        (SITE, None), *((_day_url(d), d) for d in DAYS)}
    assert set(published[0]) == {"url", "memento", "datetime", "day"}
    assert not (root / "site/zh/api/mementos.json").exists()  # once, at the root
    # Each day's Cite box links its archived copy, in both editions, and its permalink is
    # a Robust Link whose data-versionurl is that copy.
    for edition in ("", "zh/"):
        page = (root / f"site/{edition}days/2026-08-21.html").read_text()
        assert memento.memento in page, edition
        assert (f'href="{_day_url("2026-08-21")}" data-originalurl="{_day_url("2026-08-21")}" '
                f'data-versiondate="2026-08-22" data-versionurl="{memento.memento}"') in page
    assert cli("verify", "--dir", str(root)).exit_code == 0

    path = root / "docs" / rel
    path.write_text(path.read_text().replace("2026-08-21", "2026-08-19"))
    tampered = cli("verify", "--dir", str(root))
    assert tampered.exit_code == EXIT_FAILURE
    assert f"FAIL docs/{rel}: altered" in tampered.output


def test_the_next_snapshot_refuses_a_damaged_pending_record(
        root: Path, spn: FakeWayback) -> None:
    assert cli("archive", "--dir", str(root)).exit_code == 0
    (path,) = (root / "docs/mementos").glob("*.json")
    path.write_text("{not json")
    assert "FAIL docs/mementos/" in cli("verify", "--dir", str(root)).output
    result = cli("snapshot", "--dir", str(root), "--as-of", night(4))
    assert result.exit_code == EXIT_USAGE and path.name in result.output
    assert not (root / "docs/data/2026-08-24T031700Z").exists()


def test_the_keys_are_never_written_or_printed(root: Path, spn: FakeWayback) -> None:
    spn.plans.update({_day_url(DAYS[0]): "reject", _day_url(DAYS[1]): "error",
                      _day_url(DAYS[2]): "pending"})
    spn.echo_auth = True  # the archive's message repeats the Authorization header
    outputs = [cli("archive", "--dir", str(root)).output]
    assert spn.log[0]["headers"]["Authorization"] == f"LOW {ACCESS}:{SECRET}"
    spn.limit_after = 0
    outputs.append(cli("archive", "--dir", str(root)).output)
    assert "deferred (rate limited" in outputs[-1]
    outputs.append(cli("snapshot", "--dir", str(root), "--as-of", night(4)).output)
    outputs.append(cli("build", "--dir", str(root)).output)
    outputs.append(cli("verify", "--dir", str(root)).output)
    assert "***" in json.dumps(_records(root))  # the echoed header, scrubbed
    for text in outputs:
        assert ACCESS not in text and SECRET not in text
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            blob = path.read_bytes()
            assert ACCESS.encode() not in blob and SECRET.encode() not in blob, path


def test_keys_missing_or_refused_are_one_message_exit_2(
        root: Path, spn: FakeWayback, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WAYBACK_S3_SECRET_KEY")
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE and "Traceback" not in result.output
    assert "WAYBACK_S3_SECRET_KEY not set" in result.output
    assert "repository secrets" in result.output and "WAYBACK_S3_ACCESS_KEY" in result.output
    monkeypatch.delenv("WAYBACK_S3_ACCESS_KEY")
    both = cli("archive", "--dir", str(root))
    assert "WAYBACK_S3_ACCESS_KEY and WAYBACK_S3_SECRET_KEY not set" in both.output
    assert spn.log == []  # nothing asked without keys

    monkeypatch.setenv("WAYBACK_S3_ACCESS_KEY", ACCESS)
    monkeypatch.setenv("WAYBACK_S3_SECRET_KEY", "wrong-" + SECRET)
    refused = cli("archive", "--dir", str(root))
    assert refused.exit_code == EXIT_USAGE
    assert "the archive refused the keys (HTTP 401)" in refused.output
    assert SECRET not in refused.output and ACCESS not in refused.output
    assert not (root / "docs/mementos").exists()


@pytest.mark.parametrize("url", ["https://example.org/chronicle/", "http://localhost:8000/",
                                 "https://runs.example/", "http://127.0.0.1/c/"])
def test_a_site_that_is_not_published_is_not_archived(
        root: Path, spn: FakeWayback, url: str) -> None:
    # The scaffold's example site.url (or a local one) would be a failed capture a night.
    config = root / "chronicle.yml"
    config.write_text(config.read_text().replace(SITE, url))
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE and "Traceback" not in result.output
    assert f"site.url: {url} is not a public address" in result.output
    assert "chronicle.yml" in result.output
    assert spn.log == [] and not (root / "docs/mementos").exists()
