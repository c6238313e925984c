"""The site in several languages: one mkdocs build per language (site stage).

English is the record: it is built first, at the site's root, from the sealed pages. Each
other language (`site.languages` in chronicle.yml) is a second mkdocs build of the same
mkdocs.yml into `<lang>/`, driven by the same plugin: its generated pages are rendered in
that language from the same store, its day pages from the sealed day JSON, its charts
translated from the English ones. Both builds run in one process and share one read of
the store and the English build's charts, so a second language costs page rendering,
not a second analysis; the published data (`data/`, `api/`, the vega bundle) exists once,
at the root.

Material's maintainers advise one build per language for sites with plugins like these
(mkdocs-static-i18n does not combine with every plugin); one build per language also
gives each language its own search index (Chinese segmented with jieba), theme strings
and feeds.
"""

from __future__ import annotations

import html
import json
import logging
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from markupsafe import escape
from mkdocs.config.defaults import MkDocsConfig
from pymdownx.slugs import slugify

from chronicle.config import RunConfig
from chronicle.render.day_edition import edition_day_page, record_url, translated_charts
from chronicle.render.i18n import DEFAULT, NAMES, edition_dir, gettext
from chronicle.render.translate import translate_spec
from chronicle.site.build_cache import BuildCache, Caches, entry_key
from chronicle.site.citable import day_sections, edition_url
from chronicle.site.edition_cache import LOCALE_FOLDER, edition_key
from chronicle.site.inputs import BuildInputs

Files = dict[str, str | bytes]


@dataclass
class Editions:
    """What the builds of one `chronicle build` share: the store, read once, and the
    English build's chart SVGs (another language translates them instead of drawing)."""

    inputs: BuildInputs | None = None
    svgs: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # build time per language
    caches: Caches | None = None  # what earlier builds made (site/build_cache.py)
    # In a translated edition's own process (site/edition_process.py): waits for the
    # English SVGs, which the parent sends once its English build has drawn them.
    awaited: Callable[[], dict[str, str]] | None = None

    def english_svgs(self) -> dict[str, str]:
        """Return the English build's chart SVGs (waiting for them in a child process)."""
        if self.awaited is not None:
            self.svgs, self.awaited = self.awaited(), None
        return self.svgs


def alternates(languages: tuple[str, ...], code: str, dest_uri: str | None = None
               ) -> list[dict[str, str]]:
    """Return the language switch: Material's `extra.alternate` entries.

    Without `dest_uri`: each edition's home, relative to this edition's root (what
    Material's templates outside the pages, such as 404.html, resolve correctly). With
    it: a marker per language that `twin_links` replaces with the page's own twin, since
    Material's `url` filter cannot express a link out of the build's root.
    """
    up = "../" if code != DEFAULT else ""
    out = []
    for lang in languages:
        if dest_uri is not None:
            link = f"{TWIN_MARK}{lang}"
        else:
            link = "index.html" if lang == code else f"{up}{edition_dir(lang)}index.html"
        out.append({"name": NAMES[lang], "lang": lang, "link": link})
    return out


TWIN_MARK = "#chronicle-twin-"


def twin_links(output: str, languages: tuple[str, ...], code: str, dest_uri: str) -> str:
    """Return a page's HTML with each language's marker (see `alternates`) replaced by the
    link to the same page in that language, relative to this page."""
    home = "../" * dest_uri.count("/") + ("../" if code != DEFAULT else "")
    for lang in languages:
        href = dest_uri.rsplit("/", 1)[-1] if lang == code else home + edition_dir(lang) + dest_uri
        output = output.replace(f'href="{TWIN_MARK}{lang}"', f'href="{href}"')
    return output


def localize_config(config: MkDocsConfig, run: RunConfig, code: str) -> None:
    """Turn the English mkdocs config into the config of the `code` edition (in place)."""
    config.theme["language"] = code
    config.site_url = edition_url(run, code)
    config.site_description = escape(gettext(
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
    toc = config.mdx_configs.setdefault("toc", {})
    if "slugify" not in toc:
        toc["slugify"] = slugify(case="lower")
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


def translate_nav(nav: list[Any], titles: dict[str, str]) -> list[Any]:
    """Return the nav with each generated section's title translated (user entries kept)."""
    out: list[Any] = []
    for entry in nav:
        if isinstance(entry, dict) and len(entry) == 1:
            (title, target), = entry.items()
            if isinstance(target, str) and titles.get(target) == title:
                out.append({gettext(title): target})
                continue
        out.append(entry)
    return out


# What a translated edition leaves to the root: the machine API, the citations' files,
# the vega bundle. Pages, their charts and the failures / corrections feeds are its own.
_ROOT_ONLY = ("api/", "CITATION.cff", "assets/javascripts/vega-bundle.js")


def _own(path: str) -> bool:
    return not path.startswith(_ROOT_ONLY) and not path.endswith("/cite.json")


def edition_files(inputs: BuildInputs, code: str, cache: BuildCache | None = None
                  ) -> tuple[Files, Files]:
    """Return every generated file of the `code` edition (path relative to its root), and
    the English spec of each of its run-wide charts (their SVGs are drawn from those);
    `cache` keeps its day pages between builds."""
    from chronicle.render.i18n import use_language
    from chronicle.site.pages import SECTIONS

    with use_language(code, inputs.config.root / LOCALE_FOLDER):
        files: Files = {}
        for section in SECTIONS:
            if section.build is not None:
                files.update(section.build(inputs))
        files = {p: c for p, c in files.items() if _own(p)}
        english = {p: c for p, c in files.items() if p.endswith(".vl.json")}
        for path, content in english.items():
            files[path] = _translated_spec(path, content)
        files.update(edition_days(inputs, code, cache))
    return files, english


def _translated_spec(path: str, content: str | bytes) -> str:
    # The English spec sits at the same path under the root; a run-wide chart's page is
    # one folder above its spec (charts/x.vl.json is drawn by charts.html), and Vega reads
    # data URLs relative to that page: up to this edition's root, then one more.
    depth = path.count("/") - 1
    spec = translate_spec(json.loads(content), data_url="../" * (depth + 1) + path)
    return json.dumps(spec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def edition_days(inputs: BuildInputs, code: str, cache: BuildCache | None = None) -> Files:
    """Return every sealed day's page in the current language (`code`), with its charts
    translated, rendered from the sealed day JSON and the sealed chart files.

    With a `cache`, a day whose inputs (site/edition_cache.py) an earlier build rendered
    is taken from it: sealed days never change, so a nightly renders only the new one.
    """
    config, out = inputs.config, Files()
    edition = edition_key(config, code) if cache is not None else ""
    for i, d in enumerate(inputs.days):
        day = d["date"]
        snap = inputs.sealers.get(date.fromisoformat(day))
        if snap is None:
            continue
        folder = inputs.store.days / day
        specs = {p.name[: -len(".vl.json")]: p.read_bytes()
                 for p in sorted(folder.glob("*.vl.json"))}
        svgs = {p.stem: p.read_bytes() for p in sorted(folder.glob("*.svg"))}
        sealed_page = snap.sealed.get(day, {}).get(f"days/{day}.md", {})
        entry = {"snapshot": snap.id, "sha256": str(sealed_page.get("sha256", ""))}
        cite = day_sections(config, d, snap, record=record_url(""))
        later = inputs.days[i + 1]["date"] if i + 1 < len(inputs.days) else None
        key = ""
        if cache is not None:
            # Everything the page is made of but the edition's key: the day JSON as
            # read, the sealed entry, its citation block, the next day, the chart bytes.
            key = entry_key(edition, {"day": d, "entry": entry, "cite": cite,
                                      "next": later},
                            {**{f"{n}.vl.json": b for n, b in specs.items()},
                             **{f"{n}.svg": b for n, b in svgs.items()}})
            kept = cache.get(key)
            if kept is not None:
                out.update(kept)
                continue
        charts, translated = translated_charts(day, specs, svgs)
        files: Files = {f"days/{day}.md": edition_day_page(d, charts, config, entry, cite,
                                                           later), **translated}
        if cache is not None:
            cache.put(key, files)
        out.update(files)
    return out


_MD_LINK = re.compile(r"(?<![!\\])\[([^\]\n]*)\]\(<?([^)\s>]+)>?\)")


def root_links(markdown: str, src_uri: str, present: Callable[[str], bool]) -> str:
    """Return a translated page's Markdown with links to files only the root has (the API,
    sealed files, published data, CITATION.cff) pointing at the root's copy.

    The translated build shares those files rather than copying them; the English build
    already checked each link (the pages link the same files), so a relative link whose
    target `present` does not know is the root's. Raw HTML: mkdocs checks Markdown links
    against its own build only.
    """
    folder = posixpath.dirname(src_uri)
    up = "../" * (src_uri.count("/") + 1)

    def one(m: re.Match[str]) -> str:
        url = m.group(2)
        if "://" in url or url.startswith(("/", "#", "mailto:")):
            return m.group(0)
        path = url.split("#", 1)[0]
        target = posixpath.normpath(posixpath.join(folder, path))
        if not path or target.startswith("../") or present(target):
            return m.group(0)
        rest = url[len(path):]
        return f'<a href="{html.escape(up + target + rest)}">{m.group(1)}</a>'

    return _MD_LINK.sub(one, markdown)


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
