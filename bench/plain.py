"""A plain mkdocs-material project holding the same Markdown pages as a built chronicle.

The chronicle build's own overhead is what it costs beyond this: the English project
`chronicle render` writes (site/outputs/tree.py: the same Markdown, assets and published
files, each sealed day page as published, the charts' SVGs), built with Material's theme
and its search plugin only (no chronicle plugin, no gen-files, no rss, no template
overrides).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import yaml

from chronicle.config import load_config
from chronicle.executor import Executor
from chronicle.site.outputs.inputs import load_inputs
from chronicle.site.outputs.tree import render_tree


def write_plain_project(chronicle: Path, target: Path) -> Path:
    """Write the plain twin of the chronicle at `chronicle` into `target`; return it."""
    config = load_config(chronicle)
    english = replace(config, site=replace(config.site, languages=("en",)))
    with Executor() as executor:
        (tree,) = render_tree(english, load_inputs(english), target.parent / f"{target.name}-tree",
                              executor)
    shutil.rmtree(target, ignore_errors=True)
    shutil.move(tree.root, target)
    shutil.rmtree(target.parent / f"{target.name}-tree", ignore_errors=True)
    shutil.rmtree(target / "overrides", ignore_errors=True)
    path = target / "mkdocs.yml"
    mk = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.Loader)
    mk["plugins"] = ["search"]
    mk["strict"] = False
    for key in ("custom_dir", "variant"):
        mk["theme"].pop(key, None)
    path.write_text(yaml.dump(mk, Dumper=yaml.Dumper, sort_keys=False, allow_unicode=True),
                    encoding="utf-8")
    return target
