"""A build is all or nothing: the site is built beside the published one and swapped in
whole once every edition is complete (site stage).

`chronicle build` writes into `.<site>.building-<pid>` next to the site folder (the same
file system, so the swap is a rename), each translated edition into
`.<site>.building-<pid>-<lang>` until it joins it. Only when every edition is complete is
the new folder put in the site's place: one atomic exchange of the two folders on Linux
(`renameat2(RENAME_EXCHANGE)`), elsewhere two renames (the old site moved to
`.<site>.old-<pid>`, the new one moved in). A build killed at any moment leaves the
published site as it was: before the swap it is untouched, after it the new site is whole.
What a killed build leaves beside it is removed by the next build (`clear_leftovers`),
which also puts back a site a build killed between the two renames had moved away.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import re
import shutil
from pathlib import Path

from chronicle.errors import ChronicleError
from chronicle.executor import libc

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<kind>building|old)-(?P<pid>\d+)(?:-[a-z]+)?$")


def output_folder(root: Path, docs: Path, path: Path, option: str) -> Path:
    """Return the folder a command writes its output into (`path`: the site, or the
    sources `chronicle render` writes), its links resolved; ChronicleError (exit 2) for
    one it must not write.

    One rule for every engine and command: the folder is never a link (a build replaces
    it whole: through a link it would create or replace whatever the link points at, and
    git keeps links), no folder on its way inside the chronicle (`root`) is one, and it is
    never the chronicle itself, a folder holding it, or inside its store (`docs`).
    """
    root, path = root.absolute(), path.absolute()
    if path.is_symlink():
        raise ChronicleError(
            f"{path}: a symbolic link (to {os.readlink(path)}); chronicle never writes its "
            f"output through a link: remove the link, or pass {option} the folder itself")
    if path.is_relative_to(root):
        where = root
        for part in path.relative_to(root).parts[:-1]:
            where = where / part
            if where.is_symlink():
                raise ChronicleError(
                    f"{where}: a symbolic link inside the chronicle, on the way to {path}; "
                    "chronicle never follows a link out of the chronicle: remove it, or "
                    f"pass {option} a folder outside the chronicle")
    resolved = path.parent.resolve() / path.name
    home, store = root.resolve(), docs.resolve()
    if home.is_relative_to(resolved) or resolved.is_relative_to(store):
        what = ("inside the store (docs/), which the build would publish into"
                if resolved.is_relative_to(store)
                else "the chronicle's own folder, or a folder holding it")
        raise ChronicleError(f"{path}: {what}; pass {option} a folder of its own, outside "
                             "docs/")
    return resolved


def staging_dir(site_dir: Path) -> Path:
    """Return the folder this process builds the site `site_dir` in before publishing it."""
    return site_dir.with_name(f".{site_dir.name}.building-{os.getpid()}")


def edition_staging(site_dir: Path, code: str) -> Path:
    """Return the folder a translated edition `code` is built in before it joins the
    staged site (built by another process while English builds:
    site/engines/mkdocs/edition_process.py)."""
    return site_dir.with_name(f".{site_dir.name}.building-{os.getpid()}-{code}")


def _old_dir(site_dir: Path) -> Path:
    return site_dir.with_name(f".{site_dir.name}.old-{os.getpid()}")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # an earlier build of this process (the same pid, long done)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_leftovers(site_dir: Path) -> None:
    """Remove what builds of `site_dir` that were killed left beside it, and put back the
    site one of them had moved away when it was killed between its two renames."""
    parent = site_dir.parent
    if not parent.is_dir():
        return
    found = [(m, p) for p in parent.iterdir()
             if (m := _LEFTOVER.match(p.name)) and m["name"] == site_dir.name and p.is_dir()
             and not p.is_symlink()]
    for match, path in sorted(found, key=lambda f: f[0]["kind"] != "old"):
        if _alive(int(match["pid"])):
            continue
        if match["kind"] == "old" and not site_dir.exists() and not site_dir.is_symlink():
            os.rename(path, site_dir)  # the previous site, whole: it was never written to
        else:
            shutil.rmtree(path, ignore_errors=True)


def publish(staging: Path, site_dir: Path) -> None:
    """Put the complete site `staging` in the place of `site_dir` at once; remove the
    site it replaces. Raise ChronicleError if the folder cannot be replaced."""
    try:
        if not site_dir.exists() and not site_dir.is_symlink():
            os.rename(staging, site_dir)
            return
        if _exchange(staging, site_dir):
            shutil.rmtree(staging, ignore_errors=True)  # the previous site, now here
            return
        old = _old_dir(site_dir)
        os.rename(site_dir, old)
        try:
            os.rename(staging, site_dir)
        except OSError:
            os.rename(old, site_dir)
            raise
        shutil.rmtree(old, ignore_errors=True)
    except OSError as err:
        raise ChronicleError(
            f"{site_dir}: the new site, complete in {staging}, could not replace it "
            f"({err.strerror or err}); the site folder is as it was. A build replaces the "
            "site folder whole: pass --site-dir a folder you can rename (not a mount point) "
            "in a folder you can write") from err


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders `a` and `b` in one step (Linux); False where it is not supported."""
    c = libc()
    if c is None:
        return False
    with contextlib.suppress(AttributeError):  # a C library without renameat2
        rename = c.renameat2
        rename.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
        if rename(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return True
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(b))
    return False
