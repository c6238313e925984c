"""The mkdocs-material engine: one mkdocs build per edition of `site.languages`
(site/outputs/editions.py), English at the site's root and each translated edition into
`<lang>/`, built in a process of its own while English builds when the machine has a second
core (edition_process.py), else after English. When `--strict` aborts, the error lists the
warnings that made it abort. site/build.py stages and publishes what this builds.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.executor import Executor, libc, preserved
from chronicle.render.i18n import edition_dir
from chronicle.site.build_cache import Caches
from chronicle.site.engines.mkdocs.core import PROPERDOCS, core_logging, describe_core, load_core
from chronicle.site.engines.mkdocs.edition_process import EditionProcess
from chronicle.site.outputs.editions import Editions
from chronicle.site.progress import Say, Steps
from chronicle.site.publish.staging import edition_staging

log = logging.getLogger("mkdocs.plugins.chronicle")
_MAX_WARNINGS = 20  # listed in an error; the rest are counted


class _Collect(logging.Handler):
    """Keep the warnings mkdocs logs during a build (what makes --strict abort)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def build_editions(config: RunConfig, mkdocs_yml: Path, staging: Path, site_dir: Path,
                   caches: Caches, beside: bool | None, took: dict[str, float],
                   executor: Executor, say: Say | None) -> None:
    """Build every edition of `config.site.languages` into `staging`; raise on the first
    that fails (the others are stopped)."""
    english, *others = config.site.languages
    editions = Editions(caches=caches)
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
            # The editions beside it take longer (Chinese search is segmented with jieba):
            # what this process's builds held goes back to the system while it waits.
            editions.inputs = None
            release_memory()
        for code, child in children.items():
            child.finish(staging)
            child.merge_caches(caches)
            took[code] = child.seconds
    finally:
        for child in children.values():
            child.stop()


def _start_editions(executor: Executor, config: RunConfig, mkdocs_yml: Path,
                    codes: list[str], beside: bool, site_dir: Path, core: str,
                    say: Say | None) -> dict[str, EditionProcess]:
    """Start a process building each of the translated editions `codes` (none unless
    `beside`) on `core` (core.py), its steps said with `say`; {code: its process}."""
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
    1.x that runs it, core.py: ProperDocs unless this process runs mkdocs already),
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

    from chronicle.site.engines.mkdocs.plugin import ChroniclePlugin

    cfg = load_mkdocs(config_file=str(mkdocs_yml), strict=True, site_dir=str(site_dir))
    if say is not None:
        from chronicle.site.engines.mkdocs.progress_plugin import NAME, ProgressPlugin

        cfg.plugins[NAME] = ProgressPlugin(
            Steps(say, code, f"mkdocs-material on {describe_core()}"))
    plugin = cfg.plugins.get("chronicle")
    if isinstance(plugin, ChroniclePlugin):
        plugin.use_edition(code, editions, config, executor)
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


def release_memory() -> None:
    """Collect what no longer has a reference and hand the freed heap back to the system
    (glibc keeps freed memory for reuse: `malloc_trim`; elsewhere only the collection)."""
    gc.collect()
    c = libc()
    if c is not None:
        with contextlib.suppress(AttributeError):  # not glibc
            c.malloc_trim(0)
