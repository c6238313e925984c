"""The translated day pages of earlier builds, kept outside the published tree (site stage).

A translated edition's day page and its translated charts are a pure function of the
sealed day (its JSON, chart specs and SVGs, the entry that seals it), the language and
its catalog, the chronicle's config and the chronicle code. Sealed bytes never change,
so a nightly build would otherwise translate and render every earlier day again to get
the same bytes (most of what a second language costs, issue #13). Each day's outputs are
kept in `<chronicle>/.cache/chronicle/editions/`, named by the sha256 of all of those
inputs' bytes (never an mtime), like the compact metrics copy (store/compact.py).

It is only a cache: every entry carries the sha256 of its own content and the key it was
written for, and one that is damaged, unreadable or foreign is ignored and recomputed;
writing is best effort (temporary file + rename), so a read-only disk still builds, with
the same bytes. Entries no build of the current key set used are dropped at the end of a
build (`prune`), so the folder holds one build's worth.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import platform
import tempfile
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import chronicle
from chronicle.config import RunConfig
from chronicle.render.i18n import catalog_path

FORMAT = 1  # bump when an entry's layout changes: older entries are then ignored
LOCALE_FOLDER = "locale"  # a chronicle's own translations: <root>/locale/<lang>.po
# Libraries whose output is part of a page's bytes (templates, catalogs): a new version
# may render differently, so it makes new keys.
_LIBRARIES = ("jinja2", "markupsafe", "babel")

Files = dict[str, str | bytes]


def cache_dir(root: Path) -> Path:
    """Return the folder of the translated day pages of the chronicle at `root`."""
    return root / ".cache" / "chronicle" / "editions"


@cache
def code_fingerprint() -> str:
    """Return the sha256 of the installed chronicle package's source files (code,
    templates, catalogs, assets), computed once per process: any change to chronicle
    makes new keys, whatever part of it a page uses."""
    package = Path(chronicle.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for name in _LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{name}={metadata.version(name)}\0".encode())
    digest.update(platform.python_version().encode())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"


def edition_key(config: RunConfig, code: str) -> str:
    """Return the sha256 of what every day page of the `code` edition depends on beyond
    the day itself: code, language, effective catalog and the whole config."""
    parts = [
        f"format={FORMAT}",
        f"code={code_fingerprint()}",
        f"language={code}",
        f"catalog={_file_sha256(catalog_path(code))}",
        f"own catalog={_file_sha256(config.root / LOCALE_FOLDER / f'{code}.po')}",
        # The frozen dataclass tree of chronicle.yml (defaults applied): what pages read.
        # Not where the chronicle lives (no page reads config.root): a moved checkout or a
        # copy keeps its cache.
        f"config={hashlib.sha256(repr(replace(config, root=Path())).encode()).hexdigest()}",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass
class EditionCache:
    """The cache of one build: which entries it read, wrote and used (shared by every
    translated edition of one `chronicle build`)."""

    folder: Path
    used: set[str] = field(default_factory=set)
    reused: int = 0  # valid entries read
    missed: int = 0  # pages rendered instead (no entry, or not a valid one)
    written: int = 0

    def day_key(self, edition: str, inputs: dict[str, Any], files: dict[str, bytes]) -> str:
        """Return the key of one day page: the edition's key, the page's own inputs
        (JSON-able) and the sha256 of each sealed file it translates."""
        digest = hashlib.sha256(edition.encode())
        digest.update(json.dumps(inputs, sort_keys=True, ensure_ascii=False,
                                 separators=(",", ":")).encode())
        for name in sorted(files):
            digest.update(f"\0{name}\0".encode() + hashlib.sha256(files[name]).digest())
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / f"v{FORMAT}-{key}.json"

    def get(self, key: str) -> Files | None:
        """Return the files kept under `key`, or None when there is no valid entry."""
        self.used.add(key)
        try:
            files = _decode(self._path(key).read_bytes(), key)
        except OSError:
            files = None
        if files is None:
            self.missed += 1
        else:
            self.reused += 1
        return files

    def put(self, key: str, files: Files) -> None:
        """Keep `files` under `key`. Best effort: a read-only disk still builds."""
        self.used.add(key)
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as sink:
                    sink.write(_encode(files, key))
                os.replace(tmp, self._path(key))
                self.written += 1
            finally:
                Path(tmp).unlink(missing_ok=True)

    def prune(self) -> None:
        """Drop every entry this build did not use (older keys, other formats)."""
        if not self.folder.is_dir():
            return
        keep = {self._path(key).name for key in self.used}
        with contextlib.suppress(OSError):
            for old in self.folder.iterdir():
                if old.name not in keep and old.is_file():
                    old.unlink(missing_ok=True)


def _encode(files: Files, key: str) -> bytes:
    """Return an entry: the sha256 of its body on the first line, then the body (format,
    key and each file, text or base64)."""
    # Not sorted: the files come back in the order they were computed (the site's order).
    body = json.dumps({
        "format": FORMAT, "key": key,
        "files": {p: ["b", base64.b64encode(c).decode()] if isinstance(c, bytes) else ["t", c]
                  for p, c in files.items()},
    }, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def _decode(raw: bytes, key: str) -> Files | None:
    """Return the files of an entry, or None unless its checksum, format and key hold."""
    head, _, body = raw.partition(b"\n")
    if head.decode("ascii", "replace") != hashlib.sha256(body).hexdigest():
        return None  # damaged: truncated, edited, a disk error
    try:
        entry = json.loads(body)
        if entry["format"] != FORMAT or entry["key"] != key:
            return None  # another entry's content under this name
        out: Files = {}
        for path, (kind, content) in entry["files"].items():
            if kind == "b":
                out[path] = base64.b64decode(content, validate=True)
            elif kind == "t" and isinstance(content, str):
                out[path] = content
            else:
                return None
        return out
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
