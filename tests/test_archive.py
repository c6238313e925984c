"""`chronicle archive` against a local Save Page Now 2 server (snapshot/archive.py,
sources/wayback.py, store/mementos.py): jobs that succeed after pending polls, stay pending,
end in an error or meet a 429; nothing asked twice; the home page once a UTC day; the
mementos recorded, put in the hash chain by the next snapshot, published and verified;
the keys never written or printed."""

from __future__ import annotations

import base64
import json
import re
import shutil
import time
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from chronicle.config import load_config
from chronicle.errors import EXIT_FAILURE, EXIT_USAGE
from chronicle.snapshot import archive
from chronicle.snapshot.archive import Pacing, archive_site
from chronicle.sources.wayback import MAX_ANSWER_BYTES, SavePageNow, Unavailable, WaybackKeys
from chronicle.store import Store
from tests.support.commands import cli, night, take_nights
from tests.support.config import scaffold_simulated
from tests.support.fakes.wayback_server import FakeWayback

ACCESS = "AKIA-chronicle-test-access-7f3e9b"
SECRET = "s3cr3t-chronicle-test-secret-c0ffee42"
SITE = "https://chronicle.marin-run.org/"  # where the test chronicle says it is published
DAYS = ["2026-08-22", "2026-08-21", "2026-08-20"]  # sealed by nights 1-3, newest first
# poll_for: a job the fake keeps pending is given up after it; one the fake answers after
# two pending polls must not be, also on a machine busy with the rest of the suite.
FAST = Pacing(captures_per_minute=60_000, poll_every=0.01, poll_for=2.0, backoff=0.01,
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


def _pending(root: Path) -> tuple[Path, dict[str, Any]]:
    (path,) = (root / "docs/mementos").glob("*.json")
    return path, json.loads(path.read_text())


# What a record found in docs/mementos may hold that the next snapshot must not chain:
# (which entry, field, value) and what the refusal says.
def _hostile(archive: str) -> dict[str, tuple[str, str, object, str]]:
    day = _day_url("2026-08-21")
    return {
        "script in a memento": ("mementos", "memento",
                                f'{archive}/web/20260824040000/x"><script>alert(8)</script>',
                                "memento: not a plain http(s) URL"),
        "a javascript: memento": ("mementos", "memento", "javascript:alert(1)",
                                  "memento: not a plain http(s) URL"),
        "a copy on another host": ("mementos", "memento",
                                   f"https://evil.example/web/20260824040000/{day}",
                                   "is not the archive's copy of the page"),
        "another site's page": ("mementos", "url", "https://evil.example/days/2026-08-21.html",
                                "is not this chronicle's page of 2026-08-21"),
        "a day never sealed": ("mementos", "day", "2026-08-25",
                               "2026-08-25 is not a sealed day"),
        "a time that is no time": ("mementos", "datetime", "yesterday", "Invalid isoformat"),
        "escapes in a reason": ("attempts", "reason", "error:x \x1b]0;pwned\x07\x1b[2J",
                                "attempts[0].reason: holds control characters"),
    }


@pytest.mark.parametrize("case", sorted(_hostile("http://127.0.0.1:1")))
def test_a_record_that_is_not_this_chronicles_is_never_chained(
        root: Path, spn: FakeWayback, case: str) -> None:
    spn.plans[_day_url("2026-08-20")] = "error"  # one attempt in the record too
    assert cli("archive", "--dir", str(root)).exit_code == 0
    path, record = _pending(root)
    kind, field, value, said = _hostile(spn.url)[case]
    entry = next(e for e in record[kind] if e["day"] == ("2026-08-21" if kind == "mementos"
                                                         else "2026-08-20"))
    entry[field] = value
    path.write_text(json.dumps(record))
    result = cli("snapshot", "--dir", str(root), "--as-of", night(4))
    assert result.exit_code == EXIT_USAGE and isinstance(result.exception, SystemExit)
    assert f"{path}: " in result.output and said in result.output, result.output
    assert "was not put in the chain" in result.output or "mementos record is damaged" \
        in result.output
    assert not (root / "docs/data/2026-08-24T031700Z").exists()  # nothing fetched or written
    assert "\x1b" not in result.output
    # Removed (it was never in the chain), the next snapshot goes on.
    path.unlink()
    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code == 0
    assert cli("verify", "--dir", str(root)).exit_code == 0


def test_a_record_from_another_archive_needs_that_archive_named(
        root: Path, spn: FakeWayback, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("archive", "--dir", str(root)).exit_code == 0
    monkeypatch.delenv("WAYBACK_API_URL")  # the snapshot expects the Internet Archive's
    result = cli("snapshot", "--dir", str(root), "--as-of", night(4))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "is not the archive's copy" in result.output and "WAYBACK_API_URL" in result.output
    monkeypatch.setenv("WAYBACK_API_URL", spn.url)
    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code == 0


@pytest.mark.parametrize("value", ['https://web.archive.org/"><script>', "https://a b/",
                                   "javascript:alert(1)", "https://user:pw@web.archive.org"])
def test_wayback_api_url_follows_the_rule_of_site_url(
        root: Path, spn: FakeWayback, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("WAYBACK_API_URL", value)
    for command in (["archive"], ["snapshot", "--as-of", night(4)]):
        result = cli(command[0], "--dir", str(root), *command[1:])
        assert result.exit_code == EXIT_USAGE, (command, result.output)
        assert "WAYBACK_API_URL=" in result.output and "plain http(s) URL" in result.output
        assert ":pw@" not in result.output  # shown without its credentials
    assert spn.log == []


ECHOES: dict[str, Callable[[str], str]] = {
    "percent-encoded": lambda auth: urllib.parse.quote(auth, safe=""),
    "every byte percent-encoded": lambda auth: "".join(f"%{b:02X}" for b in auth.encode()),
    "encoded twice": lambda auth: urllib.parse.quote(urllib.parse.quote(auth, safe=""),
                                                     safe=""),
    "in upper case": str.upper,
    "in lower case": str.lower,
    "base64": lambda auth: base64.b64encode(auth.encode()).decode(),
    "base64, URL-safe, inside more": lambda auth: base64.urlsafe_b64encode(
        b"Authorization: " + auth.encode() + b"\r\n").decode(),
    "hex": lambda auth: auth.encode().hex(),
}


@pytest.mark.parametrize("form", sorted(ECHOES))
def test_the_keys_echoed_in_another_form_are_never_written_or_printed(
        root: Path, spn: FakeWayback, form: str) -> None:
    spn.plans[_day_url(DAYS[0])] = "reject"
    spn.echo_auth, spn.echo_form = True, ECHOES[form]
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0 and "1 failed" in result.output, result.output
    (record,) = _records(root)
    said = result.output + json.dumps(record)
    forms = [f(s) for f in ECHOES.values() for s in (ACCESS, SECRET)]
    forms += [base64.b64encode(s.encode()).decode()[:-4] for s in (ACCESS, SECRET)]
    for leak in [*forms, ACCESS, SECRET, ACCESS.upper(), SECRET.upper()]:
        assert leak not in said, (form, leak)
    assert "***" in json.dumps(record)


def test_terminal_escapes_in_the_archives_words_are_neither_printed_nor_stored(
        root: Path, spn: FakeWayback) -> None:
    spn.say = " \x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[2J\x1b[31mred\x9b1m"
    spn.plans.update({_day_url(DAYS[0]): "reject", _day_url(DAYS[1]): "error"})
    result = cli("archive", "--dir", str(root))
    assert result.exit_code == 0 and "2 failed" in result.output, result.output
    (path,) = (root / "docs/mementos").glob("*.json")
    for text in (result.output, path.read_text()):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), repr(text)
    assert "click" in path.read_text() and "red" in path.read_text()  # the words stay
    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code == 0  # chained


def test_a_slow_archive_is_cut_off_at_the_requests_time(spn: FakeWayback) -> None:
    # One byte every 0.2 s never trips a per-read timeout; the request's whole time does.
    spn.drip, spn.pad = 0.2, 200
    started = time.monotonic()
    with SavePageNow(spn.url, WaybackKeys(ACCESS, SECRET), timeout=1.0) as client, \
            pytest.raises(Unavailable, match=r"no whole answer .* within 1 s"):
        client.submit(SITE)
    assert time.monotonic() - started < 3.0


def test_an_oversized_answer_is_not_read_whole(spn: FakeWayback) -> None:
    spn.pad = 8 * MAX_ANSWER_BYTES
    with SavePageNow(spn.url, WaybackKeys(ACCESS, SECRET)) as client, \
            pytest.raises(Unavailable, match="an answer longer than"):
        client.submit(SITE)


def test_a_forged_record_in_the_chain_is_named_never_published(
        root: Path, spn: FakeWayback) -> None:
    # Someone who can rewrite the chain puts script in a record already chained.
    from chronicle.store import sha256_bytes
    from tests.support.chain import rewrite_manifest

    assert cli("archive", "--dir", str(root)).exit_code == 0
    assert cli("snapshot", "--dir", str(root), "--as-of", night(4)).exit_code == 0
    path, record = _pending(root)
    record["mementos"][1]["memento"] = 'https://web.archive.org/x"><script>alert(8)</script>'
    blob = json.dumps(record).encode()
    path.write_bytes(blob)
    sid = "2026-08-24T031700Z"
    manifest = json.loads((root / "docs/data" / sid / "MANIFEST.json").read_text())
    manifest["mementos"][f"mementos/{path.name}"] = {"sha256": sha256_bytes(blob),
                                                     "size": len(blob)}
    rewrite_manifest(root / "docs", sid, manifest)
    verify = cli("verify", "--dir", str(root))
    assert verify.exit_code == EXIT_FAILURE
    assert f"FAIL docs/mementos/{path.name}: in the chain, but unreadable" in verify.output
    built = cli("build", "--dir", str(root))
    assert built.exit_code == EXIT_USAGE and "memento: not a plain http(s) URL" in built.output
    assert not (root / "site").exists() or "<script>alert(8)" not in "".join(
        p.read_text(errors="replace") for p in (root / "site").rglob("*.html"))
