"""Zensical's own cache of an edition's project, kept signed between builds (site stage).

Zensical keeps what it made of each page in `.cache/` beside a project's config (the
page's HTML, by its source), and converts only the pages whose sources changed when that
folder is there, which makes a nightly build of an edition much faster (its bench row:
`python -m bench.speedups --only engine-cache`). But a nightly checkout has no such
folder, and one restored from elsewhere could put any HTML on any page: Zensical does
not sign it.

So the folder is chronicle's to fill: before each Zensical build it is emptied and filled
only from a valid entry of `.cache/chronicle/zensical` (signed like every entry of the
build cache, site/build_cache.py: a forged, damaged or foreign one is a miss, and Zensical
builds from its sources alone); after a build that passed, what Zensical left there is
kept as that entry. The nightly workflow restores `.cache/chronicle`, so a night's build
is warm. The entry's key names the edition, Zensical's version, chronicle's code and
config, and the project's folder (Zensical's cache is warm only where it was made): a
change to any of them starts Zensical cold. It is the executor's `engine-cache` speed-up
(documentation/pages/how-it-works.md); without it the folder is emptied and nothing is kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

from chronicle.files.atomic import write_atomic_at
from chronicle.files.nofollow import NotAFile, folder, read_file
from chronicle.site.build_cache import BuildCache, code_fingerprint, config_sha256, entry_key
from chronicle.site.outputs.inputs import BuildInputs

FOLDER = ".cache"  # Zensical's, beside the project's config
# What Zensical writes there: a file per page and a few of its own (.gitignore,
# mkdocstrings.json, objects.inv). Anything else is neither kept nor restored.
_NAME = re.compile(r"\.gitignore|[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def cache_key(inputs: BuildInputs, code: str, project: Path, version: str | None) -> str:
    """Return the key of the Zensical cache of edition `code` built in `project`."""
    return entry_key(f"zensical/{code_fingerprint()}", {
        "edition": code, "zensical": version, "config": config_sha256(inputs.config),
        "project": str(project.resolve())})


def restore(project: Path, cache: BuildCache | None, key: str) -> None:
    """Empty Zensical's cache folder of `project`, then fill it from the entry of `cache`
    under `key` (none, or one naming a file Zensical does not write: Zensical starts
    cold)."""
    with folder(project, [FOLDER], create=True) as fd:
        _empty(fd)
        files = cache.get(key) if cache is not None else None
        if files is None or not all(_NAME.fullmatch(name) for name in files):
            return
        for name, content in files.items():
            write_atomic_at(fd, name, content.encode() if isinstance(content, str) else content)


def keep(project: Path, cache: BuildCache, key: str) -> None:
    """Keep what Zensical left in its cache folder of `project` under `key`. Best effort,
    as every cache: a folder that cannot be read keeps nothing (the next build is cold)."""
    files: dict[str, str | bytes] = {}
    with contextlib.suppress(OSError), folder(project, [FOLDER]) as fd, \
            os.scandir(fd) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if not entry.is_file(follow_symlinks=False) or not _NAME.fullmatch(entry.name):
                continue
            try:
                raw = read_file(Path(entry.name), dir_fd=fd, shown=project / FOLDER / entry.name)
            except (OSError, NotAFile):
                continue
            try:
                files[entry.name] = raw.decode("utf-8")  # text: no base64 in the entry
            except UnicodeDecodeError:
                files[entry.name] = raw
        cache.put(key, files)


def _empty(fd: int) -> None:
    """Remove everything in the folder open as `fd`, links themselves, not their targets."""
    with os.scandir(fd) as entries:
        for entry in list(entries):
            with contextlib.suppress(FileNotFoundError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.name, dir_fd=fd)
                else:
                    os.unlink(entry.name, dir_fd=fd)
