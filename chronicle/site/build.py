"""`chronicle build`: mkdocs build --strict of the chronicle folder (never the network).

One mkdocs build per language of `site.languages` (site/editions.py): English at the
site's root, and each translated edition into `<lang>/` of the same site folder, built in
a process of its own while English builds when the machine has a second core
(site/edition_process.py), else after English.
It holds the store's lock (a snapshot must not commit under it), refuses to build into a
folder holding anything but an earlier chronicle site (mkdocs empties the site folder
first), and when `--strict` aborts, the error lists the warnings that made it abort.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.render.i18n import edition_dir
from chronicle.site.build_cache import Caches
from chronicle.site.edition_process import EditionProcess, can_run_beside
from chronicle.site.editions import Editions
from chronicle.store import Store, locked, refuse_unsealed

# Files every chronicle site has: a folder holding them is a previous build, safe to empty.
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


def check_site_dir(site_dir: Path, config: RunConfig) -> None:
    """Refuse a site folder that is a file, or a non-empty folder that is not a site."""
    if site_dir.exists() and not site_dir.is_dir():
        raise ChronicleError(f"{site_dir}: not a folder; pass --site-dir a folder for the site")
    if not site_dir.is_dir() or not any(site_dir.iterdir()):
        return
    if all((site_dir / marker).is_file() for marker in SITE_MARKERS):
        return
    inside = config.root.resolve().is_relative_to(site_dir.resolve())
    raise ChronicleError(
        f"{site_dir}: not empty and not an earlier chronicle site "
        f"({'it holds the chronicle itself' if inside else 'no ' + ' / '.join(SITE_MARKERS)});"
        " a build empties its site folder first, so nothing was deleted: pass --site-dir an "
        "empty or new folder")


@contextmanager
def _source_date_epoch(value: str) -> Iterator[None]:
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old


def build_site(config: RunConfig, site_dir: Path | None = None,
               seconds: dict[str, float] | None = None,
               cached: dict[str, int] | None = None, beside: bool | None = None) -> Path:
    """Build the site into `site_dir` (default <root>/site) and return it.

    `seconds`, when given, receives the wall time of each language's build; `cached`, for
    each kind of cache (site/build_cache.py: "editions", "svgs", "threads", "verdicts"),
    how many entries came from earlier builds ("<kind> reused") and how many were made
    ("<kind> made"): "svgs made" 0 means no render worker was started. `beside`: build
    each translated edition in its own process while English builds (the default on a
    machine with two cores; site/edition_process.py), or after it in this one (False).
    """
    mkdocs_yml = config.root / "mkdocs.yml"
    if not mkdocs_yml.is_file():
        raise ChronicleError(
            f"{mkdocs_yml}: missing; run `chronicle init {config.root}` to scaffold it"
        )
    site_dir = site_dir or config.root / "site"
    check_site_dir(site_dir, config)
    store = Store(config.docs_dir)
    caches = Caches.of(config.root)
    editions = Editions(caches=caches)
    with locked(store, "build"):
        refuse_unsealed(store)  # a stray file in docs/days: named, exit 2 (as verify does)
        latest = store.latest()
        # Same store, same bytes: dates that mkdocs and the feed plugin would take from the
        # clock come from the newest snapshot instead.
        epoch = str(int(latest.taken_at.timestamp())) if latest else "0"
        with _source_date_epoch(epoch):  # before the children start: they inherit it
            english, *others = config.site.languages
            children = _start_editions(config, mkdocs_yml, others, beside)
            took = seconds if seconds is not None else {}
            try:
                # English first: it empties the site folder.
                for code in [english, *[c for c in others if c not in children]]:
                    started = time.perf_counter()
                    mkdocs_build(config, mkdocs_yml, site_dir / edition_dir(code), code,
                                 editions)
                    took[code] = time.perf_counter() - started
                for code, child in children.items():
                    child.finish(site_dir)
                    child.merge_caches(caches)
                    took[code] = child.seconds
            finally:
                for child in children.values():
                    child.stop()
        caches.prune()  # only after every edition: they share the folders
    if cached is not None:
        for kind, cache in caches.each().items():
            cached.update({f"{kind} reused": cache.reused, f"{kind} made": cache.missed})
    return site_dir


def _start_editions(config: RunConfig, mkdocs_yml: Path, codes: list[str],
                    beside: bool | None) -> dict[str, EditionProcess]:
    """Start a process building each of the translated editions `codes` (none when
    `beside` is False, or on one core when it is None); {code: its process}."""
    if not codes or beside is False or (beside is None and not can_run_beside()):
        return {}
    started: dict[str, EditionProcess] = {}
    for code in codes:
        try:
            started[code] = EditionProcess.start(config, mkdocs_yml, code)
        except OSError as err:  # no staging folder (a read-only cache): build it after English
            log.info("building the %s edition after English: %s", code, err)
    return started


def mkdocs_build(config: RunConfig, mkdocs_yml: Path, site_dir: Path, code: str,
                 editions: Editions) -> None:
    """Run one mkdocs build of `mkdocs_yml` into `site_dir`, as the `code` edition."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config as load_mkdocs
    from mkdocs.exceptions import Abort, ConfigurationError, PluginError

    from chronicle.site.plugin import ChroniclePlugin

    collect = _Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(collect)
    cwd = Path.cwd()
    edition = "" if code == config.site.languages[0] else f" ({code} edition)"
    try:
        os.chdir(config.root)  # gen-files scripts are resolved relative to the cwd
        cfg = load_mkdocs(config_file=str(mkdocs_yml), strict=True, site_dir=str(site_dir))
        plugin = cfg.plugins.get("chronicle")
        if isinstance(plugin, ChroniclePlugin):
            plugin.use_edition(code, editions)
        elif edition:
            raise ChronicleError(
                f"{mkdocs_yml}: site.languages lists {code}, but only the `chronicle` plugin "
                "builds translated editions; add `- chronicle` under `plugins:` (this "
                "mkdocs.yml predates it), or set `site.languages: [en]`")
        # The mkdocs CLI fires these around a build; plugins (rss) set up state in them.
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
        finally:
            cfg.plugins.on_shutdown()
    except (Abort, ConfigurationError, PluginError) as err:
        warned = collect.messages
        listed = "".join(f"\n  - {m}" for m in warned[:_MAX_WARNINGS])
        if len(warned) > _MAX_WARNINGS:
            listed += f"\n  - ... and {len(warned) - _MAX_WARNINGS} more"
        raise ChronicleError(f"{mkdocs_yml}: the site build failed{edition}: {err}"
                             + (f"; the warnings:{listed}" if warned else "")) from err
    finally:
        logger.removeHandler(collect)
        os.chdir(cwd)
