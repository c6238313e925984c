"""Merged pull requests behind the run's changes (sources/pulls.py through
sources/github.py): real PyGithub against the fake REST server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chronicle.config import RunConfig, parse_config
from chronicle.errors import SourceError
from chronicle.sources.github import fetch_github
from chronicle.sources.pulls import select_pull
from tests.support.fakes.github_server import FakeGithub

REPO = "marin-community/marin"
PULLS = f"/repos/{REPO}/pulls"
PATHS = ["experiments/grug/moe_hero_ep/*"]
END = datetime(2026, 8, 28, 3, 17, tzinfo=UTC)


def make_config(**pulls: Any) -> RunConfig:
    return parse_config({
        "run": {"name": "test", "start": "2026-08-20", "planned_days": 100,
                "token_budget": 18.0e12, "accelerators": {"kind": "GB200", "count": 704}},
        "wandb": {"entity": "e", "project": "p", "runs": ["r"]},
        "github": {"repo": REPO, "issues": [8506], "labels": ["hero-run"],
                   "failure_labels": ["incident"], "max_rate_limit_wait_seconds": 1,
                   "pulls": pulls or {"paths": PATHS, "labels": ["hero-run"]}},
        "site": {"url": "https://example.org/"},
    }, Path("."))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGithub]:
    with FakeGithub.from_fixture(pulls="marin-pulls.json") as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake


def test_only_merged_prs_on_configured_paths_or_labels_count(server: FakeGithub) -> None:
    got = fetch_github(make_config(), None, END)
    assert got.pulls is not None
    # 8600 was merged before the run started, 8630 is unrelated, 8633 was closed unmerged,
    # 8640 and 8612 are open: none of them is a change.
    assert [p.number for p in got.pulls] == [8620, 8625]
    first, second = got.pulls
    assert first.files == ("experiments/grug/moe_hero_ep/launch.py",)  # matching files only
    assert first.labels == ("hero-run",) and first.author == "yonromai"
    assert first.url == f"https://github.com/{REPO}/pull/8620" and first.base == "main"
    assert first.merged_at == datetime(2026, 8, 24, 10, tzinfo=UTC)
    assert second.files == ("experiments/grug/moe_hero_ep/mixture.py",)  # by path alone
    # Pull requests listed among the labelled issues never become issue threads.
    assert {t.number for t in got.threads}.isdisjoint({8612, 8620, 8633})
    assert got.detail["pulls"] == 2 and got.detail["requests"] == len(server.requests)


def test_cost_one_listing_page_and_one_files_request_per_merged_pr(
        server: FakeGithub) -> None:
    got = fetch_github(make_config(), None, END)
    listing = [r for r in server.requests if r.path == PULLS]
    files = sorted(r.path for r in server.requests if r.path.endswith("/files"))
    assert [(q.query["state"], q.query["sort"], q.query["direction"]) for q in listing] == [
        ("closed", "updated", "desc")]
    # Files are asked for the merged PRs of the window only (not 8600, 8633, 8640).
    assert files == [f"{PULLS}/{n}/files" for n in (8620, 8625, 8630)]
    assert got.detail["pulls_looked_at"] == 4  # closed, updated since the start: 8620-8633


def test_the_listing_stops_at_the_first_pr_not_updated_since(server: FakeGithub) -> None:
    server.max_per_page = 1  # one PR per page: stopping early saves requests
    since = datetime(2026, 8, 25, 3, 17, tzinfo=UTC)
    got = fetch_github(make_config(), None, END, pulls_since=since)
    assert [p.number for p in got.pulls or []] == [8625]
    pages = [r for r in server.requests if r.path == PULLS]
    assert len(pages) == 3  # 8633, 8625, then 8630: updated before `since`, so it stops


def test_labels_alone_list_no_files(server: FakeGithub) -> None:
    got = fetch_github(make_config(labels=["hero-run"]), None, END)
    assert [p.number for p in got.pulls or []] == [8620]
    assert not [r for r in server.requests if r.path.endswith("/files")]


def test_no_pulls_configured_lists_none(server: FakeGithub) -> None:
    config = parse_config({
        "run": {"name": "t", "start": "2026-08-20", "planned_days": 9, "token_budget": 1e12,
                "accelerators": {"kind": "GB200", "count": 8}},
        "wandb": {"entity": "e", "project": "p", "runs": ["r"]},
        "github": {"repo": REPO, "issues": [8506]},
        "site": {"url": "https://example.org/"},
    }, Path("."))
    got = fetch_github(config, None, END)
    assert got.pulls is None and "pulls" not in got.detail
    assert not [r for r in server.requests if r.path.startswith(PULLS)]


@pytest.mark.parametrize(("mode", "expect"), [
    ("500", "kept failing"),
    ("malformed", "malformed payload for pull requests of " + REPO),
])
def test_a_failing_listing_fails_the_github_source(server: FakeGithub, mode: str,
                                                   expect: str) -> None:
    server.failure, server.fail_path = mode, "/pulls"
    with pytest.raises(SourceError, match=expect):
        fetch_github(make_config(), None, END)


def test_select_pull_needs_a_merge_and_a_match() -> None:
    raw = {"number": 1, "title": "t", "merged_at": "2026-08-24T10:00:00Z",
           "labels": [{"name": "data"}], "user": {"login": "a"}, "html_url": "u"}
    assert select_pull(raw, ["docs/x.md"], PATHS, ["hero-run"]) is None
    assert select_pull({**raw, "merged_at": None}, ["experiments/grug/moe_hero_ep/a.py"],
                       PATHS, []) is None
    found = select_pull(raw, ["experiments/grug/moe_hero_ep/a.py", "docs/x.md"], PATHS, [])
    assert found is not None and found.files == ("experiments/grug/moe_hero_ep/a.py",)
    assert select_pull(raw, None, [], ["data"]) is not None
