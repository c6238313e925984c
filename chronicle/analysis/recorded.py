"""Stored snapshots as evidence of a change (analysis stage, pure): what a change record
cites, and how its stable id is written."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Protocol

from chronicle.analysis.records import Evidence

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


class Recorded(Protocol):
    """A stored snapshot as evidence: its id, when it was taken, its files' sha256s."""

    @property
    def id(self) -> str: ...

    @property
    def taken_at(self) -> datetime: ...

    @property
    def files(self) -> dict[str, dict[str, Any]]: ...


def evidence_file(recorded: Recorded, name: str) -> list[Evidence]:
    """Return the stored file `name` of a snapshot as evidence (path under docs/, sha256)."""
    meta = recorded.files.get(name)
    if not meta:
        return []
    return [{"path": f"data/{recorded.id}/{name}", "sha256": str(meta.get("sha256", ""))}]


def slug(*parts: object) -> str:
    """Return a change id made of `parts`: safe in a URL fragment and an HTML id."""
    return _SLUG.sub("-", "-".join(str(p) for p in parts if p is not None)).strip("-")
