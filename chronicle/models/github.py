"""GitHub records as a snapshot stores them (kernel): comments, issue threads, merged
pull requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chronicle.models import typed
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
        d = typed.record(d)
        return cls(
            id=typed.whole(d, "id"),
            author=typed.text(d, "author", "ghost"),
            body=typed.text(d, "body", ""),
            created_at=required_time(typed.text(d, "created_at")),
            updated_at=required_time(typed.text(d, "updated_at", "") or d["created_at"]),
            url=typed.text(d, "url", ""),
            reactions=typed.counts(d, "reactions"),
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
        d = typed.record(d)
        return cls(
            number=typed.whole(d, "number"),
            title=typed.text(d, "title", ""),
            body=typed.text(d, "body", ""),
            state=typed.text(d, "state", "open"),
            labels=typed.texts(d, "labels"),
            author=typed.text(d, "author", "ghost"),
            created_at=required_time(typed.text(d, "created_at")),
            updated_at=required_time(typed.text(d, "updated_at", "") or d["created_at"]),
            closed_at=parse_time(typed.optional_text(d, "closed_at")),
            url=typed.text(d, "url", ""),
            comments=tuple(Comment.from_json(c) for c in typed.records(d, "comments")),
            reactions=typed.counts(d, "reactions"),
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
        d = typed.record(d)
        return cls(
            number=typed.whole(d, "number"),
            title=typed.text(d, "title", ""),
            author=typed.text(d, "author", "ghost"),
            merged_at=required_time(typed.text(d, "merged_at")),
            url=typed.text(d, "url", ""),
            labels=typed.texts(d, "labels"),
            files=typed.texts(d, "files"),
            base=typed.text(d, "base", ""),
        )
