"""What every edition needs after its engine has built the pages (site stage), the same
for mkdocs and Zensical: the sealed day sources served byte for byte, the charts' static
SVGs, the feeds' enclosure lengths and item HTML, the sitemaps of the language switch.

Each step writes files of its own or edits a feed as an XML or JSON document; no built
page is rewritten.
"""

from __future__ import annotations

from pathlib import Path
from xml.dom import minidom

from chronicle.render.i18n import DEFAULT, Language
from chronicle.site.outputs.citable import edition_url
from chronicle.site.outputs.editions import EditionFiles, folder_sitemaps
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.site.publish.daily_feed import (
    DAY_PAGE,
    RSS_FEEDS,
    fill_daily_feeds,
    item_html,
    item_images,
    item_verdicts,
)
from chronicle.store.manifest import EDITION_PATH


def finish_edition(site_dir: Path, inputs: BuildInputs, lang: Language,
                   sources: EditionFiles, pages: list[str]) -> None:
    """Run the post-build steps of the `lang` edition built into `site_dir` from `sources`;
    `pages` are the pages the engine wrote (paths relative to `site_dir`). The charts' SVGs
    are written by the caller, which drew them (site/outputs/statics.py)."""
    config = inputs.config
    if lang.code == DEFAULT:
        serve_sealed_sources(config.docs_dir, site_dir)
    url = edition_url(config, lang.code)
    fill_daily_feeds(site_dir, item_html(inputs, lang, sources), item_images(sources, url),
                     item_verdicts(inputs, lang),
                     inputs.latest.taken_at if inputs.latest is not None else None)
    fix_enclosure_lengths(site_dir, url)
    if len(config.site.languages) > 1:
        for path, text in folder_sitemaps(pages, config.site.languages, config,
                                          lang.code).items():
            (site_dir / path).write_text(text, encoding="utf-8")


def serve_sealed_sources(docs_dir: Path, site_dir: Path) -> None:
    """Copy each sealed day's Markdown to the site byte for byte, its editions' too
    (days/<language>/<date>.md): its cited sha256 is checkable."""
    days = docs_dir / "days"
    for path in sorted([*days.glob("*.md"), *days.glob("*/*.md")]):
        rel = path.relative_to(docs_dir).as_posix()
        if DAY_PAGE.match(rel) or EDITION_PATH.fullmatch(rel):
            target = site_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # an engine's copy of the page as built
            target.write_bytes(path.read_bytes())


def fix_enclosure_lengths(site_dir: Path, url: str) -> None:
    """Fill in the byte length of feed enclosures (the rss plugin writes length="None").

    The plugin measures a page image relative to the page's source folder but builds its
    URL relative to the site root; day images are site-root paths, so measure them here.
    The feed is read and written as an XML document.
    """
    for name in RSS_FEEDS:
        path = site_dir / name
        if not path.is_file():
            continue
        doc = minidom.parseString(path.read_bytes())
        for enclosure in doc.getElementsByTagName("enclosure"):
            if enclosure.getAttribute("length") not in ("None", ""):
                continue
            link = enclosure.getAttribute("url")
            target = site_dir / link[len(url):]
            size = target.stat().st_size if link.startswith(url) and target.is_file() else 0
            enclosure.setAttribute("length", str(size))
        path.write_bytes(doc.toxml(encoding="UTF-8"))
