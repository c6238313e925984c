"""The mkdocs plugin `chronicle`: the build side of a chronicle (site stage).

chronicle.yml is the one config: `on_config` sets site_url, name, author and copyright
from it and completes the nav from the page registry; `on_files` adds every generated
page (site/pages.py) from one read of the store; the page hooks append what a sealed file
cannot hold (its own citation, the link to the next day). Per-build state lives on the
plugin instance and is reset by `on_config`; the build never touches the network.
"""

from __future__ import annotations

import logging
import os
import re
from datetime import date
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from chronicle.config import RunConfig, load_config
from chronicle.errors import ChronicleError
from chronicle.site.citable import alternate_links, day_sections
from chronicle.site.daily_feed import fill_daily_feeds, item_html
from chronicle.site.inputs import BuildInputs, load_inputs
from chronicle.site.pages import SCRIPT, STYLESHEET, THEME_DIR, complete_nav, site_files
from chronicle.site.statics import Drawing

log = logging.getLogger("mkdocs.plugins.chronicle")
_OLD_QUOT, _OLD_APOS = "&\\#34;", "&\\#39;"
DAY_PAGE = re.compile(r"^days/(\d{4}-\d{2}-\d{2})\.md$")
_ENCLOSURE = re.compile(r'<enclosure url="([^"]+)" type="[^"]*" length=("None")')


def load_run_config(mkdocs_config: MkDocsConfig) -> RunConfig:
    """Return the RunConfig of the chronicle beside mkdocs.yml; errors become PluginError."""
    try:
        return load_config(Path(mkdocs_config.config_file_path).resolve().parent)
    except ChronicleError as err:
        raise PluginError(str(err)) from err


class ChroniclePlugin(BasePlugin):
    """Generate a chronicle's run-wide pages and finish its sealed day pages."""

    def __init__(self) -> None:
        self.run: RunConfig | None = None
        self._inputs: BuildInputs | None = None
        self._drawing: Drawing | None = None

    @property
    def inputs(self) -> BuildInputs:
        """The store as this build sees it, read once."""
        if self._inputs is None:
            assert self.run is not None, "on_config runs first"
            try:
                self._inputs = load_inputs(self.run)
            except ChronicleError as err:
                raise PluginError(str(err)) from err
        return self._inputs

    @event_priority(100)  # before the rss plugin reads site_url
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        """Set site_url, name, author and copyright from chronicle.yml; pin the build date."""
        run = load_run_config(config)
        self.run, self._inputs, self._drawing = run, None, None
        config.nav = complete_nav(config.nav)
        use_theme_overrides(config)
        if STYLESHEET not in config.extra_css:
            config.extra_css.append(STYLESHEET)
        if SCRIPT not in [str(x) for x in config.extra_javascript]:
            config.extra_javascript.append(SCRIPT)
        config.site_url = run.site.url
        config.site_name = run.site.title
        config.site_author = run.site.author
        config.site_description = config.site_description or (
            f"A dated, citable chronicle of the training run {run.run.name}: one page per day.")
        config.copyright = f"{run.site.author} · {run.site.license}"
        latest = self.inputs.latest
        # Same store, same bytes: sitemap.xml.gz and the feeds' build dates use this.
        os.environ.setdefault("SOURCE_DATE_EPOCH", str(int(latest.taken_at.timestamp()))
                              if latest else "0")
        rss = config.plugins.get("rss")
        image = getattr(getattr(rss, "config", None), "image", None)
        if rss is not None and image and not image.startswith(("http://", "https://")):
            rss.config.image = run.site.url + image.lstrip("/")
        return config

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        """Add every generated page and file (in memory; nothing is written to docs/) and
        start drawing the charts' static SVGs (written by on_post_build)."""
        generated = site_files(self.inputs)
        self._drawing = Drawing(generated)
        for path, content in generated.items():
            old = files.get_file_from_path(path)
            if old is not None:  # e.g. a scaffold's old copy of the site's stylesheet
                files.remove(old)
            files.append(File.generated(config, path, content=content))
        return files

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig,
                         files: Files) -> str:
        """Append the citation, data files and a link to the next day to a sealed day page."""
        match = DAY_PAGE.match(page.file.src_uri)
        if not match:
            return markdown
        day = match.group(1)
        # Pages sealed before quotes stayed quotes (render.md_text) hold `&\#34;`, which
        # shows as typed; only the rendering changes, the sealed file is served as is.
        markdown = markdown.replace(_OLD_QUOT, '"').replace(_OLD_APOS, "'")
        markdown = markdown.rstrip("\n") + "\n\n" + self._cite_sections(day)
        later = [d["date"] for d in self.inputs.days if d["date"] > day]
        if not later:
            return markdown
        return markdown.rstrip("\n") + f"\n\n[Next day: {later[0]} →]({later[0]}.md)\n"

    def _cite_sections(self, day: str) -> str:
        snap = self.inputs.sealers.get(date.fromisoformat(day))
        sealed = self.inputs.day_json(day)
        if snap is None or sealed is None:
            return ""
        return day_sections(self.inputs.config, sealed, snap)

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        """Announce the failures and corrections feeds in every page's <head>."""
        base = "../" * page.url.count("/")  # use_directory_urls is off: days/x.html -> ../
        return output.replace("</head>", alternate_links(self.inputs.config, base) + "</head>", 1)

    @event_priority(-100)  # after the rss plugin has written its feeds
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        """Serve sealed sources byte for byte; fill in the feeds' enclosure lengths and
        each daily item's HTML."""
        serve_sealed_sources(config)
        if self._drawing is not None:
            self._drawing.write(Path(config.site_dir))
            self._drawing = None
        fix_enclosure_lengths(config)
        if config.plugins.get("rss") is not None:
            fill_daily_feeds(Path(config.site_dir), item_html(self.inputs))


def use_theme_overrides(config: MkDocsConfig) -> None:
    """Put chronicle's Material template overrides (site/theme/) on the theme's path,
    after a chronicle's own `custom_dir` (which still wins) and before Material's."""
    theme = str(THEME_DIR)
    if theme in config.theme.dirs:
        return
    custom = config.theme.custom_dir
    at = 1 if custom and config.theme.dirs and config.theme.dirs[0] == custom else 0
    config.theme.dirs.insert(at, theme)


def serve_sealed_sources(config: MkDocsConfig) -> None:
    """Copy each sealed day's Markdown to the site byte for byte: its cited sha256 is checkable."""
    docs, site_dir = Path(config.docs_dir), Path(config.site_dir)
    for path in sorted((docs / "days").glob("*.md")):
        if DAY_PAGE.match(f"days/{path.name}"):
            (site_dir / "days").mkdir(parents=True, exist_ok=True)
            (site_dir / "days" / path.name).write_bytes(path.read_bytes())


def fix_enclosure_lengths(config: MkDocsConfig) -> None:
    """Fill in the byte length of feed enclosures (the rss plugin writes length="None").

    The plugin measures a page image relative to the page's source folder but builds its
    URL relative to the site root; day images are site-root paths, so measure them here.
    """
    rss = config.plugins.get("rss")
    names = getattr(getattr(rss, "config", None), "feeds_filenames", None)
    if names is None:
        return
    site_dir, url = Path(config.site_dir), config.site_url or ""

    def length(match: re.Match[str]) -> str:
        target = site_dir / match.group(1)[len(url):]
        size = target.stat().st_size if match.group(1).startswith(url) and target.is_file() else 0
        return f'{match.group(0)[: -len(match.group(2))]}"{size}"'

    for name in (names.rss_created, names.rss_updated):
        path = site_dir / name
        if path.is_file():
            path.write_text(_ENCLOSURE.sub(length, path.read_text(encoding="utf-8")),
                            encoding="utf-8")
