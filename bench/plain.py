"""A plain mkdocs-material project holding the same Markdown pages as a built chronicle.

The chronicle build's own overhead is what it costs beyond this: same theme, same
Markdown, same assets and published files, the search plugin only (no chronicle plugin,
no rss, no hooks). Day pages get the blocks the chronicle plugin appends at build time, so
both builds convert the same text.
"""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import yaml

from chronicle.config import load_config
from chronicle.render.i18n import ENGLISH
from chronicle.site.citable import day_sections
from chronicle.site.inputs import load_inputs
from chronicle.site.pages import nav, site_files
from chronicle.site.statics import with_svgs


def write_plain_project(chronicle: Path, target: Path) -> Path:
    """Write the plain twin of the chronicle at `chronicle` into `target`; return it."""
    config = load_config(chronicle)
    inputs = load_inputs(config)
    docs = target / "docs"
    shutil.copytree(chronicle / "docs", docs)  # assets, the store and the sealed days
    for rel, content in with_svgs(site_files(inputs, ENGLISH)).items():
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    dates = [d["date"] for d in inputs.days]
    for i, d in enumerate(inputs.days):
        page = docs / "days" / f"{d['date']}.md"
        snap = inputs.sealers[date.fromisoformat(d["date"])]
        text = page.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
        text += day_sections(config, d, snap, ENGLISH)
        if i + 1 < len(dates):
            text = text.rstrip("\n") + f"\n\n[Next day: {dates[i + 1]} →]({dates[i + 1]}.md)\n"
        page.write_text(text, encoding="utf-8")
    mk = yaml.safe_load((chronicle / "mkdocs.yml").read_text(encoding="utf-8"))
    mk["plugins"] = ["search"]
    mk["strict"] = False
    mk["nav"] = nav()
    mk["site_url"] = config.site.url
    mk.pop("hooks", None)
    (target / "mkdocs.yml").write_text(yaml.safe_dump(mk, sort_keys=False), encoding="utf-8")
    return target
