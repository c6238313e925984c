"""The build path (site stage), grouped by job: build.py is `chronicle build` (the
engine of `site.engine`, the site staged and swapped in whole); outputs/ is what an
edition is made of, for any engine (the store read once, the page registry, the sources,
the charts' SVGs, the API and citable files); publish/ is what happens to a built site
(the post-build step, the staging swap, `check-site`, release notes); engines/mkdocs/
and engines/zensical/ are the adapters. Only this package and snapshot/ touch the Store.

Chronicles scaffolded before the plugin existed keep building: their docs/hooks.py
imports `on_config`, `on_page_markdown`, `on_post_page` and `on_post_build` from here,
and their docs/gen_pages.py calls `generate` (engines/mkdocs/hooks.py). They are handed
out when asked for, not imported with the package: a Zensical build needs none of
mkdocs, Material or jieba (a noticeable part of every build's start).
"""

from __future__ import annotations

import importlib
from typing import Any

# Each name this package hands out, and the module it lives in.
_HOOKS = "engines.mkdocs.hooks"
_FROM = {"on_config": _HOOKS, "on_page_markdown": _HOOKS, "on_post_page": _HOOKS,
         "on_post_build": _HOOKS, "generate": _HOOKS, "ChroniclePlugin": "engines.mkdocs.plugin",
         "load_run_config": "engines.mkdocs.plugin", "site_files": "outputs.pages"}
__all__ = sorted(_FROM)


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_FROM[name]}"), name)
