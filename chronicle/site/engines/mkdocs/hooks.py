"""The hook form of the chronicle plugin, for chronicles scaffolded before it (site stage).

Their docs/hooks.py imports `on_config`, `on_page_markdown`, `on_post_page` and
`on_post_build` from chronicle.site (which hands them out from here), and their
docs/gen_pages.py calls `generate` from mkdocs-gen-files.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from chronicle.config import RunConfig
from chronicle.executor import Executor
from chronicle.render.i18n import ENGLISH
from chronicle.site.engines.mkdocs.plugin import ChroniclePlugin
from chronicle.site.outputs.inputs import load_inputs
from chronicle.site.outputs.sources import edition_sources
from chronicle.site.outputs.statics import with_svgs

_ATTR = "_chronicle_plugin"  # the hooks' plugin instance rides on this build's config


# A hook-built chronicle predates translated editions and `use_edition`: its plugin reads
# chronicle.yml and makes its own executor, which starts no process (its charts' SVGs are
# drawn by `generate`, in its own), and ends with the build.
def _plugin(config: MkDocsConfig) -> ChroniclePlugin:
    plugin: ChroniclePlugin | None = getattr(config, _ATTR, None)
    if plugin is None:
        plugin = ChroniclePlugin()
        plugin.configure(config)
    return plugin


@event_priority(100)  # before the rss plugin reads site_url
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Hook form of ChroniclePlugin.configure (a new plugin instance per build)."""
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
    the English sources (site/outputs/sources.py: each sealed day page as published too) and
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
