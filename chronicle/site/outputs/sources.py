"""The site's sources, rendered once from the store for any engine (site stage).

An edition's sources are every file an engine builds into it beyond what docs/ holds: the
generated pages with their chart specs, each sealed day's page as published (its sealed
text, then its citation and the link to the next day), the API and citation files, the
assets; in another language's edition, its sealed day pages as published and their sealed
charts (docs/days/<language>/). The same sources reach every engine: mkdocs through
mkdocs-gen-files (site/gen_pages.py), Zensical and `chronicle render --out` as a tree of
files (site/outputs/tree.py). The chart SVGs are drawn from the sources' specs
(site/outputs/statics.py) and written after the engine has built the pages
(site/publish/finish.py).
"""

from __future__ import annotations

from datetime import date

from chronicle.analysis.day_model import DaySummary
from chronicle.render import anchor
from chronicle.render.day_edition import RECORD_ROOT
from chronicle.render.i18n import DEFAULT, NAMES, Language
from chronicle.site.outputs.citable import day_sections
from chronicle.site.outputs.editions import EditionFiles, edition_files
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.site.outputs.pages import site_files
from chronicle.store import SnapshotInfo

# Pages sealed before quotes stayed quotes (render.md_text) hold `&\#34;`, which shows as
# typed; only the page as built changes, the sealed file is served as it is.
_OLD_QUOT, _OLD_APOS = "&\\#34;", "&\\#39;"


def edition_sources(inputs: BuildInputs, lang: Language) -> EditionFiles:
    """Return the `lang` edition's sources (path relative to its docs -> content; a sealed
    chart is its Path in docs/, copied as it is)."""
    if lang.code != DEFAULT:
        return edition_files(inputs, lang)
    files: EditionFiles = dict(site_files(inputs, lang))
    days = inputs.days
    for i, figures in enumerate(days):
        day = figures["date"]
        path = inputs.config.docs_dir / "days" / f"{day}.md"
        if path.is_file():
            later = days[i + 1]["date"] if i + 1 < len(days) else None
            files[f"days/{day}.md"] = published_day_page(
                inputs, figures, path.read_text(encoding="utf-8"), later, lang)
    return files


def published_day_page(inputs: BuildInputs, figures: DaySummary, sealed: str,
                       later: str | None, lang: Language,
                       edition: tuple[SnapshotInfo, str] | None = None) -> str:
    """Return a sealed day page as the site shows it: its sealed Markdown (of the day whose
    sealed JSON is `figures`), then what the ledger counts on it since (if anything), its
    citation and data files, then the link to the next day (which did not exist when it
    was sealed). `edition`: the page is the day's edition in `lang`, sealed by that
    snapshot at that path; it says so under its citation (a page cannot hold its own
    sha256)."""
    markdown = sealed.replace(_OLD_QUOT, '"').replace(_OLD_APOS, "'")
    added = inputs.ledger_of(figures["date"], lang)
    if added:
        markdown = markdown.rstrip("\n") + "\n\n" + added
    snap = inputs.sealers.get(date.fromisoformat(figures["date"]))
    if snap is not None:
        markdown = markdown.rstrip("\n") + "\n\n" + day_sections(
            inputs.config, figures, snap, lang, record=RECORD_ROOT if edition else "",
            swhids=inputs.swhids.get(figures["date"]),
            memento=inputs.mementos.get(figures["date"]))
    if edition is not None:
        sealer, rel = edition
        meta = sealer.sealed_files().get(rel, {})
        # Its source is published by the record, at the root: a link outside this edition,
        # absolute as the English source's (render/cite.py Entry.source_url).
        markdown = markdown.rstrip("\n") + "\n\n" + lang.gettext(
            "This page, in {language}: sealed by snapshot `{snapshot}`, sha256 `{sha256}` of "
            "{source}.").format(
            language=NAMES.get(lang.code, lang.code), snapshot=sealer.id,
            sha256=meta.get("sha256", ""),
            source=anchor(lang.gettext("its Markdown source"), inputs.config.site.url + rel)) \
            + "\n"
    if later is None:
        return markdown
    return markdown.rstrip("\n") + "\n\n" + lang.gettext(
        "[Next day: {date} →]({link})").format(date=lang.date(later),
                                               link=f"{later}.md") + "\n"
