"""The build's own work of earlier builds, kept outside the published tree (site stage).

Some of what a build makes is a pure function of bytes that did not change since the
last build: a chart's SVG of its spec (the most costly: drawn by vl-convert in render
workers), Zensical's own cache of an edition. Each kind is kept in its own folder of
`<chronicle>/.cache/chronicle/`, every entry named by the sha256 of all the bytes it is
made of (`entry_key`, never an mtime), so a repeated build, or a nightly where most inputs
are the same, reads them instead of making them. Each kind has its bench row
(bench/speedups.py).

It is only a cache, and a cache can come from elsewhere (restored by the nightly
workflow, copied with the folder): an entry is used only if it is the product of its
key, which it proves with an HMAC of its key and content under a secret the chronicle's
own runs hold and a planted cache does not (chronicle/cachekey.py). One that is forged,
damaged, unreadable or foreign is a miss, made again from the store. Folders and entries
are opened without following links (chronicle/files/nofollow.py): a link in place of a cache
folder is refused, one in place of an entry is a miss, and nothing outside
`.cache/chronicle` is read, written or deleted. Writing is best effort (temporary file +
rename), so a read-only disk still builds, with the same bytes. Entries no part of the
build used are dropped at its end (`prune`), so each folder holds one build's worth.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import chronicle
from chronicle.cachekey import cache_secret, sign, signed
from chronicle.config import RunConfig
from chronicle.files.atomic import write_atomic_at
from chronicle.files.nofollow import CACHE_FOLDERS, NotAFile, check_cache_folders, folder, read_file

# Bump when an entry's layout changes: older entries are then ignored. 2: an HMAC under
# the cache secret instead of a bare sha256, which anyone could recompute.
FORMAT = 2
# Libraries whose output is part of an entry's bytes (templates, catalogs, comments'
# Markdown and sanitizing, front matter, the analyses' arithmetic): a new version may
# give other bytes, so it makes new keys.
_LIBRARIES = ("jinja2", "markupsafe", "babel", "markdown", "nh3", "pyyaml", "numpy",
              "pyarrow")

Files = dict[str, str | bytes]
# Kinds earlier versions kept, and a nightly's restored cache may still hold: thread pages
# (under the 10% a cache must earn, bench/RESULTS.md).
RETIRED = ("threads",)


def cache_root(root: Path) -> Path:
    """Return the folder of every cache of the chronicle at `root`."""
    return root.joinpath(*CACHE_FOLDERS)


@cache
def code_fingerprint() -> str:
    """Return the sha256 of the installed chronicle package's source files (code,
    templates, catalogs, assets), computed once per process: any change to chronicle
    makes new keys, whatever part of it an entry comes from."""
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


def config_sha256(config: RunConfig) -> str:
    """Return the sha256 of the frozen dataclass tree of chronicle.yml (defaults applied):
    what pages and analyses read. Not where the chronicle lives (nothing reads
    config.root): a moved checkout or a copy keeps its cache."""
    return hashlib.sha256(repr(replace(config, root=Path())).encode()).hexdigest()


def entry_key(prefix: str, inputs: Any = None, files: Mapping[str, bytes] | None = None
              ) -> str:
    """Return the key of one entry: `prefix` (what every entry of its kind depends on),
    its own JSON-able `inputs` and the sha256 of each of its input `files`."""
    digest = hashlib.sha256(prefix.encode())
    digest.update(json.dumps(inputs, sort_keys=True, ensure_ascii=False,
                             separators=(",", ":")).encode())
    for name in sorted(files or {}):
        digest.update(f"\0{name}\0".encode() + hashlib.sha256((files or {})[name]).digest())
    return digest.hexdigest()


@dataclass
class BuildCache:
    """One kind of entry (one folder) and what this build did with it.

    `base` is the folder the cache's path is opened from without following a link at any
    step (the chronicle folder; by default the cache folder's parent).
    """

    folder: Path
    used: set[str] = field(default_factory=set)
    reused: int = 0  # valid entries read
    missed: int = 0  # made instead (no entry, or not a valid one)
    written: int = 0
    missed_keys: set[str] = field(default_factory=set)
    base: Path | None = None

    def _name(self, key: str) -> str:
        return f"v{FORMAT}-{key}.json"

    def _path(self, key: str) -> Path:
        return self.folder / self._name(key)

    def _at(self, create: bool = False) -> contextlib.AbstractContextManager[int]:
        """Open the folder, each step without following a link (NotAFile if one is)."""
        base = self.base if self.base is not None else self.folder.parent
        return folder(base, self.folder.relative_to(base).parts, create)

    def get(self, key: str) -> Files | None:
        """Return the files kept under `key`, or None when there is no valid entry."""
        self.used.add(key)
        files = None
        secret, _ = cache_secret()
        if secret is not None:
            with contextlib.suppress(OSError), self._at() as fd:  # no folder: no entry
                try:
                    raw = read_file(Path(self._name(key)), dir_fd=fd, shown=self._path(key))
                except (OSError, NotAFile):
                    raw = None  # a link, a folder or a FIFO in its place is no entry
                if raw is not None:
                    files = _decode(raw, key, secret, self.folder.name)
        if files is None:
            self.missed += 1
            self.missed_keys.add(key)
        else:
            self.reused += 1
        return files

    def put(self, key: str, files: Files) -> None:
        """Keep `files` under `key`. Best effort: a read-only disk still builds."""
        if key not in self.used:  # made without being looked for: made all the same
            self.missed += 1
            self.missed_keys.add(key)
        self.used.add(key)
        secret, _ = cache_secret()
        if secret is None:
            return  # an entry nobody can check is never kept
        body = _encode(files, key, secret, self.folder.name)
        with contextlib.suppress(OSError), self._at(create=True) as fd:
            write_atomic_at(fd, self._name(key), body)
            self.written += 1

    def get_text(self, key: str) -> str | None:
        """Return the one text kept under `key` (see `put_text`), or None."""
        kept = self.get(key)
        text = kept.get("text") if kept is not None else None
        return text if isinstance(text, str) else None

    def put_text(self, key: str, text: str) -> None:
        """Keep one text under `key`."""
        self.put(key, {"text": text})

    def prune(self) -> None:
        """Drop every entry this build did not use (older keys, other formats), inside the
        folder only: a link there is removed itself, never what it points at."""
        keep = {self._name(key) for key in self.used}
        with contextlib.suppress(OSError), self._at() as fd, os.scandir(fd) as entries:
            for old in entries:
                if old.name not in keep and not old.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(old.name, dir_fd=fd)


@dataclass
class Caches:
    """The caches of one `chronicle build`, shared by every edition it builds."""

    svgs: BuildCache  # static SVGs of the build's own charts (site/outputs/statics.py)
    # Zensical's own cache of each edition's project (site/engines/zensical/cache.py)
    zensical: BuildCache

    @classmethod
    def of(cls, root: Path) -> Caches:
        """Return the caches of the chronicle at `root` (nothing read yet)."""
        check_cache_folders(root)
        folder = cache_root(root)
        return cls(*(BuildCache(folder / f.name, base=root) for f in fields(cls)))

    def each(self) -> dict[str, BuildCache]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def prune(self) -> None:
        """Drop what this build did not use, in every folder it used (only after every
        edition: they share them), and every entry of a kind no longer kept (`RETIRED`).
        A kind this build never looked in (its speed-up off, `Executor(without=...)`, or
        another engine's) is left as it was: the next build that uses it finds it whole."""
        for kind in self.each().values():
            if kind.used:
                kind.prune()
        root = self.svgs.folder.parent
        for name in RETIRED:
            BuildCache(root / name, base=self.svgs.base).prune()  # nothing used: emptied


def _encode(files: Files, key: str, secret: bytes, kind: str) -> bytes:
    """Return an entry: the HMAC of its body on the first line (chronicle/cachekey.py),
    then the body (format, key and each file, text or base64)."""
    # Not sorted: the files come back in the order they were computed (the site's order).
    body = json.dumps({
        "format": FORMAT, "key": key,
        "files": {p: ["b", base64.b64encode(c).decode()] if isinstance(c, bytes) else ["t", c]
                  for p, c in files.items()},
    }, ensure_ascii=False, separators=(",", ":")).encode()
    return sign(secret, kind, body).encode() + b"\n" + body


def _decode(raw: bytes, key: str, secret: bytes, kind: str) -> Files | None:
    """Return the files of an entry, or None unless its HMAC, format and key hold."""
    head, _, body = raw.partition(b"\n")
    if not signed(secret, kind, body, head.decode("ascii", "replace")):
        return None  # made elsewhere (forged, restored from another secret) or damaged
    try:
        entry = json.loads(body)
        if entry["format"] != FORMAT or entry["key"] != key:
            return None  # another entry's content under this name
        out: Files = {}
        for path, (kind_of, content) in entry["files"].items():
            if kind_of == "b":
                out[path] = base64.b64decode(content, validate=True)
            elif kind_of == "t" and isinstance(content, str):
                out[path] = content
            else:
                return None
        return out
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
