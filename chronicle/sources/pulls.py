"""Merged pull requests behind the run's changes (sources stage): which PRs count, and
the listing that finds them.

A PR counts when it was merged in the window and carries one of `github.pulls.labels` or
changes a file matching one of `github.pulls.paths` (fnmatch patterns: `*` also matches
`/`). Open, closed-unmerged and unrelated PRs never count. `select_pull` is shared by the
live fetcher and the simulated source; `collect_pulls` lists through the GitHub client of
sources/github.py (PyGithub's Requester: its auth, retries and rate-limit handling).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from chronicle.clean import clean_line
from chronicle.models import PullRequest, parse_time


class Pages(Protocol):
    """What the listing needs from a GitHub client: paginated GETs."""

    def pages(self, url: str, params: dict[str, Any], what: str
              ) -> Iterator[Mapping[str, Any]]: ...


def matching_files(files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """Return the files that match one of the fnmatch `patterns`, in the order given."""
    return [f for f in files if any(fnmatch.fnmatchcase(f, p) for p in patterns)]


def select_pull(raw: Mapping[str, Any], files: Sequence[str] | None,
                paths: Sequence[str], labels: Sequence[str]) -> PullRequest | None:
    """Return the PR of a REST pull-request payload if it counts as a change, else None.

    `files` are the names of the PR's changed files (None: not listed, when no paths are
    configured). A PR that was not merged never counts. Every text field loses its control
    characters (chronicle/clean.py) before it is matched or stored: anyone who can open a
    PR types them.
    """
    merged = parse_time(raw.get("merged_at"))
    if merged is None:
        return None
    names = tuple(clean_line(str(lab["name"]) if isinstance(lab, Mapping) else str(lab))
                  for lab in raw.get("labels") or ())
    matched = matching_files([clean_line(f) for f in files or ()], paths)
    if not matched and not set(names) & set(labels):
        return None
    user = raw.get("user")
    base = raw.get("base")
    return PullRequest(
        number=int(raw["number"]),
        title=clean_line(str(raw.get("title") or "")),
        author=clean_line(str(user["login"])) if isinstance(user, Mapping) and user.get("login")
        else "ghost",
        merged_at=merged,
        url=clean_line(str(raw.get("html_url") or "")),
        labels=names,
        files=tuple(matched),
        base=clean_line(str(base.get("ref") or "")) if isinstance(base, Mapping) else "",
    )


def collect_pulls(client: Pages, repo: str, paths: Sequence[str], labels: Sequence[str],
                  since: datetime, as_of: datetime) -> tuple[list[PullRequest], int]:
    """Return the PRs merged in (since, as_of] that count, and how many PRs were looked at.

    The pulls endpoint has no `since`: PRs come newest-updated first and the listing stops
    at the first one not updated since `since` (a PR merged in the window was updated in
    it). Only merged PRs in the window cost a request for their files.
    """
    found: list[PullRequest] = []
    looked = 0
    params = {"state": "closed", "sort": "updated", "direction": "desc"}
    for raw in client.pages(f"/repos/{repo}/pulls", params, "pull requests"):
        updated = parse_time(raw.get("updated_at")) or parse_time(raw.get("created_at"))
        if updated is None:
            raise ValueError(f"pull request {raw.get('number')!r} has no updated_at")
        if updated <= since:
            break
        looked += 1
        merged = parse_time(raw.get("merged_at"))
        if merged is None or not since < merged <= as_of:
            continue
        files = None
        if paths:
            number = int(raw["number"])
            listing = client.pages(f"/repos/{repo}/pulls/{number}/files", {},
                                   f"files of pull request #{number}")
            files = [str(f.get("filename") or "") for f in listing]
        pull = select_pull(raw, files, paths, labels)
        if pull is not None:
            found.append(pull)
    return sorted(found, key=lambda p: (p.merged_at, p.number)), looked
