"""Copy a build's static files in a second process while mkdocs converts pages (site stage).

A chronicle publishes its whole store for citers: every snapshot's files, each day's JSON,
Parquet, SVGs and feed image, ~20 files a day. mkdocs copies static files one by one in
the build process, between converting every page's Markdown and rendering the templates:
2,100 files took 0.5 s of a 5 s build on a quiet 2-core machine and up to 1.8 s on a busy
one (system calls: open, sendfile, close, each checking folders). The copies do not depend
on anything the build computes, so `on_files` hands them to a small process (Python's
standard library only) that copies while mkdocs converts Markdown on the other core; the
first `copy_file` call mkdocs makes on them waits for it, so from there on every file is
in place, exactly where mkdocs's own copy would have left it (same bytes, same order).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

from chronicle.executor import Executor

log = logging.getLogger("mkdocs.plugins.chronicle")

# The child: read "source\0destination\0..." from a file, copy each as mkdocs does
# (utils.copy_file: make the folder, shutil.copyfile), stop at the first failure.
_CHILD = r"""
import os, shutil, sys
with open(sys.argv[1], "rb") as f:
    parts = f.read().split(b"\0")
made = set()
for src, dst in zip(parts[0::2], parts[1::2]):
    try:
        folder = os.path.dirname(dst)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        shutil.copyfile(src, dst)
    except OSError as err:
        sys.stderr.write(os.fsdecode(src) + "\0" + str(err))
        sys.exit(1)
"""


class StaticCopy:
    """One background copy of (source, destination) file pairs."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        fd, self._list = tempfile.mkstemp(prefix="chronicle-copy-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(b"\0".join(os.fsencode(p) for pair in pairs for p in pair))
            # -I -S: no site-packages, no user environment; the child needs os and shutil.
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD, self._list],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError:
            os.unlink(self._list)
            raise

    def wait(self) -> None:
        """Return once every file is copied; raise PluginError naming the file that failed."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        _, err = proc.communicate()
        os.unlink(self._list)
        if proc.returncode != 0:
            src, _, why = err.decode("utf-8", "replace").partition("\0")
            raise PluginError(
                f"could not copy {src or 'a static file'} into the site: "
                f"{why or f'the copying process exited with {proc.returncode}'}. "
                "Check the site folder's free space and permissions, then build again.")

    def cancel(self) -> None:
        """Stop copying (the build failed); the site folder is left partial, as mkdocs's."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        proc.kill()
        proc.communicate()
        os.unlink(self._list)


class CopiedFile(File):
    """A static file the background copy writes: mkdocs's `copy_file` waits for it."""

    copy: StaticCopy

    def copy_file(self, dirty: bool = False) -> None:
        self.copy.wait()


def copy_in_background(files: Files, executor: Executor | None
                       ) -> tuple[Files, StaticCopy | None]:
    """Return `files` with each static file found in docs/ or the theme handed to one
    background copy (started here, ended when the `executor` closes), and that copy (None
    when there is nothing to copy, or the executor runs no copier: mkdocs copies them).

    Only files mkdocs itself would copy in a build are taken: read from disk (not
    generated in memory), included in the site, and not already where they belong.
    """
    if executor is None or not executor.uses("copier"):
        return files, None
    taken: list[CopiedFile] = []
    out: list[File] = []
    for file in files:
        if _copyable(file):
            copied = CopiedFile(file.src_path, file.src_dir, file.dest_dir,
                                file.use_directory_urls, dest_uri=file.dest_uri,
                                inclusion=file.inclusion)
            taken.append(copied)
            out.append(copied)
        else:
            out.append(file)
    if not taken or not sys.executable:
        return files, None
    try:
        copy = StaticCopy([(str(f.abs_src_path), f.abs_dest_path) for f in taken])
    except OSError as err:  # no process or temporary file to be had: mkdocs copies them
        log.info("copying the static files in this process (%s)", err)
        return files, None
    executor.callback(copy.cancel)
    for f in taken:
        f.copy = copy
    return Files(out), copy


def _copyable(file: File) -> bool:
    return (type(file) is File and not file.is_documentation_page()
            and file.generated_by is None and file.abs_src_path is not None
            and file.inclusion.is_included() and file.inclusion != InclusionLevel.UNDEFINED
            and os.path.normpath(file.abs_src_path) != os.path.normpath(file.abs_dest_path))
