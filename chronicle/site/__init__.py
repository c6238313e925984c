"""The build path (site stage): the mkdocs plugin `chronicle` and what it generates.

plugin.py is the mkdocs adapter (`plugins: [chronicle]` in mkdocs.yml); inputs.py reads
the store once per build; pages.py is the page registry; api.py and citable.py write the
machine-readable and citable files; build.py is `chronicle build`; check.py is
`chronicle check-site`. Only this package and snapshot/ touch the Store.

The functions below keep chronicles scaffolded before the plugin existed building: their
docs/hooks.py imports `on_config`, `on_page_markdown`, `on_post_page` and `on_post_build`
from here, and their docs/gen_pages.py calls `generate` from mkdocs-gen-files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from chronicle.config import RunConfig
from chronicle.executor import Executor
from chronicle.render.i18n import ENGLISH
from chronicle.site.inputs import load_inputs
from chronicle.site.pages import site_files
from chronicle.site.plugin import ChroniclePlugin, load_run_config
from chronicle.site.sources import edition_sources
from chronicle.site.statics import with_svgs

_ATTR = "_chronicle_plugin"  # the hooks' plugin instance rides on this build's config


def _plugin(config: MkDocsConfig) -> ChroniclePlugin:
    plugin: ChroniclePlugin | None = getattr(config, _ATTR, None)
    if plugin is None:
        plugin = ChroniclePlugin()
        plugin.configure(config)
    return plugin


@event_priority(100)  # before the rss plugin reads site_url
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Hook form of ChroniclePlugin.configure (a new plugin instance per build; the search
    cache is `chronicle build`'s, which runs the plugin)."""
    plugin = ChroniclePlugin()
    config = plugin.configure(config)
    setattr(config, _ATTR, plugin)
    return config


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Hook form of ChroniclePlugin.on_page_markdown."""
    return _plugin(config).on_page_markdown(markdown, page=page, config=config, files=files)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Hook form of ChroniclePlugin.on_post_page."""
    return _plugin(config).on_post_page(output, page=page, config=config)


@event_priority(-100)  # after the rss plugin has written its feeds
def on_post_build(config: MkDocsConfig) -> None:
    """Hook form of ChroniclePlugin.on_post_build."""
    _plugin(config).on_post_build(config=config)


def generate(config: RunConfig) -> None:
    """Write every generated page with mkdocs_gen_files.open() (old scaffolds' gen_pages.py):
    the English sources (site/sources.py: each sealed day page as published too) and
    their charts' SVGs."""
    import mkdocs_gen_files

    with Executor() as executor:
        sources = edition_sources(load_inputs(config), ENGLISH)
        files = with_svgs({p: c for p, c in sources.items() if not isinstance(c, Path)},
                          executor)
    for path, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with mkdocs_gen_files.open(path, mode) as fh:
            fh.write(content)


__all__: list[Any] = ["ChroniclePlugin", "generate", "load_run_config", "on_config",
                      "on_page_markdown", "on_post_build", "on_post_page", "site_files"]
