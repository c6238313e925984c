"""What a chronicle's gen_pages.py calls: mkdocs-gen-files runs that script in every
mkdocs build, and it writes the pages the `chronicle` plugin rendered from the store into
the build (site stage)."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs_gen_files.editor import FilesEditor

from chronicle.site.engines.mkdocs.plugin import ChroniclePlugin


def write_pages(config: MkDocsConfig | None = None) -> None:
    """Write the rendered sources of this build's edition through mkdocs-gen-files."""
    editor = FilesEditor.current()
    plugin = (config or editor.config).plugins.get("chronicle")
    if not isinstance(plugin, ChroniclePlugin):
        raise PluginError(
            "gen_pages.py writes the pages the `chronicle` plugin renders: add `- chronicle` "
            "under `plugins:` in mkdocs.yml, before `- gen-files`")
    plugin.write_generated(editor)
