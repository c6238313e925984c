"""The mkdocs plugin `chronicle`: the build side of a chronicle (site stage).

The mkdocs adapter of the site's sources (site/outputs/sources.py). chronicle.yml is the
one config: `on_config` sets site_url, name, author and copyright from it and completes the
nav from the page registry; `on_files` renders the edition's sources from one read of the
store, and mkdocs-gen-files writes them into the build (the scaffold's gen_pages.py calls
`write_generated`; without it the plugin does the same with a gen-files editor of its own);
`on_post_build` runs the engine-independent steps the pages need after the build. Per-build
state lives on the plugin instance and is reset by `on_config`; the build never touches the
network.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any, cast

from markupsafe import Markup, escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils.templates import TemplateContext
from mkdocs_gen_files.editor import FilesEditor

from chronicle.config import RunConfig, load_config
from chronicle.errors import ChronicleError
from chronicle.executor import Executor, environment
from chronicle.render.i18n import DEFAULT, ENGLISH, Language, language, site_title
from chronicle.site.engines.mkdocs.config import localize_config
from chronicle.site.outputs.citable import feed_links
from chronicle.site.outputs.editions import (
    LOCALE_FOLDER,
    EditionFiles,
    Editions,
    alternates,
    translate_nav,
    twins,
)
from chronicle.site.outputs.inputs import BuildInputs, load_inputs
from chronicle.site.outputs.pages import (
    SCRIPT,
    SECTIONS,
    STYLESHEET,
    THEME_DIR,
    complete_nav,
)
from chronicle.site.outputs.sources import edition_sources
from chronicle.site.outputs.statics import Drawing
from chronicle.site.publish.finish import finish_edition
from chronicle.store.manifest import EDITION_PATH

log = logging.getLogger("mkdocs.plugins.chronicle")


def load_run_config(mkdocs_config: MkDocsConfig) -> RunConfig:
    """Return the RunConfig of the chronicle beside mkdocs.yml; errors become PluginError."""
    try:
        return load_config(Path(mkdocs_config.config_file_path).resolve().parent)
    except ChronicleError as err:
        raise PluginError(str(err)) from err


class ChroniclePlugin(BasePlugin):
    """Generate a chronicle's run-wide pages and finish its sealed day pages.

    One instance builds one language's edition (site/outputs/editions.py): English, the
    sealed record, unless `chronicle build` hands it another language with `use_edition`.
    """

    def __init__(self) -> None:
        self.run: RunConfig | None = None
        self._inputs: BuildInputs | None = None
        self._drawing: Drawing | None = None
        self.code = DEFAULT
        self.lang: Language = ENGLISH  # set by on_config from the edition's code
        self.editions: Editions | None = None
        self.pages: list[str] = []  # the pages this build wrote (dest_uri)
        self._generated: EditionFiles = {}  # this build's generated files
        self._executor: Executor | None = None  # the command's, or the build's own
        # What `chronicle build` hands the plugin (`use_edition`); a build run by mkdocs
        # itself reads chronicle.yml and makes an executor of its own.
        self._given: tuple[RunConfig, Executor] | None = None
        self._scope = ExitStack()  # what one build sets up and its end undoes

    def use_edition(self, code: str, editions: Editions, run: RunConfig,
                    executor: Executor) -> None:
        """Build the `code` edition of the chronicle `run` (chronicle.yml, read once by the
        command) with the command's `executor`, sharing what `editions` holds with the
        other builds."""
        self.code, self.editions, self._given = code, editions, (run, executor)

    @property
    def inputs(self) -> BuildInputs:
        """The store as this build sees it, read once (once for all editions)."""
        if self._inputs is None and self.editions is not None:
            self._inputs = self.editions.inputs
        if self._inputs is None:
            assert self.run is not None, "on_config runs first"
            try:
                self._inputs = load_inputs(
                    self.run, self.editions.caches if self.editions is not None else None)
            except ChronicleError as err:
                raise PluginError(str(err)) from err
            if self.editions is not None:
                self.editions.inputs = self._inputs
        return self._inputs

    @property
    def languages(self) -> tuple[str, ...]:
        return self.run.site.languages if self.run is not None else (DEFAULT,)

    @event_priority(100)  # before the rss plugin reads site_url
    def configure(self, config: MkDocsConfig) -> MkDocsConfig:
        """Set site_url, name, author and copyright from chronicle.yml; pin the build date."""
        self._end_build()  # an earlier build of this instance that ended without a word
        if self._given is not None:
            run, self._executor = self._given
        else:
            run = load_run_config(config)
            self._executor = self._scope.enter_context(Executor())
        if self.editions is not None and self.editions.inputs is not None \
                and self.editions.inputs.config != run:
            self.editions.inputs = None  # another chronicle: read its own store
        self.run, self._inputs, self._drawing, self.pages = run, None, None, []
        self.lang = language(self.code, run.root / LOCALE_FOLDER, run)
        config.nav = complete_nav(config.nav)
        use_theme_overrides(config)
        if STYLESHEET not in config.extra_css:
            config.extra_css.append(STYLESHEET)
        if SCRIPT not in [str(x) for x in config.extra_javascript]:
            config.extra_javascript.append(SCRIPT)
        config.site_url = run.site.url
        # Text, never markup: Material and the rss plugin print these into pages, <head>
        # and the feed raw in some places and escaped (`| e`) in others; Markup shows as
        # text in both, never escaped twice (site/publish/daily_feed.py gives JSON Feed
        # plain text).
        config.site_name = escape(site_title(run, self.lang))
        config.site_author = escape(run.site.author)
        config.site_description = escape(config.site_description or (
            f"A dated, citable chronicle of the training run {run.run.name}: one page per day."))
        config.copyright = escape(f"{run.site.author} · {run.site.license}")
        if self.code != DEFAULT:
            localize_config(config, run, self.lang)
            config.nav = translate_nav(config.nav, {s.path: s.title for s in SECTIONS},
                                       self.lang)
        if len(self.languages) > 1:
            # The language switch: the edition's home until a page names its own twin.
            config.extra["alternate"] = alternates(self.languages, self.code)
        # Same store, same bytes: mkdocs and the rss plugin read the build's date from
        # SOURCE_DATE_EPOCH only (sitemap.xml.gz, pages' dates, the feeds' build dates), so
        # it is set for this build alone and restored when it ends (`_end_build`).
        self._scope.enter_context(environment(
            SOURCE_DATE_EPOCH=self.inputs.source_date_epoch))
        rss = config.plugins.get("rss")
        rss_config = getattr(rss, "config", None)
        image = getattr(rss_config, "image", None)
        if rss is not None and image and not image.startswith(("http://", "https://")):
            rss.config.image = config.site_url + image.lstrip("/")
        cache_dir = getattr(rss_config, "cache_dir", None)
        if rss is not None and isinstance(cache_dir, str) and not Path(cache_dir).is_absolute():
            # The rss plugin makes its cache folder relative to the working folder: the
            # chronicle's, whatever folder the build is started from.
            rss.config.cache_dir = str(run.root / cache_dir)
        return config

    on_config = configure

    def _end_build(self) -> None:
        """Undo what this build set up: its environment, its own executor."""
        self._scope.close()
        self._executor = None

    @event_priority(50)  # before mkdocs-gen-files runs gen_pages.py (site/gen_pages.py)
    def _render_sources(self, files: Files, *, config: MkDocsConfig) -> Files:
        """Render this edition's sources (site/outputs/sources.py) and start drawing their
        charts' static SVGs (written by on_post_build); mkdocs-gen-files then writes them
        into the build (`write_generated`)."""
        caches = self.editions.caches if self.editions is not None else None
        svgs = caches.svgs if caches is not None else None
        for file in [f for f in files if EDITION_PATH.fullmatch(f.src_uri) or (
                self.code != DEFAULT and f.src_uri.startswith(("days/", "data/", "mementos/")))]:
            # Another language's sealed pages are its edition's (which takes them from the
            # store, under days/); the record's files and the published data stay at the
            # root, once.
            files.remove(file)
        generated = edition_sources(self.inputs, self.lang)
        # The charts are drawn before mkdocs converts the pages (the day charts are sealed).
        self._drawing = Drawing({p: c for p, c in generated.items() if self.code == DEFAULT
                                 or not p.startswith("days/")}, svgs, self._executor)
        self._generated, self._written = generated, False
        return files

    def write_generated(self, editor: FilesEditor) -> None:
        """Write this edition's sources into the build through mkdocs-gen-files' `editor`
        (the scaffold's gen_pages.py calls this): they are files of the build wherever
        mkdocs-gen-files puts its files, on top of docs/ (a sealed day page's source is
        the page as published; its sealed bytes are served beside it, on_post_build)."""
        for path, content in self._generated.items():
            if isinstance(content, Path):  # drawn into the site already: the same bytes
                with content.open("rb") as src, editor.open(path, "wb") as out:
                    shutil.copyfileobj(src, out)
            elif isinstance(content, bytes):
                with editor.open(path, "wb") as out:
                    out.write(content)
            else:
                with editor.open(path, "w", encoding="utf-8", newline="") as out:
                    out.write(content)
        self._written = True

    @event_priority(-50)  # after mkdocs-gen-files
    def _write_unless_written(self, files: Files, *, config: MkDocsConfig) -> Files:
        """Write the sources with an editor of the plugin's own when no gen_pages.py did
        (a mkdocs.yml from before mkdocs-gen-files: documentation/pages/engines.md); draw
        the charts."""
        if not self._written:
            if self.code == DEFAULT:
                log.info("mkdocs.yml runs no gen_pages.py under the gen-files plugin: the "
                         "chronicle plugin writes the generated pages itself (the docs' "
                         "\"Engines\" page says how to move to mkdocs-gen-files)")
            folder = tempfile.mkdtemp(prefix="chronicle-pages-")
            self._scope.callback(shutil.rmtree, folder, ignore_errors=True)
            with FilesEditor(files, config, folder) as editor:
                self.write_generated(editor)
            files = editor.files
        self._draw()
        return files

    on_files = CombinedEvent(_render_sources, _write_unless_written)

    def _draw(self) -> None:
        """Draw this build's charts, then stop its render workers: their memory goes back
        before mkdocs converts the pages, not at the build's end, where its memory peaks
        (a later drawing starts its own)."""
        if self._drawing is not None:
            self._drawing.svgs()
        if self._executor is not None:
            self._executor.stop_render_workers()

    def on_build_error(self, *, error: Exception) -> None:
        """End the scope of a build that failed."""
        self._end_build()

    def on_shutdown(self) -> None:
        """End the build's scope (mkdocs serve: after its last build)."""
        self._end_build()

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig,
                         files: Files) -> str:
        """Make the page's title and description text (`text_meta`)."""
        text_meta(page)
        return markdown

    def on_page_context(self, context: TemplateContext, *, page: Page, config: MkDocsConfig,
                        nav: Any) -> TemplateContext:
        """Hand the theme (site/theme/) this page's language switch, pointing at its twin
        in every language (hreflang both ways), and the chronicle's own feeds, relative to
        the page: the templates write them, nothing patches the built page."""
        base = "../" * page.url.count("/")  # use_directory_urls is off: days/x.html -> ../
        ours = cast(dict[str, Any], context)  # TemplateContext is Material's keys only
        if len(self.languages) > 1:
            ours["chronicle_alternates"] = twins(self.languages, self.code, page.file.dest_uri)
        ours["chronicle_feeds"] = feed_links(self.inputs.config, base, self.lang)
        return context

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        """Note each page this build wrote (the sitemaps of the language switch)."""
        self.pages.append(page.file.dest_uri)
        return output

    def _write_svgs(self, site_dir: Path) -> None:
        """Write the static SVG of every generated chart (drawn before the pages)."""
        self._draw()
        if self._drawing is not None:
            self._drawing.write(site_dir)
        self._drawing = None

    @event_priority(-100)  # after the rss plugin has written its feeds
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Write the charts' SVGs, then the engine-independent post-build steps (sealed
        sources byte for byte, the feeds' enclosures and item HTML, the sitemaps of the
        language switch: site/publish/finish.py)."""
        site_dir = Path(config.site_dir)
        self._write_svgs(site_dir)
        finish_edition(site_dir, self.inputs, self.lang, self._generated, self.pages)
        self._end_build()


def text_meta(page: Page) -> None:
    """Make the front matter's title and description text: Material prints a page's title
    as HTML (in its header, the nav of every page, <title>) and its description raw into
    an attribute; the home page's title is `site.title` from chronicle.yml."""
    for key in ("title", "description"):
        value = page.meta.get(key)
        if isinstance(value, str) and not isinstance(value, Markup):
            page.meta[key] = escape(value)


def use_theme_overrides(config: MkDocsConfig) -> None:
    """Put chronicle's Material template overrides (site/theme/) on the theme's path,
    after a chronicle's own `custom_dir` (which still wins) and before Material's."""
    theme = str(THEME_DIR)
    if theme in config.theme.dirs:
        return
    custom = config.theme.custom_dir
    at = 1 if custom and config.theme.dirs and config.theme.dirs[0] == custom else 0
    config.theme.dirs.insert(at, theme)
