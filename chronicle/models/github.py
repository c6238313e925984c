"""GitHub records as a snapshot stores them (kernel): comments, issue threads, merged
pull requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chronicle.models.times import iso, parse_time, required_time


@dataclass(frozen=True)
class Comment:
    """One issue comment as it stood when the snapshot was taken."""

    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    url: str = ""
    reactions: dict[str, int] = field(default_factory=dict)

    @property
    def edited(self) -> bool:
        return self.updated_at > self.created_at

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "author": self.author,
            "body": self.body,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "url": self.url,
            "reactions": self.reactions,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Comment:
        return cls(
            id=int(d["id"]),
            author=d.get("author") or "ghost",
            body=d.get("body") or "",
            created_at=required_time(d["created_at"]),
            updated_at=required_time(d.get("updated_at") or d["created_at"]),
            url=d.get("url", ""),
            reactions=dict(d.get("reactions") or {}),
        )


@dataclass(frozen=True)
class Thread:
    """The full state of one GitHub issue thread at snapshot time."""

    number: int
    title: str
    body: str
    state: str
    labels: tuple[str, ...]
    author: str
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None
    url: str
    comments: tuple[Comment, ...] = ()
    reactions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "body": self.body,
            "state": self.state,
            "labels": list(self.labels),
            "author": self.author,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "closed_at": iso(self.closed_at),
            "url": self.url,
            "reactions": self.reactions,
            "comments": [c.to_json() for c in self.comments],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Thread:
        return cls(
            number=int(d["number"]),
            title=d.get("title") or "",
            body=d.get("body") or "",
            state=d.get("state") or "open",
            labels=tuple(d.get("labels") or ()),
            author=d.get("author") or "ghost",
            created_at=required_time(d["created_at"]),
            updated_at=required_time(d.get("updated_at") or d["created_at"]),
            closed_at=parse_time(d.get("closed_at")),
            url=d.get("url", ""),
            comments=tuple(Comment.from_json(c) for c in d.get("comments") or ()),
            reactions=dict(d.get("reactions") or {}),
        )


@dataclass(frozen=True)
class PullRequest:
    """A merged pull request that touches a configured path or carries a configured label.

    `files` holds only the changed files that match `github.pulls.paths` (all of them are
    listed by GitHub; the rest are not chronicle data); `labels` all of the PR's labels.
    """

    number: int
    title: str
    author: str
    merged_at: datetime
    url: str
    labels: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    base: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "author": self.author,
            "merged_at": iso(self.merged_at),
            "url": self.url,
            "labels": list(self.labels),
            "files": list(self.files),
            "base": self.base,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PullRequest:
        return cls(
            number=int(d["number"]),
            title=d.get("title") or "",
            author=d.get("author") or "ghost",
            merged_at=required_time(d["merged_at"]),
            url=d.get("url", ""),
            labels=tuple(d.get("labels") or ()),
            files=tuple(d.get("files") or ()),
            base=d.get("base") or "",
        )
