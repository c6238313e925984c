"""The shape of a snapshot's MANIFEST.json, checked before anything trusts it (store stage).

A manifest is data from disk: a hand edit, a bad merge or a tamper can make any field the
wrong type. `manifest_problems` lists every structural problem, so that `build` and
`snapshot` refuse with one clear message and `verify` reports each as a finding, never a
traceback from deep inside a reader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from pathlib import PurePosixPath
from typing import Any

from chronicle.models import parse_time

SNAPSHOT_ID = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{6}Z$")
MEMENTOS_PATH = re.compile(r"^mementos/\d{4}-\d{2}-\d{2}T\d{6}Z\.json$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
_MAX_SHOWN = 60  # characters of a bad value quoted in a message
MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # a year of nightly manifests' corrections fits many times


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


def _file_meta(where: str, meta: Any) -> list[str]:
    if not isinstance(meta, Mapping):
        return [f"{where}: expected {{sha256, size}}, got {_show(meta)}"]
    out = []
    if not isinstance(meta.get("sha256"), str) or not SHA256.match(meta["sha256"]):
        out.append(f"{where}.sha256: expected 64 hex digits, got {_show(meta.get('sha256'))}")
    size = meta.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        out.append(f"{where}.size: expected a byte count, got {_show(size)}")
    return out


def _plain_name(name: Any) -> bool:
    return isinstance(name, str) and bool(name) and "/" not in name and "\\" not in name \
        and not name.startswith(".")


# A translated edition's sealed files: days/<language>/<date>.md and its charts' folder.
EDITION_PATH = re.compile(r"days/[a-z]{2}/\d{4}-\d{2}-\d{2}(\.md|/[^/]+)")


def _sealed_path(rel: Any) -> bool:
    if not isinstance(rel, str) or "\\" in rel:
        return False
    parts = PurePosixPath(rel).parts
    return len(parts) >= 2 and parts[0] == "days" and not any(
        p in ("..", ".") or p.startswith(".") for p in parts)


def _is_date(text: Any) -> bool:
    try:
        date.fromisoformat(text)
    except (TypeError, ValueError):
        return False
    return True


def manifest_problems(m: Any) -> list[str]:
    """Return every structural problem of a parsed manifest (empty: well-formed)."""
    if not isinstance(m, Mapping):
        return [f"expected a JSON object, got {type(m).__name__}"]
    out: list[str] = []
    if not isinstance(m.get("snapshot"), str) or not SNAPSHOT_ID.match(m["snapshot"]):
        out.append("snapshot: expected an id like 2026-09-30T031700Z, got "
                   f"{_show(m.get('snapshot'))}")
    try:
        if parse_time(m.get("taken_at")) is None:
            out.append("taken_at: missing")
    except (TypeError, ValueError):
        out.append(f"taken_at: expected an ISO 8601 time, got {_show(m.get('taken_at'))}")
    prev = m.get("previous")
    if prev is not None and not (
            isinstance(prev, Mapping) and isinstance(prev.get("snapshot"), str)
            and isinstance(prev.get("sha256"), str)):
        out.append(f"previous: expected null or {{snapshot, sha256}}, got {_show(prev)}")
    files = m.get("files")
    if not isinstance(files, Mapping):
        out.append("files: expected a mapping of file name -> {sha256, size}, got "
                   f"{_show(files)}")
    else:
        for name, meta in files.items():
            if not _plain_name(name):
                out.append(f"files: {_show(name)} is not a file name in the snapshot folder")
            out += _file_meta(f"files.{name}", meta)
    sources = m.get("sources", {})
    if not isinstance(sources, Mapping) or not all(
            isinstance(s, Mapping) and s.get("status") in ("ok", "failed")
            for s in sources.values()):
        out.append(f"sources: expected name -> {{status: ok|failed}}, got {_show(sources)}")
    out += sealed_problems(m.get("sealed", {}))
    out += sealed_problems(m.get("editions", {}), "editions")
    out += mementos_problems(m.get("mementos", {}))
    for key in ("corrections", "waiting"):
        if key in m and not isinstance(m[key], list):
            out.append(f"{key}: expected a list, got {_show(m[key])}")
    return out


def mementos_problems(listed: Any) -> list[str]:
    """Return the problems of a manifest's `mementos` (record path -> {sha256, size})."""
    if not isinstance(listed, Mapping):
        return [f"mementos: expected path -> {{sha256, size}}, got {_show(listed)}"]
    out: list[str] = []
    for rel, meta in listed.items():
        if not isinstance(rel, str) or not MEMENTOS_PATH.match(rel):
            out.append(f"mementos: {_show(rel)} is not a record under mementos/ (named like "
                       "mementos/2026-09-30T041200Z.json)")
        out += _file_meta(f"mementos.{rel}", meta)
    return out


def sealed_problems(sealed: Any, key: str = "sealed") -> list[str]:
    """Return the problems of a manifest's `sealed` (or `editions`: the other languages'
    pages of days sealed before, sealed later): day -> {path under days/: {sha256, size}}."""
    if not isinstance(sealed, Mapping):
        return [f"{key}: expected day -> {{path: {{sha256, size}}}}, got {_show(sealed)}"]
    out: list[str] = []
    for day, files in sealed.items():
        if not _is_date(day):
            out.append(f"{key}: {_show(day)} is not a date")
        if not isinstance(files, Mapping):
            out.append(f"{key}.{day}: expected path -> {{sha256, size}}, got {_show(files)}")
            continue
        for rel, meta in files.items():
            if not _sealed_path(rel):
                out.append(f"{key}.{day}: {_show(rel)} is not a path under days/")
            elif key == "editions" and not EDITION_PATH.match(str(rel)):
                out.append(f"{key}.{day}: {_show(rel)} is not a page or chart of another "
                           "language's edition (days/<language>/<date>...)")
            out += _file_meta(f"{key}.{day}.{rel}", meta)
    return out
