"""Build a translated edition in a second process, beside the English build (site stage).

A translated edition is a whole mkdocs build of its own (site/editions.py): Markdown,
templates, a search index (Chinese segmented with jieba), ~1.7x the English build's time
when run after it. mkdocs and jieba hold the GIL, so on a machine with a second core
`chronicle build` runs each translated edition in a child process while the English
build runs in its own; what the two share crosses a pipe:

- the store: the child reads it itself (its own `load_inputs`, each file checked against
  the chain, and the verdicts cache; on a first build it may compute the verdicts the
  parent is computing too, the same bytes); the parent holds the store's lock for both, so no
  snapshot commits between the two reads;
- the build caches (site/build_cache.py): entries are whole files written by rename, so
  both processes read and write the same folders; the child reports which entries it
  used, and the parent prunes only after both builds, with both sets.

The child builds into a staging folder under the chronicle's cache, since the English
build empties the site folder when it starts; the parent moves it into the site once the
English build is done. The bytes are those of the builds run one after the other.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError, disk_error
from chronicle.render.i18n import edition_dir
from chronicle.render.svg import stop_workers
from chronicle.site.build_cache import Caches, cache_root
from chronicle.site.editions import Editions

# What the child reports: ("done", seconds, {kind: [keys reused, keys made]}),
# ("error", message) for a failed build, ("crash", traceback) for a defect.
Report = tuple[Any, ...]


def staging_dir(root: Path, code: str) -> Path:
    """Return the folder the `code` edition is built into before it joins the site."""
    return cache_root(root) / "editions-building" / code


def can_run_beside() -> bool:
    """Return whether a translated edition should build in its own process: only with
    a second core (on one, the two builds would take turns and the start would be lost)."""
    return (os.cpu_count() or 1) >= 2


@dataclass
class EditionProcess:
    """One translated edition building in a child process."""

    code: str
    staging: Path
    process: Any  # multiprocessing's SpawnProcess
    conn: Connection
    seconds: float = 0.0
    caches: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def start(cls, config: RunConfig, mkdocs_yml: Path, code: str) -> EditionProcess:
        """Start building the `code` edition into its staging folder; return at once.

        Raises OSError when the staging folder cannot be made (the caller then builds
        the edition in its own process, after English).
        """
        staging = staging_dir(config.root, code)
        if staging.exists():
            shutil.rmtree(staging)  # a build that was killed before it moved its edition
        staging.mkdir(parents=True)
        # spawn, not fork: the parent may run threads (the render pool's, the copier's)
        # that a forked child would inherit half-held.
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=_child, args=(config, mkdocs_yml, staging, code, theirs),
                                  name=f"chronicle-build-{code}")
        process.start()
        theirs.close()
        return cls(code=code, staging=staging, process=process, conn=ours)

    def finish(self, site_dir: Path) -> None:
        """Wait for the child; move its edition into `site_dir`, or raise its error."""
        report: Report | None
        try:
            report = self.conn.recv()
        except (EOFError, OSError):
            report = None
        self.process.join()
        if report is None:
            raise ChronicleError(
                f"the {self.code} edition's build process ended without a word (exit code "
                f"{self.process.exitcode}); run `chronicle build` again, and if it fails "
                "again, report it with the output above")
        if report[0] == "error":
            raise ChronicleError(str(report[1]))
        if report[0] != "done":
            raise RuntimeError(f"the {self.code} edition's build failed:\n{report[1]}")
        _, self.seconds, self.caches = report
        target = site_dir / edition_dir(self.code)
        if target.exists():  # English pages under <lang>/: the edition replaces them,
            shutil.rmtree(target)  # as its own build would have emptied the folder
        shutil.move(str(self.staging), str(target))  # a rename on one file system

    def merge_caches(self, caches: Caches) -> None:
        """Add the entries the child used to the parent's (what `prune` keeps) and count
        those the parent did not use itself: an entry both used, such as the verdicts
        of the store both read, is one entry of this build, as in a build in one process."""
        for kind, cache in caches.each().items():
            reused, made = self.caches.get(kind, [[], []])
            cache.reused += sum(1 for key in reused if key not in cache.used)
            cache.missed += sum(1 for key in made if key not in cache.used)
            cache.used.update(reused, made)

    def stop(self) -> None:
        """End the child if it still runs (the English build failed), drop its staging."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.conn.close()
        shutil.rmtree(self.staging, ignore_errors=True)


def _child(config: RunConfig, mkdocs_yml: Path, staging: Path, code: str,
           conn: Connection) -> None:
    """Build the `code` edition into `staging`; report to the parent over `conn`."""
    from chronicle.site.build import mkdocs_build

    caches = Caches.of(config.root)
    editions = Editions(caches=caches)
    report: Report | None = None
    try:
        started = time.perf_counter()
        mkdocs_build(config, mkdocs_yml, staging, code, editions)
        used = {kind: [sorted(cache.used - cache.missed_keys), sorted(cache.missed_keys)]
                for kind, cache in caches.each().items()}
        report = ("done", time.perf_counter() - started, used)
    except (EOFError, KeyboardInterrupt):
        pass  # the parent is gone or stopping (its English build failed, or Ctrl-C)
    except ChronicleError as err:
        report = ("error", str(err))
    except OSError as err:  # a full or read-only disk is the user's to fix: one message
        refused = disk_error(err, staging, "the store is unchanged; the site was not completed")
        report = ("error", str(refused)) if refused else ("crash", traceback.format_exc())
    except Exception:
        report = ("crash", traceback.format_exc())
    finally:
        stop_workers()
    with contextlib.suppress(OSError):  # a parent that is gone hears nothing
        if report is not None:
            conn.send(report)
        conn.close()
