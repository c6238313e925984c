"""The Zensical adapter: the chronicle's sources built by Zensical (site stage).

Material for MkDocs reaches its end of life on 2027-05-05; Zensical, by Material's team,
reads the same mkdocs.yml and renders the same Python-Markdown, but runs no MkDocs plugin
or hook. So each edition's sources are written as a project of plain files
(site/outputs/tree.py) under `.cache/zensical/<code>/` (kept between builds on this
machine, never restored from elsewhere: Zensical keeps its own cache in `.cache/` beside
each project's config, and only changed files are written again), built there by `zensical
build --strict` in a child process of the command's executor (it dies with the command),
moved into the staging folder, and finished by the same post-build step as an mkdocs build
(site/publish/finish.py). Zensical's own cache in each project is filled from, and kept as,
a signed entry of the build cache (site/engines/zensical/cache.py). Zensical is driven
through its public `build` alone (chronicle/workers/zensical_build.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.executor import Child, ChildGone, Executor
from chronicle.render.i18n import DEFAULT, LOCALE_FOLDER, Language, edition_dir, language
from chronicle.site.build_cache import BuildCache, Caches
from chronicle.site.engines.zensical import cache as engine_cache
from chronicle.site.outputs.editions import EditionFiles
from chronicle.site.outputs.inputs import BuildInputs, load_inputs
from chronicle.site.outputs.statics import Drawing
from chronicle.site.outputs.tree import EditionTree, write_edition
from chronicle.site.progress import Say, Steps
from chronicle.site.publish.finish import finish_edition
from chronicle.workers import zensical_build

# Not under .cache/chronicle, which the nightly workflow restores from earlier runs: a
# restored tree, or Zensical's own cache in it (unsigned), could change a page.
TREES = Path(".cache") / "zensical"
LOG_NAME = "zensical.log"
_LOG_LINES = 20  # of Zensical's output, quoted in an error
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")  # Zensical colours its warnings even into a file


def zensical_version() -> str | None:
    """Return the installed Zensical's version (None when it is not installed)."""
    try:
        import zensical
    except ImportError:
        return None
    return str(zensical.version())


class EditionBuild:
    """One edition's Zensical build, in two halves: `start` writes its project and starts
    Zensical in a child process; `finish` draws the charts' SVGs while Zensical builds,
    waits for it and completes the edition in `site_dir`. Between the two, the command
    may prepare the next edition (a translated edition is written while English builds:
    the executor's `beside` speed-up)."""

    def __init__(self, inputs: BuildInputs, lang: Language, site_dir: Path,
                 caches: Caches | None, executor: Executor, say: Say | None = None) -> None:
        self.inputs, self.lang, self.site_dir = inputs, lang, site_dir
        self.caches, self.executor, self.say = caches, executor, say
        self._steps: Steps | None = None  # what the edition says as it builds
        self.tree = EditionTree(lang.code, inputs.config.root / TREES / lang.code)
        self.seconds = 0.0
        self._child: Child | None = None
        self._drawing: Drawing | None = None
        self._sources: EditionFiles = {}
        self._version = zensical_version()
        # Zensical's cache of the project: restored from and kept in .cache/chronicle.
        self._engine_cache: BuildCache | None = (
            caches.zensical if caches is not None and executor.uses("engine-cache") else None)
        self._engine_key = engine_cache.cache_key(inputs, lang.code, self.tree.root,
                                                  self._version)

    def start(self) -> EditionBuild:
        started = time.perf_counter()
        if self._version is None:
            raise ChronicleError(
                "chronicle.yml: site.engine is zensical, but Zensical is not installed; "
                "`pip install zensical==0.0.73` (the docs' \"Engines\" page), or set site.engine: "
                "mkdocs")
        code = self.lang.code
        if self.say is not None:
            self._steps = Steps(self.say, code, f"Zensical {self._version}")
        self._sources = write_edition(self.inputs, self.lang, self.tree, self.caches,
                                      self.executor, zensical=True)
        self._done(f"sources of {len(self._sources)} files written")
        engine_cache.restore(self.tree.root, self._engine_cache, self._engine_key)
        # The charts' SVGs are drawn in `finish`, while Zensical builds the pages in its
        # child (a translated edition's day charts came drawn into the tree).
        self._drawing = Drawing({p: c for p, c in self._sources.items() if code == DEFAULT
                                 or not p.startswith("days/")},
                                self.caches.svgs if self.caches is not None else None,
                                self.executor)
        self._child = self.executor.start(
            zensical_build.build, str(self.tree.config_file), str(self.tree.root / LOG_NAME),
            name=f"zensical build ({code})",
            env={"SOURCE_DATE_EPOCH": self.inputs.source_date_epoch})
        self.seconds += time.perf_counter() - started
        return self

    def finish(self) -> float:
        """Wait for Zensical and the drawing, move the edition into `site_dir` (which must
        not exist or be empty) and run the post-build step; return the edition's seconds."""
        started = time.perf_counter()
        assert self._child is not None and self._drawing is not None, "start first"
        self._drawing.svgs()  # while Zensical builds
        self._done("charts drawn")
        _wait(self._child, self.tree)
        self._done("pages built by Zensical")
        if self._engine_cache is not None:
            engine_cache.keep(self.tree.root, self._engine_cache, self._engine_key)
        site_dir = self.site_dir
        if site_dir.exists():
            site_dir.rmdir()  # the staging folder made for it (empty)
        site_dir.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.tree.site, site_dir)
        self._drawing.write(site_dir)
        pages = sorted(rel for p in site_dir.rglob("*.html")
                       if not _in_edition_folder(rel := p.relative_to(site_dir).as_posix(),
                                                 self.inputs))
        finish_edition(site_dir, self.inputs, self.lang, self._sources, pages)
        self._done("post-build steps done (sealed sources, chart files, feed items, "
                   "sitemaps)")
        self.seconds += time.perf_counter() - started
        return self.seconds

    def _done(self, step: str) -> None:
        if self._steps is not None:
            self._steps.done(step)


def build_editions(config: RunConfig, staging: Path, caches: Caches, took: dict[str, float],
                   executor: Executor, say: Say | None = None) -> None:
    """Build every edition of `config.site.languages` (English first: its folder holds the
    others) with Zensical into `staging`, each one's seconds into `took`. With the `beside`
    speed-up, each next edition's project is written while Zensical builds the one before.
    `say`: where each edition says its steps."""
    started = time.perf_counter()
    inputs = load_inputs(config, caches)
    if say is not None:
        say(f"store read ({time.perf_counter() - started:.1f} s)")
    builds = [EditionBuild(inputs, language(code, config.root / LOCALE_FOLDER, config),
                           staging / edition_dir(code), caches, executor, say)
              for code in config.site.languages]
    if executor.uses("beside"):
        for build in builds:
            build.start()
        for build in builds:
            took[build.lang.code] = build.finish()
    else:
        for build in builds:
            took[build.lang.code] = build.start().finish()
    executor.stop_render_workers()


def _in_edition_folder(rel: str, inputs: BuildInputs) -> bool:
    return any(rel.startswith(f"{code}/") for code in inputs.config.site.languages[1:])


def _wait(child: Child, tree: EditionTree) -> None:
    """Wait for a `zensical build --strict` child; raise ChronicleError, quoting Zensical's
    last lines, when it failed."""
    log = tree.root / LOG_NAME
    try:
        outcome = child.recv()
    except ChildGone as err:
        raise ChronicleError(f"{tree.config_file}: the Zensical build ended without a word "
                             f"({err}){_tail(log)}") from err
    finally:
        child.join()
    if outcome != "done":
        raise ChronicleError(f"{tree.config_file}: the Zensical build failed ({outcome})"
                             f"{_tail(log)}; the sources are in {tree.docs}")


def _tail(log: Path) -> str:
    with contextlib.suppress(OSError):
        text = _COLOURS.sub("", log.read_text(encoding="utf-8", errors="replace"))
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        if lines:
            return "; Zensical said:\n  " + "\n  ".join(lines[-_LOG_LINES:])
    return ""


def clear_trees(root: Path) -> None:
    """Remove the Zensical projects of a chronicle (and Zensical's caches in them)."""
    shutil.rmtree(root / TREES, ignore_errors=True)
