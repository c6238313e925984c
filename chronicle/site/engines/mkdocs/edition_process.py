"""Build a translated edition in a second process, beside the English build (site stage).

A translated edition is a whole mkdocs build of its own (site/outputs/editions.py):
Markdown, templates, a search index (Chinese segmented with jieba), ~1.7x the English
build's time when run after it. mkdocs and jieba hold the GIL, so on a machine with a
second core `chronicle build` runs each translated edition in a child process of the
command's executor (chronicle/executor.py: it dies with its parent) while the English build
runs in its own; what the two share crosses the executor's connection:

- the store: the child reads it itself (its own `load_inputs`, each file checked against
  the chain); the parent holds the store's lock for both, so no snapshot commits between
  the two reads;
- the build caches (site/build_cache.py): entries are whole files written by rename, so
  both processes read and write the same folders; the child reports which entries it
  used, and the parent prunes only after both builds, with both sets.

The child builds into a staging folder of its own beside the staged site
(site/publish/staging.py), since the English build empties its folder when it starts; the
parent moves it into the staged site once both are done, and publishes the site only then.
The bytes are those of the builds run one after the other. A child that ends without its
report (killed, out of memory) fails the build with exit code 1 (`BuildProcessError`); the
published site is untouched.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import threading
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from chronicle.config import RunConfig
from chronicle.errors import BuildProcessError, ChronicleError, disk_error
from chronicle.executor import Child, ChildGone, Executor
from chronicle.render.i18n import edition_dir
from chronicle.site.build_cache import Caches
from chronicle.site.outputs.editions import Editions
from chronicle.site.progress import Say

# What the child reports: ("done", seconds, {kind: [keys reused, keys made]}),
# ("error", message) for a failed build, ("crash", traceback) for a defect; before it,
# ("line", text) for each step it says, when told to talk (site/progress.py).
Report = tuple[Any, ...]
_RELAY_STOP_SECONDS = 5.0  # how long `stop` waits for the thread relaying the child's lines


@dataclass
class EditionProcess:
    """One translated edition building in a child process of the command's executor."""

    code: str
    staging: Path
    child: Child
    seconds: float = 0.0
    caches: dict[str, list[Any]] = field(default_factory=dict)
    # With a `say`: a thread hands on the child's lines as they come (this process's main
    # thread builds English meanwhile) and its report, or how it ended, to `finish`.
    _relay: threading.Thread | None = field(default=None, repr=False)
    _reports: queue.Queue[Report | ChildGone] = field(default_factory=queue.Queue, repr=False)

    @classmethod
    def start(cls, executor: Executor, config: RunConfig, mkdocs_yml: Path, code: str,
              staging: Path, core: str, say: Say | None = None) -> EditionProcess:
        """Start building the `code` edition into the folder `staging` on `core` (the
        MkDocs 1.x this process runs, core.py), its steps said with `say` as the child
        ends each (site/progress.py); return at once.

        Raises OSError when the staging folder cannot be made (the caller then builds
        the edition in its own process, after English).
        """
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        executor.remove_on_close(staging)
        # The child's own executor keeps the parent's switches (the bench turns a speed-up
        # off for the whole command) and leaves one core to the English build beside it:
        # on two cores the child draws its charts itself, with no render worker of its own.
        child = executor.start(_child, config, mkdocs_yml, staging, code,
                               tuple(executor.without), max(1, (executor.cores or 1) - 1),
                               core, say is not None,
                               name=f"the {code} edition's build process")
        process = cls(code=code, staging=staging, child=child)
        if say is not None:
            process._relay = threading.Thread(target=process._forward, args=(say,),
                                              daemon=True, name=f"chronicle-{code}-steps")
            process._relay.start()
        return process

    def _forward(self, say: Say) -> None:
        """In the relay thread: say each of the child's lines; queue its report, or the
        ChildGone of a child that ended without one."""
        while True:
            try:
                message = self.child.recv()
            except ChildGone as err:
                self._reports.put(err)
                return
            if message[0] != "line":
                self._reports.put(message)
                return
            say(message[1])

    def _report(self) -> Report:
        """Return the child's report (raise ChildGone if it ended without one)."""
        if self._relay is None:
            report: Report = self.child.recv()
            return report
        got = self._reports.get()
        if isinstance(got, ChildGone):
            raise got
        return got

    def finish(self, site_dir: Path) -> None:
        """Wait for the child; move its edition into `site_dir`, or raise its error."""
        try:
            report = self._report()
        except ChildGone as err:
            raise BuildProcessError(
                f"the {self.code} edition's build process ended before it finished "
                f"({self.child.describe_end()}); nothing was published. Run `chronicle "
                "build` again; if it ends so again, look for what stopped it (memory: the "
                "kernel log names processes it killed)") from err
        self.child.join()
        if report[0] == "error":
            raise ChronicleError(str(report[1]))
        if report[0] != "done":
            raise RuntimeError(f"the {self.code} edition's build failed:\n{report[1]}")
        _, self.seconds, self.caches = report
        target = site_dir / edition_dir(self.code)
        if target.exists():  # English pages under <lang>/: the edition replaces them,
            shutil.rmtree(target)  # as its own build would have emptied the folder
        self.staging.rename(target)  # beside the staged site: the same file system

    def merge_caches(self, caches: Caches) -> None:
        """Add the entries the child used to the parent's (what `prune` keeps) and count
        those the parent did not use itself: an entry both used is one entry of this
        build, as in a build in one process."""
        for kind, cache in caches.each().items():
            reused, made = self.caches.get(kind, [[], []])
            cache.reused += sum(1 for key in reused if key not in cache.used)
            cache.missed += sum(1 for key in made if key not in cache.used)
            cache.used.update(reused, made)

    def stop(self) -> None:
        """End the child if it still runs (the English build failed), drop its staging."""
        self.child.stop()
        if self._relay is not None:  # its connection is closed: it ends
            self._relay.join(_RELAY_STOP_SECONDS)
        shutil.rmtree(self.staging, ignore_errors=True)


def _child(conn: Connection, config: RunConfig, mkdocs_yml: Path, staging: Path,
           code: str, without: tuple[str, ...], cores: int, core: str, talk: bool) -> None:
    """Build the `code` edition into `staging` on `core`; report to the parent over
    `conn` (and, if `talk`, each of its steps as it ends)."""
    from chronicle.site.engines.mkdocs.build import mkdocs_build

    caches = Caches.of(config.root)
    editions = Editions(caches=caches)
    report: Report | None = None
    try:
        started = time.perf_counter()
        # Its own executor: what the edition's build starts (the render worker that
        # draws its charts) ends with it.
        with Executor(without=without, cores=cores) as executor:
            mkdocs_build(config, mkdocs_yml, staging, code, editions, executor, core,
                         (lambda line: conn.send(("line", line))) if talk else None)
        used = {kind: [sorted(cache.used - cache.missed_keys), sorted(cache.missed_keys)]
                for kind, cache in caches.each().items()}
        report = ("done", time.perf_counter() - started, used)
    except (EOFError, KeyboardInterrupt):
        pass  # the parent is gone or stopping (its English build failed, or Ctrl-C)
    except ChronicleError as err:
        report = ("error", str(err))
    except OSError as err:  # a full or read-only disk is the user's to fix: one message
        refused = disk_error(err, staging,
                             "the store and the published site are as they were")
        report = ("error", str(refused)) if refused else ("crash", traceback.format_exc())
    except Exception:
        report = ("crash", traceback.format_exc())
    with contextlib.suppress(OSError):  # a parent that is gone hears nothing
        if report is not None:
            conn.send(report)
        conn.close()
