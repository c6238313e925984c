"""The live GitHub fetcher: real PyGithub against a fake REST server on 127.0.0.1."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chronicle.config import RunConfig, parse_config
from chronicle.errors import SourceError
from chronicle.sources.github import fetch_github
from tests.support.fakes.github_server import FakeGithub

SENTINEL = "ghp_SENTINEL0123456789abcdefSENTINEL"
REPO = "marin-community/marin"
ISSUES = f"/repos/{REPO}/issues"


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# Simulated nightly snapshots (as_of) of the run's first days.
NIGHTS = [t("2026-08-21T02:00"), t("2026-08-22T02:00"), t("2026-08-22T16:00"),
          t("2026-08-23T02:00"), t("2026-08-24T02:00"), t("2026-08-24T03:00")]
END = NIGHTS[-1]


def make_config(**github: Any) -> RunConfig:
    section = {"repo": REPO, "issues": [8506, 8317], "labels": ["hero-run"],
               "failure_labels": ["incident"], "max_rate_limit_wait_seconds": 1, **github}
    return parse_config({
        "run": {"name": "test", "start": "2026-08-20", "planned_days": 100,
                "token_budget": 18.0e12, "accelerators": {"kind": "GB200", "count": 704}},
        "wandb": {"entity": "e", "project": "p", "runs": ["r"]},
        "github": section,
        "site": {"url": "https://example.org/"},
    }, Path("."))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGithub]:
    with FakeGithub.from_fixture() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake


def fetch(since: datetime | None = None, as_of: datetime = END, **github: Any):
    return fetch_github(make_config(**github), since, as_of, token=SENTINEL)


def test_labels_and_numbers_merge_without_duplicates_and_skip_prs(server: FakeGithub) -> None:
    result = fetch()
    numbers = [th.number for th in result.threads]
    # 8317 is both configured and labelled, 8508 carries both labels: each appears once.
    assert numbers == [8317, 8506, 8508, 8578]
    assert 8612 not in numbers  # a pull request with the hero-run label
    assert result.detail == {"threads": 4, "comments": 17 + 8 + 5 + 2,
                             "requests": len(server.requests)}
    paths = server.paths()
    # Only the configured issue not found through a label is fetched on its own, and no
    # listed issue is completed by a second GET.
    assert [p for p in paths if p.startswith(ISSUES + "/") and "comments" not in p] == [
        f"{ISSUES}/8506"
    ]
    listing = [r.query for r in server.requests if r.path == ISSUES]
    assert [q["labels"] for q in listing] == ["hero-run", "incident"]
    assert all(q["state"] == "all" and q["sort"] == "updated" for q in listing)
    assert all(r.authorization == f"token {SENTINEL}" for r in server.requests)


def test_thread_fields_come_from_the_rest_payloads(server: FakeGithub) -> None:
    threads = {th.number: th for th in fetch().threads}
    oom = threads[8508]
    assert (oom.state, oom.author, oom.closed_at) == ("closed", "mcwitt", t("2026-08-23T14:40:20"))
    assert oom.labels == ("agent-generated", "hero-run", "incident")
    assert oom.url == "https://github.com/marin-community/marin/issues/8508"
    status = threads[8506]
    assert status.reactions == {"+1": 4, "rocket": 2}
    first = status.comments[0]
    assert (first.id, first.author, first.reactions) == (5363258940, "rjpower", {"eyes": 1})
    assert first.edited and first.body.endswith("MFU near 21%.")
    assert [c.created_at for c in status.comments] == sorted(c.created_at for c in status.comments)


def test_pagination_follows_link_headers(server: FakeGithub) -> None:
    whole = fetch().threads
    server.requests.clear()
    server.max_per_page = 5
    paged = fetch()
    assert paged.threads == whole
    pages = [r for r in server.requests if r.path == f"{ISSUES}/8317/comments"]
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3", "4"]  # 17 comments
    assert paged.detail["requests"] == len(server.requests)


def test_incremental_nights_see_each_change_once(server: FakeGithub) -> None:
    seen: list[list[int]] = []
    latest: dict[int, Any] = {}
    since = None
    for night in NIGHTS:
        server.now = night
        result = fetch(since, night)
        seen.append([th.number for th in result.threads])
        latest.update({th.number: th for th in result.threads})
        assert all(since is None or th.updated_at > since or th.number == 8506
                   for th in result.threads)
        since = night
    assert seen == [
        [8317, 8506, 8508],  # first snapshot: everything tracked that exists
        [8506, 8508],  # new comments on both
        [8317, 8506, 8578],  # 8578 opened with the incident label
        [8317, 8506],  # 8506 only had a comment edited
        [8506, 8508, 8578],  # 8508 closed
        [],  # only a labelled pull request appeared
    ]
    # Stitching the nights together gives the same state as one full fetch.
    server.now = END
    assert latest == {th.number: th for th in fetch(None, END).threads}


def test_edited_comment_keeps_its_id_with_new_body(server: FakeGithub) -> None:
    server.now = NIGHTS[2]
    before = fetch(NIGHTS[1], NIGHTS[2])
    server.now = NIGHTS[3]
    server.requests.clear()
    after = fetch(NIGHTS[2], NIGHTS[3])

    def comment(result: Any) -> Any:
        thread = next(th for th in result.threads if th.number == 8506)
        return next(c for c in thread.comments if c.id == 5381228200)

    old, new = comment(before), comment(after)
    assert old.created_at == new.created_at and not old.edited and new.edited
    assert new.updated_at == t("2026-08-22T17:21:19") and "9300" in new.body and "9000" in old.body
    # The issue's own updated_at did not move: the edit was found through comments?since=.
    checks = [r.query for r in server.requests if r.path == f"{ISSUES}/8506/comments"]
    assert checks[0]["since"] == "2026-08-22T16:00:00Z"


def test_items_updated_after_as_of_are_ignored(server: FakeGithub) -> None:
    # The server shows today's state; a replay of an earlier night must not mix it in.
    result = fetch(t("2026-08-23T02:00"), t("2026-08-24T00:00"))
    assert [th.number for th in result.threads] == [8508, 8578]
    assert all(th.updated_at <= t("2026-08-24T00:00") for th in result.threads)


def test_since_is_sent_in_utc(server: FakeGithub) -> None:
    from datetime import timedelta, timezone

    since = datetime(2026, 8, 23, 4, 0, tzinfo=timezone(timedelta(hours=2)))
    fetch(since, END)
    assert {r.query["since"] for r in server.requests if r.path == ISSUES} == {
        "2026-08-23T02:00:00Z"
    }
    with pytest.raises(ValueError, match="naive"):
        fetch_github(make_config(), datetime(2026, 8, 23), END)  # noqa: DTZ001


def test_transient_5xx_is_retried(server: FakeGithub) -> None:
    server.failure, server.fail_times = "500", 2
    result = fetch()
    assert len(result.threads) == 4
    assert len(server.requests) == result.detail["requests"] + 2


@pytest.mark.parametrize(
    ("mode", "fail_path", "expect", "attempts"),
    [
        ("500", "", ["kept failing", "githubstatus", REPO], 4),
        ("401", "", ["401 Bad credentials", "GITHUB_TOKEN"], 1),
        ("rate_limit", "/issues", ["rate limit", "asks to wait 36", "max_rate_limit_wait_seconds",
                                   "issues labelled 'hero-run' of " + REPO], 1),
        ("secondary", "", ["secondary rate limit", "max_rate_limit_wait_seconds"], 4),
        ("secondary_retry_after", "", ["rate limit", "asks to wait 3600 s"], 1),
        ("malformed", "/8317/comments", ["malformed", "comments of issue #8317 of " + REPO], 1),
    ],
)
def test_failures_raise_a_clear_source_error(
    server: FakeGithub, caplog: pytest.LogCaptureFixture,
    mode: str, fail_path: str, expect: list[str], attempts: int,
) -> None:
    caplog.set_level(logging.DEBUG)
    server.failure, server.fail_path = mode, fail_path
    with pytest.raises(SourceError) as info:
        fetch()
    message = str(info.value)
    assert message.startswith("github: ")
    for part in expect:
        assert part in message
    assert info.value.__cause__ is not None
    failed = [r for r in server.requests if fail_path in r.path]
    assert len(failed) == attempts  # bounded: no wait for the reset an hour away
    # The token was sent, yet appears in no message or log record.
    assert failed[0].authorization == f"token {SENTINEL}"
    assert SENTINEL not in message
    assert not [r for r in caplog.records if SENTINEL in r.getMessage()]


def test_unknown_repo_names_the_setting(server: FakeGithub) -> None:
    with pytest.raises(SourceError, match=r"marin-community/nope.*github\.repo"):
        fetch(repo="marin-community/nope")


def test_token_from_environment_or_none(server: FakeGithub,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fetch_github(make_config(), None, END)
    assert {r.authorization for r in server.requests} == {None}  # public repos need none
    server.requests.clear()
    monkeypatch.setenv("GITHUB_TOKEN", SENTINEL)
    fetch_github(make_config(), None, END)
    assert {r.authorization for r in server.requests} == {f"token {SENTINEL}"}


def test_importing_the_module_does_not_import_pygithub() -> None:
    code = "import sys, chronicle.sources.github; print('github' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("status", "url", "secondary"), [
    (403, "https://api.github.com/repos/o/r/issues/1", True),
    (500, "http://127.0.0.1:40353/repos/o/r/pulls?page=403", False),
    (502, "http://127.0.0.1:8000/repos/o/r/issues", False),
])
def test_retries_that_gave_up_are_told_by_the_status_not_the_url(status: int, url: str,
                                                                 secondary: bool) -> None:
    # A 500 from a server on port 40353 once read as a secondary rate limit (a 403).
    from requests.exceptions import RetryError
    from urllib3.exceptions import MaxRetryError, ResponseError

    from chronicle.sources.github_failures import retry_message

    reason = ResponseError(ResponseError.SPECIFIC_ERROR.format(status_code=status))
    err = RetryError(MaxRetryError(None, url, reason))
    said = retry_message(err, "pull requests of o/r", 1.0)
    assert ("secondary rate limit" in said) is secondary
    assert ("kept failing" in said) is not secondary
