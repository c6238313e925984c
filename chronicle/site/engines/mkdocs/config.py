"""A translated edition's mkdocs config: the English mkdocs.yml turned into the config of
another language's build (the plugin's `on_config`)."""

from __future__ import annotations

import logging
from typing import Any

from markupsafe import escape
from mkdocs.config.defaults import MkDocsConfig

from chronicle.config import RunConfig
from chronicle.render.i18n import Language
from chronicle.site.outputs.citable import edition_url
from chronicle.site.outputs.editions import generator_words, localize_toc, localized_palette


def localize_config(config: MkDocsConfig, run: RunConfig, lang: Language) -> None:
    """Turn the English mkdocs config into the config of the `lang` edition (in place)."""
    code = lang.code
    config.theme["language"] = code
    config.site_url = edition_url(run, code)
    config.site_description = escape(lang.gettext(
        "A dated, citable chronicle of the training run {run}: one page per day."
    ).format(run=run.run.name))  # text, never markup (site/engines/mkdocs/plugin.py on_config)
    # jieba (Material's Chinese segmentation) announces its dictionary on stderr.
    logging.getLogger("jieba").setLevel(logging.WARNING)
    search = next((p for name, p in config.plugins.items()
                   if name.split("/")[-1] == "search"), None)  # material/search
    if search is not None:
        # Material segments Chinese with jieba at build time; the browser splits the
        # index on its zero-width spaces (theme.language's search separator).
        search.config["lang"] = [code]
    # Python-Markdown's default slugify drops every non-ASCII character, so Chinese
    # headings would get the anchors #_1, #_2...: keep the words (#关键数字), so a link to
    # a section says where it goes. A chronicle's own slugify is left alone.
    localize_toc(config.mdx_configs.setdefault("toc", {}), lang)
    if "palette" in config.theme:
        config.theme["palette"] = localized_palette(config.theme["palette"], lang)
    config.extra["chronicle_made_with"] = generator_words(lang)
    # The site's own script and style and the vega bundle live once, at the root.
    config.extra_css = [_root_asset(p) for p in config.extra_css]
    config.extra_javascript = [_root_script(p) for p in config.extra_javascript]


def _root_asset(path: str) -> str:
    return path if "://" in path or path.startswith("/") else "../" + path


def _root_script(item: Any) -> Any:
    path = str(item)
    if "://" in path or path.startswith("/"):
        return item
    if hasattr(item, "path"):
        item.path = "../" + path
        return item
    return "../" + path
