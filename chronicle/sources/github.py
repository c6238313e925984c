"""GitHub issue threads (PyGithub): the tracked issues, their comments and reactions.

`parse_*` turn REST payloads (issue and comment JSON) into models; they are shared by the
live fetcher and the simulated source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.models import Comment, Thread, parse_time

_REACTIONS = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")


def _login(user: Any) -> str:
    if isinstance(user, Mapping) and user.get("login"):
        return str(user["login"])
    return "ghost"  # GitHub's name for deleted accounts


def parse_reactions(raw: Any) -> dict[str, int]:
    """Return the non-zero reaction counts of a REST `reactions` object."""
    if not isinstance(raw, Mapping):
        return {}
    return {k: int(raw[k]) for k in _REACTIONS if isinstance(raw.get(k), int) and raw[k] > 0}


def parse_comment(raw: Mapping[str, Any]) -> Comment:
    """Return a Comment from a REST issue-comment payload."""
    created = parse_time(raw.get("created_at"))
    if created is None:
        raise ValueError(f"comment {raw.get('id')!r} has no created_at")
    return Comment(
        id=int(raw["id"]),
        author=_login(raw.get("user")),
        body=str(raw.get("body") or ""),
        created_at=created,
        updated_at=parse_time(raw.get("updated_at")) or created,
        url=str(raw.get("html_url") or ""),
        reactions=parse_reactions(raw.get("reactions")),
    )


def parse_thread(issue: Mapping[str, Any], comments: Sequence[Mapping[str, Any]]) -> Thread:
    """Return a Thread from a REST issue payload and its comment payloads."""
    created = parse_time(issue.get("created_at"))
    if created is None:
        raise ValueError(f"issue #{issue.get('number')} has no created_at")
    labels = tuple(
        str(lab["name"]) if isinstance(lab, Mapping) else str(lab)
        for lab in issue.get("labels") or ()
    )
    return Thread(
        number=int(issue["number"]),
        title=str(issue.get("title") or ""),
        body=str(issue.get("body") or ""),
        state=str(issue.get("state") or "open"),
        labels=labels,
        author=_login(issue.get("user")),
        created_at=created,
        updated_at=parse_time(issue.get("updated_at")) or created,
        closed_at=parse_time(issue.get("closed_at")),
        url=str(issue.get("html_url") or ""),
        comments=tuple(sorted((parse_comment(c) for c in comments), key=lambda c: (c.created_at, c.id))),
        reactions=parse_reactions(issue.get("reactions")),
    )
