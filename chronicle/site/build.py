"""`chronicle build`: mkdocs build --strict of the chronicle folder (never the network).

One mkdocs build per language of `site.languages` (site/editions.py): English at the
site's root, and each translated edition into `<lang>/`, built in a process of its own
while English builds when the machine has a second core (site/edition_process.py), else
after English. Everything is built into a staging folder beside the site folder and
published whole once every edition is complete (site/publish.py): a build that fails or
is killed leaves the published site as it was.
It holds the store's lock (a snapshot must not commit under it), refuses to replace a
folder holding anything but an earlier chronicle site, and when `--strict` aborts, the
error lists the warnings that made it abort. What it runs beside itself (render workers,
the edition's process) belongs to the command's executor (chronicle/executor.py).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import shutil
import time
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.executor import Executor, libc, preserved
from chronicle.render.i18n import edition_dir
from chronicle.site.build_cache import Caches
from chronicle.site.core import PROPERDOCS, core_logging, describe_core, load_core
from chronicle.site.edition_process import EditionProcess
from chronicle.site.editions import Editions
from chronicle.site.progress import Say, Steps
from chronicle.site.publish import (
    clear_leftovers,
    edition_staging,
    output_folder,
    publish,
    staging_dir,
)
from chronicle.store import Store, locked, refuse_unsealed

# Files every chronicle site has: a folder holding them is a previous build, safe to replace.
SITE_MARKERS = ("index.html", "api/latest.json")
log = logging.getLogger("mkdocs.plugins.chronicle")
_MAX_WARNINGS = 20  # listed in an error; the rest are counted


class _Collect(logging.Handler):
    """Keep the warnings mkdocs logs during a build (what makes --strict abort)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def check_site_dir(site_dir: Path) -> None:
    """Refuse a site folder that is a file, or a non-empty folder that is not a site."""
    if site_dir.exists() and not site_dir.is_dir():
        raise ChronicleError(f"{site_dir}: not a folder; pass --site-dir a folder for the site")
    if not site_dir.is_dir() or not any(site_dir.iterdir()):
        return
    if all((site_dir / marker).is_file() for marker in SITE_MARKERS):
        return
    raise ChronicleError(
        f"{site_dir}: not empty and not an earlier chronicle site (no "
        f"{' / '.join(SITE_MARKERS)}); a build replaces its site folder whole, so nothing was "
        "deleted: pass --site-dir an empty or new folder")


def build_site(config: RunConfig, site_dir: Path | None = None,
               seconds: dict[str, float] | None = None,
               cached: dict[str, int] | None = None, beside: bool | None = None,
               executor: Executor | None = None, say: Say | None = None) -> Path:
    """Build the site and publish it as `site_dir` (default <root>/site); return it.

    `seconds`, when given, receives the wall time of each language's build; `cached`, for
    each kind of cache (site/build_cache.py: "editions", "svgs", "threads", "verdicts"),
    how many entries came from earlier builds ("<kind> reused") and how many were made
    ("<kind> made"): "svgs made" 0 means no render worker was started. `beside`: build
    each translated edition in its own process while English builds (None: when the
    executor runs that speed-up, on a machine with two cores; site/edition_process.py),
    or after it in this one (False). `executor`: the command's (render workers, the
    edition's process, the staging folders); without one, the build has its own. `say`:
    where each edition says its steps as they end (site/progress.py; None: silent).
    """
    if executor is None:
        with Executor() as own:
            return build_site(config, site_dir, seconds, cached, beside, own, say)
    mkdocs_yml = config.root / "mkdocs.yml"
    if not mkdocs_yml.is_file():
        raise ChronicleError(
            f"{mkdocs_yml}: missing; run `chronicle init {config.root}` to scaffold it"
        )
    site_dir = output_folder(config.root, config.docs_dir, site_dir or config.root / "site",
                             "--site-dir")
    check_site_dir(site_dir)
    store = Store(config.docs_dir)
    caches = Caches.of(config.root)
    editions = Editions(caches=caches)
    with locked(store, "build"):
        refuse_unsealed(store)  # a stray file in docs/days: named, exit 2 (as verify does)
        clear_leftovers(site_dir)
        staging = executor.remove_on_close(staging_dir(site_dir))
        try:
            staging.mkdir(parents=True)
        except OSError as err:
            raise ChronicleError(
                f"{staging.parent}: cannot make the folder the site is built in before it "
                f"replaces {site_dir} ({err.strerror or err}); pass --site-dir a folder "
                "whose parent you can write") from err
        try:
            if config.site.engine == "zensical":
                _build_with_zensical(config, staging, caches,
                                     seconds if seconds is not None else {}, executor, say)
            else:
                _build_editions(config, mkdocs_yml, staging, site_dir, editions, caches,
                                beside, seconds if seconds is not None else {}, executor,
                                say)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)  # now, not when the command ends
            raise
        # Every edition is complete: the site is replaced whole, at once.
        publish(staging, site_dir)
        if say is not None:
            say(f"published {site_dir} ({', '.join(config.site.languages)})")
        caches.prune()  # only after every edition: they share the folders
    if cached is not None:
        for kind, cache in caches.each().items():
            cached.update({f"{kind} reused": cache.reused, f"{kind} made": cache.missed})
    return site_dir


def _build_editions(config: RunConfig, mkdocs_yml: Path, staging: Path, site_dir: Path,
                    editions: Editions, caches: Caches, beside: bool | None,
                    took: dict[str, float], executor: Executor, say: Say | None) -> None:
    """Build every edition of `config.site.languages` into `staging`; raise on the first
    that fails (the others are stopped)."""
    english, *others = config.site.languages
    use_beside = executor.uses("beside") if beside is None else beside
    # Before any mkdocs import: each edition's process runs the core this one does.
    core = load_core()
    children = _start_editions(executor, config, mkdocs_yml, others, use_beside, site_dir,
                               core, say)
    try:
        # English first: it empties its folder.
        for code in [english, *[c for c in others if c not in children]]:
            started = time.perf_counter()
            mkdocs_build(config, mkdocs_yml, staging / edition_dir(code), code, editions,
                         executor, core, say)
            took[code] = time.perf_counter() - started
        if children:
            # The editions beside it take longer (they draw their day charts): what this
            # process's builds held goes back to the system while it waits for them.
            editions.inputs = None
            release_memory()
        for code, child in children.items():
            child.finish(staging)
            child.merge_caches(caches)
            took[code] = child.seconds
    finally:
        for child in children.values():
            child.stop()


def engine_notes(config: RunConfig) -> list[str]:
    """Return what the operator should know about how the site was built (printed by
    `chronicle build`): an mkdocs.yml from before mkdocs-gen-files."""
    if config.site.engine != "mkdocs":
        return []
    from chronicle.site.tree import read_mkdocs_yml

    names = [next(iter(p)) if isinstance(p, dict) else p
             for p in read_mkdocs_yml(config).get("plugins") or []]
    if "chronicle" in names and "gen-files" not in names:
        return [f"{config.root / 'mkdocs.yml'}: no `gen-files` plugin, so the chronicle "
                "plugin wrote the generated pages itself; add `- gen-files: {scripts: "
                "[gen_pages.py]}` after `- chronicle` and a gen_pages.py beside it (README "
                "\"Engines\")"]
    return []


def _build_with_zensical(config: RunConfig, staging: Path, caches: Caches,
                         took: dict[str, float], executor: Executor, say: Say | None
                         ) -> None:
    """Build every edition with Zensical into `staging` (site/zensical.py), English first
    (its folder holds the others)."""
    from chronicle.render.i18n import language
    from chronicle.site.editions import LOCALE_FOLDER
    from chronicle.site.inputs import load_inputs
    from chronicle.site.zensical import build_editions

    langs = [language(code, config.root / LOCALE_FOLDER, config)
             for code in config.site.languages]
    started = time.perf_counter()
    inputs = load_inputs(config, caches)
    if say is not None:
        say(f"store read ({time.perf_counter() - started:.1f} s)")
    took.update(build_editions(inputs, langs, staging, caches, executor, say))


def release_memory() -> None:
    """Collect what no longer has a reference and hand the freed heap back to the system
    (glibc keeps freed memory for reuse: `malloc_trim`; elsewhere only the collection)."""
    gc.collect()
    c = libc()
    if c is not None:
        with contextlib.suppress(AttributeError):  # not glibc
            c.malloc_trim(0)


def _start_editions(executor: Executor, config: RunConfig, mkdocs_yml: Path,
                    codes: list[str], beside: bool, site_dir: Path, core: str,
                    say: Say | None) -> dict[str, EditionProcess]:
    """Start a process building each of the translated editions `codes` (none unless
    `beside`) on `core` (site/core.py), its steps said with `say`; {code: its process}."""
    if not codes or not beside:
        return {}
    started: dict[str, EditionProcess] = {}
    for code in codes:
        try:
            started[code] = EditionProcess.start(executor, config, mkdocs_yml, code,
                                                 edition_staging(site_dir, code), core,
                                                 say)
        except OSError as err:  # no staging folder: build it after English
            log.info("building the %s edition after English: %s", code, err)
    return started


def mkdocs_build(config: RunConfig, mkdocs_yml: Path, site_dir: Path, code: str,
                 editions: Editions, executor: Executor, core: str = PROPERDOCS,
                 say: Say | None = None) -> None:
    """Run one mkdocs build of `mkdocs_yml` into `site_dir`, as the `code` edition, with
    the command's `executor` (its render workers draw the charts), on `core` (the MkDocs
    1.x that runs it, site/core.py: ProperDocs unless this process runs mkdocs already),
    saying its steps with `say` (site/progress.py).

    Nothing depends on the working folder: mkdocs resolves the config's paths (docs_dir,
    hooks, theme folders, gen-files scripts) from mkdocs.yml's folder, and the plugin
    does so for the rss plugin's cache folder.
    """
    load_core(core)
    from mkdocs.exceptions import Abort, ConfigurationError, PluginError

    collect = _Collect()
    edition = "" if code == config.site.languages[0] else f" ({code} edition)"
    with core_logging() as logger:
        logger.addHandler(collect)
        try:
            _run_mkdocs(config, mkdocs_yml, site_dir, code, editions, executor, say, edition)
        except (Abort, ConfigurationError, PluginError) as err:
            warned = collect.messages
            listed = "".join(f"\n  - {m}" for m in warned[:_MAX_WARNINGS])
            if len(warned) > _MAX_WARNINGS:
                listed += f"\n  - ... and {len(warned) - _MAX_WARNINGS} more"
            raise ChronicleError(f"{mkdocs_yml}: the site build failed{edition}: {err}"
                                 + (f"; the warnings:{listed}" if warned else "")) from err
        finally:
            logger.removeHandler(collect)


def _run_mkdocs(config: RunConfig, mkdocs_yml: Path, site_dir: Path, code: str,
                editions: Editions, executor: Executor, say: Say | None, edition: str
                ) -> None:
    """Load mkdocs.yml for the `code` edition and build it (`mkdocs_build`)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config as load_mkdocs

    from chronicle.site.plugin import EXECUTOR_ATTR, ChroniclePlugin

    cfg = load_mkdocs(config_file=str(mkdocs_yml), strict=True, site_dir=str(site_dir))
    setattr(cfg, EXECUTOR_ATTR, executor)  # the plugin's (or old hooks') on_config reads it
    if say is not None:
        from chronicle.site.progress_plugin import NAME, ProgressPlugin

        cfg.plugins[NAME] = ProgressPlugin(
            Steps(say, code, f"mkdocs-material on {describe_core()}"))
    plugin = cfg.plugins.get("chronicle")
    if isinstance(plugin, ChroniclePlugin):
        plugin.use_edition(code, editions)
    elif edition:
        raise ChronicleError(
            f"{mkdocs_yml}: site.languages lists {code}, but only the `chronicle` plugin "
            "builds translated editions; add `- chronicle` under `plugins:` (this "
            "mkdocs.yml predates it), or set `site.languages: [en]`")
    # The mkdocs CLI fires these around a build; plugins (rss) set up state in them.
    # The plugin sets SOURCE_DATE_EPOCH for the build and restores it when the build
    # ends; an old chronicle's hooks hear no build error, so it is restored here too.
    with preserved("SOURCE_DATE_EPOCH"):
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
        finally:
            cfg.plugins.on_shutdown()

