"""The site in several languages: one build per language, with either engine (site
stage). What an edition is made of lives here; how each engine is told its language is
in engines/ (mkdocs: engines/mkdocs/config.py; Zensical: the tree's mkdocs.yml, tree.py).

English is the record: it is built first, at the site's root, from the sealed pages. Each
other language (`site.languages` in chronicle.yml) is a second build into `<lang>/`, with
the language passed to every renderer: its generated pages and charts are rendered in that
language from the same store; its day pages are the pages sealed in that language with
their day (docs/days/<lang>/, snapshot/seal.py), published as sealed with the build's
sections after them, as English's are. Nothing is translated from English output. The
published data (`data/`, `api/`, the sealed day files, the vega bundle) exists once, at the
root; a translated page links it there.

Material's maintainers advise one build per language for sites with plugins like these
(mkdocs-static-i18n does not combine with every plugin); one build per language also
gives each language its own search index (Chinese segmented with jieba), theme strings
and feeds.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from pymdownx.slugs import slugify

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.render.day_edition import edition_folder
from chronicle.render.i18n import DEFAULT, LOCALE_FOLDER, N_, NAMES, Language, edition_dir
from chronicle.site.build_cache import Caches
from chronicle.site.outputs.citable import edition_url
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.store import edition_page

__all__ = ["LOCALE_FOLDER", "Editions", "alternates", "edition_days", "edition_files",
           "folder_sitemaps", "translate_nav", "twins"]
Files = dict[str, str | bytes]
# A generated file's content, or where it was written already (mkdocs copies nothing:
# File.generated with that path, the file is where the build puts it).
EditionFiles = dict[str, str | bytes | Path]


@dataclass
class Editions:
    """What the builds of one `chronicle build` share: the store, read once."""

    inputs: BuildInputs | None = None
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


def localize_toc(toc: dict[str, Any], lang: Language, slug: Any = None) -> None:
    """Keep a Chinese heading's words in its anchor, and title its permalink in `lang`
    (a chronicle's own settings are kept). `slug`: pymdownx's slugify(case="lower"), or
    what stands for it in a config written as YAML (site/outputs/tree.py)."""
    toc.setdefault("slugify", slug if slug is not None else slugify(case="lower"))
    toc.setdefault("permalink_title", lang.gettext(PERMALINK_TITLE))


def generator_words(lang: Language) -> list[str]:
    """Return the words before and after the "Material for MkDocs" link of the footer in
    `lang` (site/theme/partials/copyright.html; Material has them in English only)."""
    before, _, after = lang.gettext("Made with {material}").partition("{material}")
    return [before.strip(), after.rstrip()]


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


def edition_files(inputs: BuildInputs, lang: Language) -> EditionFiles:
    """Return every generated file of the `lang` edition (path relative to its root): its
    pages and run-wide charts' specs (their SVGs are drawn like the English ones',
    site/outputs/statics.py), and each sealed day's page in `lang` as published, with its
    sealed charts (`edition_days`)."""
    from chronicle.site.outputs.pages import site_files

    files: EditionFiles = {p: c for p, c in site_files(inputs, lang, bundle=False).items()
                           if _own(p)}
    files.update(edition_days(inputs, lang))
    return files


def edition_days(inputs: BuildInputs, lang: Language) -> EditionFiles:
    """Return every sealed day's page in `lang` as the site shows it (its sealed edition,
    then what the build adds: site/outputs/sources.py `published_day_page`) and its sealed
    charts (each the sealed file, copied as it is: nothing is rendered or drawn).

    A day sealed before the site had `lang` has no page in it until the next snapshot
    seals one (snapshot/seal.py `seal_editions`): the build stops, naming the days and the
    command, rather than publish an edition without them.
    """
    from chronicle.site.outputs.sources import published_day_page

    store, out, missing = inputs.store, EditionFiles(), []
    for i, d in enumerate(inputs.days):
        when = date.fromisoformat(d["date"])
        sealer = store.edition_sealer(when, lang.code)
        if sealer is None:
            missing.append(d["date"])
            continue
        rel = edition_page(when, lang.code)
        sealed = (store.sealed_bytes(rel) or b"").decode("utf-8")
        later = inputs.days[i + 1]["date"] if i + 1 < len(inputs.days) else None
        out[f"days/{d['date']}.md"] = published_day_page(
            inputs, d, sealed, later, lang, edition=(sealer, rel))
        folder = edition_folder(d["date"], lang.code)
        for path in sorted(sealer.sealed_files()):
            if path.startswith(folder + "/"):
                out[f"days/{d['date']}/{path.rsplit('/', 1)[1]}"] = store.docs / path
    if missing:
        shown = missing[0] if len(missing) == 1 else f"{missing[0]} to {missing[-1]}"
        raise ChronicleError(
            f"{store.docs / 'days' / lang.code}: {len(missing)} sealed day(s) ({shown}) have "
            f"no page in {NAMES.get(lang.code, lang.code)} ({lang.code}) yet: days sealed "
            "before the site had this language get theirs from the next snapshot. Run "
            "`chronicle snapshot` (the nightly job does), or build without it "
            f"(site.languages in chronicle.yml)")
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
