"""The site in several languages: one mkdocs build per language (site stage).

English is the record: it is built first, at the site's root, from the sealed pages. Each
other language (`site.languages` in chronicle.yml) is a second mkdocs build of the same
mkdocs.yml into `<lang>/`, driven by the same plugin, with the language passed to every
renderer: its generated pages and charts are rendered in that language from the same
store, and its day pages from the sealed day JSON and the data as of each day's figures,
by the same templates, sentence builders and chart builders as the sealed pages. Nothing
is translated from English output. The published data (`data/`, `api/`, the sealed day
files, the vega bundle) exists once, at the root; a translated page links it there.

Material's maintainers advise one build per language for sites with plugins like these
(mkdocs-static-i18n does not combine with every plugin); one build per language also
gives each language its own search index (Chinese segmented with jieba), theme strings
and feeds.
"""

from __future__ import annotations

import html
import json
import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import escape
from pymdownx.slugs import slugify

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.executor import Executor
from chronicle.render.day_charts import day_charts
from chronicle.render.day_edition import RECORD_ROOT, edition_day_page
from chronicle.render.embed import spec_json
from chronicle.render.i18n import DEFAULT, N_, NAMES, Language, edition_dir
from chronicle.render.svg import build_workers, render_statics
from chronicle.site.build_cache import Caches, entry_key
from chronicle.site.citable import day_sections, edition_url
from chronicle.site.edition_cache import LOCALE_FOLDER, edition_key
from chronicle.site.inputs import BuildInputs

if TYPE_CHECKING:  # a Zensical build imports this module, and none of mkdocs
    from mkdocs.config.defaults import MkDocsConfig

__all__ = ["LOCALE_FOLDER", "Editions", "alternates", "edition_days", "edition_files",
           "folder_sitemaps", "localize_config", "translate_nav", "twins"]
Files = dict[str, str | bytes]
# A generated file's content, or where it was written already (mkdocs copies nothing:
# File.generated with that path, the file is where the build puts it).
EditionFiles = dict[str, str | bytes | Path]
FEED_IMAGE = "loss"  # the day chart a feed item shows, as a PNG too (snapshot/seal.py)


@dataclass
class Editions:
    """What the builds of one `chronicle build` share: the store, read once."""

    inputs: BuildInputs | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # build time per language
    caches: Caches | None = None  # what earlier builds made (site/build_cache.py)


def alternates(languages: tuple[str, ...], code: str) -> list[dict[str, str]]:
    """Return the language switch of the pages outside the site's page list (404.html):
    Material's `extra.alternate` entries, each edition's home relative to this edition's
    root (what Material's `url` filter resolves)."""
    up = "../" if code != DEFAULT else ""
    return [{"name": NAMES[lang], "lang": lang,
             "link": "index.html" if lang == code else f"{up}{edition_dir(lang)}index.html"}
            for lang in languages]


def twins(languages: tuple[str, ...], code: str, dest_uri: str) -> list[dict[str, str]]:
    """Return a page's language switch: for each language, the same page in that language,
    relative to this page (`href`; the theme's partials/alternate.html and main.html use
    it as is: Material's `url` filter cannot express a link out of the build's root)."""
    home = "../" * dest_uri.count("/") + ("../" if code != DEFAULT else "")
    return [{"name": NAMES[lang], "lang": lang,
             "href": dest_uri.rsplit("/", 1)[-1] if lang == code
             else home + edition_dir(lang) + dest_uri}
            for lang in languages]


# The scaffold's words in the theme's chrome that Material takes from mkdocs.yml rather
# than from its own translations: said in the edition's language when the catalog knows
# them (a chronicle's own wording is kept as written).
CHROME_WORDS = (N_("Dark mode"), N_("Light mode"))
PERMALINK_TITLE = N_("Permanent link")


def localized_palette(palette: Any, lang: Language) -> Any:
    """Return the theme's palette with each toggle's name in `lang` (a copy)."""
    if not isinstance(palette, list):
        return palette
    out = []
    for entry in palette:
        toggle = entry.get("toggle") if isinstance(entry, dict) else None
        if isinstance(toggle, dict) and isinstance(toggle.get("name"), str):
            entry = {**entry, "toggle": {**toggle, "name": lang.gettext(toggle["name"])}}
        out.append(entry)
    return out


def localize_toc(toc: dict[str, Any], lang: Language) -> None:
    """Keep a Chinese heading's words in its anchor, and title its permalink in `lang`."""
    toc.setdefault("slugify", slugify(case="lower"))
    toc.setdefault("permalink_title", lang.gettext(PERMALINK_TITLE))


def localize_config(config: MkDocsConfig, run: RunConfig, lang: Language) -> None:
    """Turn the English mkdocs config into the config of the `lang` edition (in place)."""
    code = lang.code
    config.theme["language"] = code
    config.site_url = edition_url(run, code)
    config.site_description = escape(lang.gettext(
        "A dated, citable chronicle of the training run {run}: one page per day."
    ).format(run=run.run.name))  # text, never markup (site/plugin.py on_config)
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


def generator_words(lang: Language) -> list[str]:
    """Return the words before and after the "Material for MkDocs" link of the footer in
    `lang` (site/theme/partials/copyright.html; Material has them in English only)."""
    before, _, after = lang.gettext("Made with {material}").partition("{material}")
    return [before.strip(), after.rstrip()]


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


def translate_nav(nav: list[Any], titles: dict[str, str], lang: Language) -> list[Any]:
    """Return the nav with each generated section's title in `lang` (user entries kept)."""
    out: list[Any] = []
    for entry in nav:
        if isinstance(entry, dict) and len(entry) == 1:
            (title, target), = entry.items()
            if isinstance(target, str) and titles.get(target) == title:
                out.append({lang.gettext(title): target})
                continue
        out.append(entry)
    return out


# What a translated edition leaves to the root: the machine API, the citations' files,
# the vega bundle. Pages, their charts and the failures / corrections feeds are its own.
_ROOT_ONLY = ("api/", "CITATION.cff", "assets/javascripts/vega-bundle.js")
SIGNALS_JSON = "api/signals.json"


def _own(path: str) -> bool:
    # The signals' verdicts are sentences: each edition says them in its language.
    return path == SIGNALS_JSON or (not path.startswith(_ROOT_ONLY)
                                    and not path.endswith("/cite.json"))


Keys = tuple[str, str]  # a translated day's (page, charts) cache keys


def edition_files(inputs: BuildInputs, lang: Language, caches: Caches | None = None,
                  executor: Executor | None = None, site_dir: Path | None = None
                  ) -> EditionFiles:
    """Return every generated file of the `lang` edition (path relative to its root):
    its pages and run-wide charts' specs (their SVGs are drawn like the English ones',
    site/statics.py), and each sealed day's page with its charts, SVGs and feed PNG
    (drawn by the `executor`'s render workers); `caches` keep the day pages and their
    charts between builds. With a `site_dir`, the days' charts are written there as they
    are made (see `edition_days`)."""
    from chronicle.site.pages import site_files

    files: EditionFiles = {p: c for p, c in site_files(inputs, lang, bundle=False).items()
                           if _own(p)}
    files.update(edition_days(inputs, lang, caches, executor, site_dir))
    return files


def edition_days(inputs: BuildInputs, lang: Language, caches: Caches | None = None,
                 executor: Executor | None = None, site_dir: Path | None = None
                 ) -> EditionFiles:
    """Return every sealed day's page in `lang`, rendered from the sealed day JSON, with
    its charts drawn in `lang` from the data as of the day's figures.

    With `caches`, a day whose inputs an earlier build rendered is taken from them (its
    page from `editions`, its charts from `day_charts`): sealed days never change, so a
    nightly draws only the new day's charts, and writes the page of the day before again
    (it now links the new day). With a `site_dir` (the
    folder the edition is being built in), each day's chart specs, SVGs and PNG are
    written there as soon as they are made and returned as their path, not their bytes:
    a long run's ~80 MB of them (365 days) is never held at once.
    """
    config, out = inputs.config, _DayFiles(site_dir)
    edition = edition_key(config, lang.code) if caches is not None else ""
    changes = inputs.changes.changes
    # Of the W&B run records, a day's charts read only the lineage's order (stitching:
    # analysis/series.py lineage_order reads each run's id and creation time); the rest
    # (state, summary, heartbeat) changes every night and would render every day again.
    runs = [[r.id, r.created_at.isoformat()] for r in inputs.runs] if caches is not None else []
    todo: dict[str, tuple[Keys, dict[str, Any], dict[str, dict[str, Any]]]] = {}
    meta: dict[str, Any]
    for i, d in enumerate(inputs.days):
        when = date.fromisoformat(d["date"])
        snap = inputs.sealers.get(when)
        if snap is None:
            continue
        sealed_page = snap.sealed.get(d["date"], {}).get(f"days/{d['date']}.md", {})
        meta = {"entry": {"snapshot": snap.id, "sha256": str(sealed_page.get("sha256", ""))},
                "cite": inputs.ledger_of(d["date"], lang) + "\n" + day_sections(
                    config, d, snap, lang, record=RECORD_ROOT,
                    swhids=inputs.swhids.get(d["date"]), memento=inputs.mementos.get(d["date"])),
                "later": inputs.days[i + 1]["date"] if i + 1 < len(inputs.days) else None}
        keys = ("", "")
        if caches is not None:
            # Two entries a day. Its charts: the day JSON as read and what they are drawn
            # from (BuildInputs.day_evidence): the chain up to the snapshot that sealed
            # the day (its manifest's sha256 fixes every row and record stored by then,
            # the figures' snapshot's among them), the runs' order and the changes. Its
            # page: the charts' key, the sealed entry, its citation block and the next
            # day, which change after sealing (a new day links the one before, a memento
            # is chained), so the page is written again, its charts are not drawn again.
            seen = inputs.figures_snapshot(when)
            ended = (when + timedelta(days=1)).isoformat()
            charts_key = entry_key(edition, {
                "charts of": d, "sealed_by": snap.manifest_sha256,
                "figures_as_of": seen.id if seen else None,
                "runs": runs, "changes": [c for c in changes if str(c.get("time")) < ended]})
            keys = (entry_key(edition, {"page of": charts_key, **meta}), charts_key)
            drawn = caches.day_charts.get(charts_key)
            if drawn is not None:
                page = caches.editions.get(keys[0])
                if page is None:
                    page = _day_page(d, drawn, meta, inputs.config, lang)
                    caches.editions.put(keys[0], page)
                out.add({**page, **drawn})
                continue
        evidence = inputs.day_evidence(when)
        charts = (day_charts(when, evidence[0], evidence[1], config, lang, changes)
                  if evidence is not None else {})
        todo[d["date"]] = (keys, meta, charts)
        if len(todo) >= DRAWN_TOGETHER:
            out.add(_drawn_days(todo, inputs, lang, caches, executor))
            todo = {}
    out.add(_drawn_days(todo, inputs, lang, caches, executor))
    return out.files


class _DayFiles:
    """The day files of an edition: pages kept, charts written into `site_dir` (if any)."""

    def __init__(self, site_dir: Path | None) -> None:
        self.site_dir, self.files = site_dir, EditionFiles()

    def add(self, files: Files) -> None:
        for path, content in files.items():
            if self.site_dir is None or path.endswith(".md"):
                self.files[path] = content
                continue
            target = self.site_dir / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:
                target.write_bytes(content)
            self.files[path] = target


# Days whose charts are drawn in one go: enough to keep every render worker busy, few
# enough that a cold build of a long run never holds every day's specs at once (a spec's
# rows as Python objects are ~20x their JSON).
DRAWN_TOGETHER = 8


def _day_page(day: DaySummary, drawn: Files, meta: dict[str, Any], config: RunConfig,
              lang: Language) -> Files:
    """Return the page of `day` in `lang` around its charts as drawn by an earlier build
    (`drawn`: their specs, SVGs and feed PNG, as `_drawn_days` keeps them)."""
    date = day["date"]
    charts = {path[len(f"days/{date}/"):-len(".vl.json")]: json.loads(content)
              for path, content in drawn.items() if path.endswith(".vl.json")}
    return _page_of(day, charts, meta, config, lang,
                    f"days/{date}/{FEED_IMAGE}.png" in drawn)


def _page_of(day: DaySummary, charts: dict[str, Any], meta: dict[str, Any],
             config: RunConfig, lang: Language, png: bool) -> Files:
    """Return the page of `day` in `lang` with its `charts` (`png`: its feed PNG too)."""
    return {f"days/{day['date']}.md": edition_day_page(
        day, charts, config, meta["entry"], meta["cite"], meta["later"], lang,
        {FEED_IMAGE} if png else set())}


def _drawn_days(todo: dict[str, tuple[Keys, dict[str, Any], dict[str, dict[str, Any]]]],
                inputs: BuildInputs, lang: Language, caches: Caches | None,
                executor: Executor | None) -> Files:
    """Draw the charts of the days in `todo` together (in the `executor`'s render
    workers; in this process without one) and return
    their files (kept in `caches` under each day's keys)."""
    if not todo:
        return {}
    drawn, pngs = render_statics(
        {f"{day}/{name}": spec for day, (_k, _m, charts) in todo.items()
         for name, spec in charts.items()},
        png=[f"{day}/{FEED_IMAGE}" for day, (_k, _m, charts) in todo.items()
             if FEED_IMAGE in charts], executor=executor, workers=build_workers(executor))
    by_date = {x["date"]: x for x in inputs.days}
    out = Files()
    for day, ((page_key, charts_key), meta, charts) in todo.items():
        with_png = f"{day}/{FEED_IMAGE}" in pngs
        page = _page_of(by_date[day], charts, meta, inputs.config, lang, with_png)
        files: Files = {}
        for name, spec in sorted(charts.items()):
            files[f"days/{day}/{name}.vl.json"] = spec_json(spec)
            files[f"days/{day}/{name}.svg"] = drawn[f"{day}/{name}"]
        if with_png:
            files[f"days/{day}/{FEED_IMAGE}.png"] = pngs[f"{day}/{FEED_IMAGE}"]
        if caches is not None:
            caches.editions.put(page_key, page)
            caches.day_charts.put(charts_key, files)
        out.update({**page, **files})
    return out


def folder_sitemaps(pages: list[str], languages: tuple[str, ...], config: RunConfig,
                    code: str) -> dict[str, str]:
    """Return a sitemap for each folder of pages (days/sitemap.xml, threads/sitemap.xml),
    each page with its twins in every language (hreflang).

    A page's <link rel="alternate" hreflang> names its twin; Material's script reads the
    sitemap beside each alternate link (that is how its language switch keeps the reader
    on the same page), so the folders of twins need one. The Sitemaps protocol allows a
    sitemap to list the pages of its own folder.
    """
    folders: dict[str, list[str]] = {}
    for dest in sorted(pages):
        if "/" in dest:
            folders.setdefault(dest.rsplit("/", 1)[0], []).append(dest)
    out = {}
    for folder, dests in sorted(folders.items()):
        rows = []
        for dest in dests:
            links = "".join(
                f'<xhtml:link rel="alternate" hreflang="{lang}" '
                f'href="{html.escape(edition_url(config, lang) + dest)}"/>' for lang in languages)
            rows.append(f"<url><loc>{html.escape(edition_url(config, code) + dest)}</loc>"
                        f"{links}</url>")
        out[f"{folder}/sitemap.xml"] = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(rows) + "\n</urlset>\n")
    return out
