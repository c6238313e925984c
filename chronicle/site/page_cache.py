"""A page's Markdown converted once, its search entries made once (site stage, mkdocs).

Most of an mkdocs build of a chronicle is the engine's per-page work: Python-Markdown
converting each page, then Material's search plugin parsing the HTML back into sections
(segmenting Chinese with jieba). At 100 days that is 5-6 s of a 8.5-10 s edition, and
most of it is the sealed day pages, whose Markdown never changes. Zensical keeps each
page's conversion in a cache of its own (site/engine_cache.py); on mkdocs, chronicle keeps
both in two build caches (site/build_cache.py: signed, a forged entry is a miss), each an
executor speed-up that `chronicle build` runs and the bench measures (chronicle/executor.py):

- `markdown-cache` (.cache/chronicle/pages): each page outside the nav (the days, the
  threads) is a `KeptPage`, which mkdocs makes for such a page anyway (mkdocs lets a
  plugin set `File.page` to a Page subclass). Its render keeps what mkdocs's own leaves
  on the page (HTML, table of contents, title, anchors, links to anchors) under the
  sha256 of everything the conversion reads: the page's Markdown, path and URL, the
  Markdown extensions and their settings, mkdocs's link settings, the installed
  libraries, the Python files beside mkdocs.yml and chronicle's code. One input cannot be
  in the key: the other files the page's links resolve against (a day is added every
  night). The entry records each of those lookups and its answer (the file's URL,
  whether it is excluded) and is used only if every lookup answers the same now. A
  conversion that logged anything (a broken link, an extension's warning) is never kept,
  so a page that warns is converted, and warns, every build.
- `search-cache` (.cache/chronicle/search): Material's search index made a
  `KeptSearchIndex`, whose entries for a page are kept under the sha256 of what the index
  reads of it (its HTML, table of contents, URL, title, front matter's search, tags and
  title), the search settings, jieba's dictionaries and the libraries.

Both are only caches: the site is the same bytes with them or without (tests prove it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import pkgutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import markdown.extensions
from material.plugins.search import plugin as material_search
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, set_exclusions
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink, get_toc

from chronicle.site.build_cache import BuildCache, code_fingerprint, entry_key
from chronicle.site.pages import nav_paths

# Bump when what an entry holds changes.
_FORMAT = 1
# mkdocs 1.6.1 keeps a page's links to anchors only at this logger's levels above DEBUG
# (ProperDocs always keeps them): the logger of the core's pages module (site/core.py).
_PAGES_LOG = logging.getLogger(Page.__module__)


# What converts and indexes a page besides the extensions mkdocs.yml names: module ->
# its distribution (Markdown, Material's extensions and search plugin, the highlighter,
# jieba and the regex library search uses; chronicle is in the code fingerprint).
# mkdocs is whichever MkDocs 1.x the process runs (site/core.py): named by its module.
_ENGINE = {"markdown": "markdown", "mkdocs": None, "material": "mkdocs-material",
           "pymdownx": "pymdown-extensions", "pygments": "pygments", "jieba": "jieba",
           "backrefs": "backrefs", "chronicle": None}


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def _versions(modules: set[str]) -> dict[str, str]:
    """Return the version of each library that converts or indexes a page: the engine's,
    and those providing the modules the settings name (an extension, a slugify): another
    version may give other bytes. By name, as imports find them: never every distribution
    on the path, which depends on the folder a command is started from."""
    found = {name: _version(name) for name in _ENGINE.values() if name}
    core = sys.modules["mkdocs"]
    found["mkdocs"] = f"{core.__name__}-{getattr(core, '__version__', '-')}"
    builtin = {m.name for m in pkgutil.iter_modules(markdown.extensions.__path__)}
    others = {m.split(".")[0] for m in modules} - set(_ENGINE) - builtin \
        - set(sys.stdlib_module_names)
    if others:  # a library of the chronicle's own choosing (~0.7 s to find its owner)
        owners = metadata.packages_distributions()
        for top in sorted(others):
            for name in owners.get(top, [top]):
                found[name] = _version(name)
    return found


def _settings_key(settings: dict[str, Any]) -> str:
    """Return the sha256 of `settings` as JSON, and of the versions of the libraries whose
    functions they hold (!!python/name in mkdocs.yml)."""
    modules: set[str] = set()

    def named(value: object) -> str:
        """Name a value JSON cannot write (a function, a slugify made with its options) by
        what it is, never its address: a repr with one makes a key no later build
        matches (safe, but nothing is ever reused)."""
        if isinstance(value, partial):
            return json.dumps([named(value.func), value.args, value.keywords],
                              sort_keys=True, default=named)
        module = getattr(value, "__module__", type(value).__module__)
        modules.add(str(module))
        name = getattr(value, "__qualname__", None)
        return f"{module}.{name}" if isinstance(name, str) else repr(value)

    text = json.dumps(settings, sort_keys=True, default=named)
    libraries = json.dumps(_versions(modules | set(settings.get("extensions", ()))))
    return hashlib.sha256(f"{text}\n{libraries}".encode()).hexdigest()


def _local_code(config: MkDocsConfig) -> dict[str, str]:
    """The sha256 of each Python file beside mkdocs.yml (hooks, an extension of the
    chronicle's own that the settings name)."""
    folder = Path(config.config_file_path).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("*.py")) if p.is_file()}


def markdown_prefix(config: MkDocsConfig, code: str) -> str:
    """Return what every page's conversion in this build depends on, as a key prefix."""
    settings = {
        "format": _FORMAT, "edition": code, "chronicle": code_fingerprint(),
        "local": _local_code(config),
        "extensions": config.markdown_extensions, "mdx_configs": config.mdx_configs,
        "use_directory_urls": config.use_directory_urls,
        "links": {k: int(v) for k, v in dict(config.validation.links).items()},
        "links_to_anchors": _PAGES_LOG.getEffectiveLevel() > logging.DEBUG,
    }
    return "pages:" + _settings_key(settings)


def keep_pages(files: Files, config: MkDocsConfig, pages: BuildCache, code: str) -> None:
    """Make each page outside the nav a KeptPage. mkdocs makes a page no nav entry names
    with no title (`Page(None, file, config)`), as this does; a page the nav names gets
    its title there, so it is left to mkdocs."""
    set_exclusions(files, config)  # as mkdocs does after on_files: generated files' too
    named = {path.lstrip("/") for path in nav_paths(config.nav)}
    prefix = markdown_prefix(config, code)
    for file in files.documentation_pages():
        if file.page is None and file.inclusion.is_not_in_nav() and file.src_uri not in named:
            KeptPage(file, config, pages, prefix)


class KeptPage(Page):
    """A page whose conversion is kept in (and read from) the `pages` build cache."""

    def __init__(self, file: File, config: MkDocsConfig, pages: BuildCache,
                 prefix: str) -> None:
        super().__init__(None, file, config)
        self._pages, self._prefix = pages, prefix

    def render(self, config: MkDocsConfig, files: Files) -> None:
        """Take the conversion from the cache when its every lookup answers the same;
        otherwise convert (mkdocs's render) and keep it unless it logged anything."""
        key = entry_key(self._prefix, {"src": self.file.src_uri, "url": self.file.url,
                                       "markdown": self.markdown})
        text = self._pages.get_text(key)
        if text is not None:
            if self._restore(text, files):
                return
            self._pages.refuse(key)
        lookups = _Lookups(files)
        with _logging() as logged:
            super().render(config, cast(Files, lookups))
        if not logged and not lookups.other:
            self._pages.put_text(key, json.dumps({
                "content": self.content, "toc": _tokens(self.toc),
                "title": self._title_from_render,
                "anchors": sorted(self.present_anchor_ids or ()),
                "links": None if self.links_to_anchors is None else {
                    target.src_uri: anchors for target, anchors in self.links_to_anchors.items()},
                "lookups": lookups.seen,
            }, ensure_ascii=False))

    def _restore(self, text: str, files: Files) -> bool:
        """Put a kept conversion on the page; False (nothing changed) unless each lookup it
        made answers the same in this build."""
        try:
            kept = json.loads(text)
            if any(_answer(files.get_file_from_path(path)) != answer
                   for path, answer in kept["lookups"].items()):
                return False
            links = kept["links"]
            linked = None if links is None else {
                self.file if path == self.file.src_uri else files.get_file_from_path(path):
                    dict(anchors) for path, anchors in links.items()}
            if linked is not None and None in linked:
                return False
            content, toc = str(kept["content"]), get_toc(kept["toc"])
            title, anchors = kept["title"], set(kept["anchors"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return False
        self.content, self.toc = content, toc
        self._title_from_render = title if isinstance(title, str) else None
        self.present_anchor_ids = anchors
        if linked is not None:
            self.links_to_anchors = cast(dict[File, dict[str, str]], linked)
        return True


class _Lookups:
    """The build's files, as a page's conversion sees them: each lookup is noted with its
    answer (what the converted links depend on). Anything else it asks of them is
    noted too, and then the conversion is not kept."""

    def __init__(self, files: Files) -> None:
        self._files = files
        self.seen: dict[str, list[Any] | None] = {}
        self.other = False

    def get_file_from_path(self, path: str) -> File | None:
        file = self._files.get_file_from_path(path)
        self.seen[path] = _answer(file)
        return file

    def __getattr__(self, name: str) -> Any:
        self.other = True
        return getattr(self._files, name)


def _answer(file: File | None) -> list[Any] | None:
    """What a converted link takes from the file it resolves to."""
    return None if file is None else [file.src_uri, file.url, file.inclusion.is_excluded()]


def _tokens(toc: Any) -> list[dict[str, Any]]:
    """The table of contents as the Markdown toc tokens mkdocs makes it from (get_toc)."""
    items: list[AnchorLink] = list(toc or ())
    return [{"level": a.level, "id": a.id, "name": a.title, "children": _tokens(a.children)}
            for a in items]


class _Noted(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _logging() -> Iterator[list[logging.LogRecord]]:
    """Note every record logged meanwhile (from any logger: the core's does not pass its
    records on when its command line set it up, so it is heard too, and so is `mkdocs`,
    the name plugins log under, whichever core runs: site/core.py)."""
    noted = _Noted()
    core = Page.__module__.split(".")[0]
    loggers = tuple({id(x): x for x in (logging.getLogger(), logging.getLogger("mkdocs"),
                                        logging.getLogger(core))}.values())
    for logger in loggers:
        logger.addHandler(noted)
    try:
        yield noted.records
    finally:
        for logger in loggers:
            logger.removeHandler(noted)


def keep_search(plugin: Any, search: BuildCache) -> None:
    """Make Material's search plugin index through the `search` cache (after its
    on_config made its index); any other search plugin is left as it is."""
    if type(plugin) is not material_search.SearchPlugin:
        return
    settings = dict(plugin.config)
    dictionaries = {}
    for name in ("jieba_dict", "jieba_dict_user"):
        path = settings.get(name)
        if path and Path(path).is_file():
            dictionaries[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    prefix = "search:" + _settings_key({
        "format": _FORMAT, "chronicle": code_fingerprint(), "settings": settings,
        "dictionaries": dictionaries, "jieba": material_search.jieba is not None})
    plugin.search_index = KeptSearchIndex(search, prefix, **settings)


class KeptSearchIndex(material_search.SearchIndex):
    """Material's search index, whose entries for a page are kept in the `search` cache."""

    def __init__(self, search: BuildCache, prefix: str, **config: Any) -> None:
        super().__init__(**config)
        self._search, self._prefix = search, prefix

    def add_entry_from_context(self, page: Page) -> None:
        meta = {k: page.meta.get(k) for k in ("search", "tags", "title")}
        try:
            key = entry_key(self._prefix, {
                "url": page.url, "title": str(page.title), "meta": meta,
                "toc": _tokens(page.toc), "content": page.content})
        except (TypeError, ValueError):  # front matter JSON cannot write: not kept
            super().add_entry_from_context(page)
            return
        start = len(self.entries)

        def index() -> list[dict[str, Any]]:
            super(KeptSearchIndex, self).add_entry_from_context(page)
            return cast(list[dict[str, Any]], self.entries[start:])

        entries = self._search.value(key, index)
        if len(self.entries) == start and isinstance(entries, list):  # read, not indexed
            self.entries.extend(entries)
