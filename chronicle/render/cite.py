"""Citations: a day's "Cite this entry" and "Data files" blocks, CSL-JSON and CITATION.cff.

Added at build time, not at sealing: a page cannot contain its own sha256, so the block
that names it is appended to the sealed page's Markdown by the site hook, while the
sealed file itself (and the sha256 the manifest recorded for it) never changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import yaml
from markupsafe import escape

from chronicle.render import anchor, href, md_text
from chronicle.render.i18n import Language

CFF_VERSION = "1.2.0"
SWH_RESOLVER = "https://archive.softwareheritage.org/"
DOI_RESOLVER = "https://doi.org/"
_BIBTEX_SPECIAL = re.compile(r"([&%$#_{}~^\\])")
_SPDX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


@dataclass(frozen=True)
class DataFile:
    """One file a day page was built from: name (path relative to docs/), size, sha256."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Entry:
    """What a citation of one sealed day names."""

    title: str
    run: str
    site_title: str
    author: str
    day: int
    planned_days: int
    date: str
    permalink: str
    snapshot: str
    sealed_at: str
    sha256: str  # of the sealed Markdown page, as its sealing manifest recorded it
    json_sha256: str | None
    license: str
    # Of the sealed page's bytes and of its chart folder's (store/swhid.py), at build time.
    swhid: str | None = None
    swhid_dir: str | None = None
    doi: str | None = None  # the chronicle's concept DOI (site.doi)
    # An archived copy of the page: the memento's URL and when it was captured.
    memento: tuple[str, datetime] | None = None

    @property
    def source_url(self) -> str:
        """The sealed Markdown source's address, beside the page's permalink. Absolute: a
        relative `.md` link is a page link to both engines (Zensical rewrites one even in
        raw HTML, to the page itself), and the point is the source, served byte for byte."""
        return self.permalink.removesuffix(".html") + ".md"


def entry_key(e: Entry) -> str:
    """Return the BibTeX / CSL id of an entry: <run slug>-day<NNN>."""
    slug = re.sub(r"[^a-z0-9]+", "-", e.run.lower()).strip("-") or "chronicle"
    return f"{slug}-day{e.day:03d}"


def _tex(text: str) -> str:
    # One line: a line of the config's text could otherwise close the ``` fence around
    # the record on the page and continue as Markup.
    text = " ".join(text.split())
    return _BIBTEX_SPECIAL.sub(lambda m: "\\textbackslash{}" if m.group(1) == "\\"
                               else "\\" + m.group(1), text)


def bibtex(e: Entry) -> str:
    """Return a BibTeX @misc record of the entry."""
    when = date.fromisoformat(e.date)
    swhid = f"; SWHID {e.swhid}" if e.swhid else ""
    note = (f"{e.site_title}, day {e.day} of {e.planned_days} of the training run {e.run}. "
            f"Sealed by snapshot {e.snapshot}; sha256 of the sealed page: {e.sha256}{swhid}. "
            "Accessed YYYY-MM-DD")
    fields = [
        ("author", "{" + _tex(e.author) + "}"),
        ("title", _tex(f"{e.run}: {e.title}")),
        ("year", str(when.year)),
        ("month", _MONTHS[when.month - 1]),
        ("howpublished", "\\url{" + e.permalink + "}"),
        ("url", e.permalink),
        ("note", _tex(note)),
    ]
    # Verbatim fields (biblatex reads `doi` as is; `swhid` is biblatex-software's): a DOI
    # name (config/checks.py) and a SWHID hold nothing BibTeX would read as markup.
    if e.doi:
        fields.append(("doi", e.doi))
    if e.swhid:
        fields.append(("swhid", e.swhid))
    body = ",\n".join(f"  {name} = {{{value}}}" if name != "month" else f"  {name} = {value}"
                      for name, value in fields)
    return f"@misc{{{entry_key(e)},\n{body}\n}}\n"


def plain_citation(e: Entry) -> str:
    """Return a one-paragraph plain-text citation of the entry."""
    swhid = f", SWHID {e.swhid}" if e.swhid else ""
    doi = f" {DOI_RESOLVER}{e.doi}." if e.doi else ""
    return (f"{e.author}. \u201c{e.run}: {e.title}.\u201d {e.site_title}, day {e.day} of "
            f"{e.planned_days}, {e.date}. {e.permalink}. Snapshot {e.snapshot}, sha256 "
            f"{e.sha256}{swhid}.{doi} Accessed [YYYY-MM-DD].")


def csl_json(e: Entry) -> str:
    """Return the entry as a CSL-JSON list (one item), for reference managers."""
    when = date.fromisoformat(e.date)
    item = {
        "id": entry_key(e),
        "type": "webpage",
        "title": f"{e.run}: {e.title}",
        "author": [{"literal": e.author}],
        "container-title": e.site_title,
        "issued": {"date-parts": [[when.year, when.month, when.day]]},
        "URL": e.permalink,
        "version": e.snapshot,
        "note": f"Sealed by snapshot {e.snapshot} at {e.sealed_at}; sha256 {e.sha256}"
                + (f"; SWHID {e.swhid}" if e.swhid else ""),
        "license": e.license,
    }
    if e.swhid:
        # CSL has no SWHID variable: the standard archive variables keep it where every
        # processor and reference manager keeps them (Zotero: Archive, Loc. in Archive).
        item["archive"] = "Software Heritage"
        item["archive_location"] = e.swhid
    if e.doi:
        item["DOI"] = e.doi
    return json.dumps([item], indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def cite_markdown(e: Entry, files: Sequence[DataFile], cite_json: str, lang: Language,
                  record: str = "") -> str:
    """Return the "Cite this entry" and "Data files" sections appended to a day page, in
    `lang` (the citation itself names the English record, the thing cited).

    `record` is the path from the page to the English site root when the page is a
    translation (`../../`): its links then lead to the record's own files.
    """
    _ = lang.gettext
    cff = f'<a href="{record}CITATION.cff">CITATION.cff</a>' if record \
        else "[CITATION.cff](../CITATION.cff)"
    csl = f'<a href="{record}days/{cite_json}">CSL-JSON</a>' if record \
        else f"[CSL-JSON]({cite_json})"
    lines = [
        "## " + _("Cite this entry") + " { data-search-exclude }", "",
        # One line per anchor, in the order a citer needs them; Markdown hard line breaks.
        "  \n".join(_identifiers(e, lang)), "",
        # The citation names the English record, so a translation marks it as English.
        md_text(plain_citation(e)) if lang.english  # the config's strings are text
        else f'<p lang="en">{escape(plain_citation(e))}</p>', "",
        "```bibtex", bibtex(e).rstrip("\n"), "```", "",
        _("{csl} · the whole chronicle: {cff}").format(csl=csl, cff=cff), "",
        "## " + _("Data files") + " { data-search-exclude }", "",
    ]
    lines += [_("The exact files this page was built from; `chronicle verify` checks each "
                "against its snapshot manifest."), "",
              "| " + _("File") + " | " + _("Size") + " | sha256 |", "|---|--:|---|"]
    for f in files:
        lines.append(f"| {_link(f.path, record, e)} | {_size(f.size)} | `{f.sha256}` |")
    return "\n".join(lines) + "\n"


def _identifiers(e: Entry, lang: Language) -> list[str]:
    """Return the lines naming what a citation of `e` points at: the permalink, the sha256
    of the sealed source, its SWHIDs, an archived copy, the DOI, then the sealing
    snapshot; each line only when the entry has it."""
    _ = lang.gettext
    # A Robust Link (data-originalurl, data-versiondate: the page as sealed, whose bytes
    # never change; data-versionurl: its archived copy), so the link still leads to this
    # entry if the site is gone.
    archived = href(e.memento[0]) if e.memento else ""
    versions = {"versionurl": archived} if archived else {}
    permalink = anchor(e.permalink, e.permalink, originalurl=e.permalink,
                       versiondate=e.sealed_at[:10], **versions)
    lines = [
        _("Permalink:") + lang.sep + permalink,
        _("sha256 of the sealed page: `{sha256}` ({link}, byte for byte)").format(
            sha256=e.sha256,
            link=anchor(_("the sealed Markdown source"), e.source_url)),
    ]
    if e.swhid:
        page = f"[`{e.swhid}`]({SWH_RESOLVER}{e.swhid})"
        lines.append(
            _("SWHID: {page}, its charts: {folder} (resolved by Software Heritage once it "
              "has archived the chronicle's repository)").format(
                page=page, folder=f"[`{e.swhid_dir}`]({SWH_RESOLVER}{e.swhid_dir})")
            if e.swhid_dir else
            _("SWHID: {page} (resolved by Software Heritage once it has archived the "
              "chronicle's repository)").format(page=page))
    if archived and e.memento:
        lines.append(_("Archived copy: {link} (Wayback Machine, captured {time})").format(
            link=anchor(md_text(archived), archived), time=lang.time(e.memento[1])))
    if e.doi:
        doi = DOI_RESOLVER + e.doi
        lines.append(_("DOI: {link} (the chronicle on Zenodo, all its versions)").format(
            link=anchor(doi, doi)))
    lines.append(_("Snapshot: `{snapshot}` (sealed {sealed_at})").format(
        snapshot=e.snapshot, sealed_at=e.sealed_at))
    return lines


def _link(path: str, record: str, e: Entry) -> str:
    """Return a Data files row's link to a file of the store: the page's sealed source at
    its address, any other file relative to days/<date>.md."""
    if path == f"days/{e.date}.md":  # the sealed source, at its address (Entry.source_url)
        return str(anchor(path, e.source_url))
    if record:  # a translated page: raw HTML, the record's files are outside its build
        return f'<a href="{record}{path}">{path}</a>'
    rel = path[len("days/"):] if path.startswith("days/") else "../" + path
    return f"[{path}]({rel})"


def _size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KB"
    return f"{n} B"


def citation_cff(
    title: str, author: str, url: str, released: str | None, license_id: str,
    abstract: str, kind: str = "dataset", version: str | None = None,
    repository: str | None = None, doi: str | None = None,
    identifiers: Sequence[Mapping[str, str]] = (),
) -> str:
    """Return a CITATION.cff (CFF 1.2.0) document (`identifiers`: its `identifiers` list,
    each a `type`, `value` and `description`)."""
    doc: dict[str, Any] = {
        "cff-version": CFF_VERSION,
        "message": "If you use this, please cite it using these metadata.",
        "type": kind,
        "title": title,
        "abstract": abstract,
        "authors": [{"name": author}],
        "url": url,
    }
    if doi:
        doc["doi"] = doi
    if identifiers:
        doc["identifiers"] = [dict(i) for i in identifiers]
    if repository:
        doc["repository-code"] = repository
    if version:
        doc["version"] = version
    if released:
        doc["date-released"] = released
    if _SPDX.match(license_id):
        doc["license"] = license_id
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)


def data_files(sealed: Mapping[str, Mapping[str, Any]], used: Sequence[Mapping[str, Any]],
               ) -> list[DataFile]:
    """Return a day's sealed files, then the snapshot files it used, each once."""
    out: dict[str, DataFile] = {}
    for rel, meta in sorted(sealed.items()):
        out[rel] = DataFile(rel, int(meta["size"]), str(meta["sha256"]))
    for a in used:
        rel = str(a["path"])
        if rel.startswith("data/") and rel not in out:
            out[rel] = DataFile(rel, int(a.get("size") or 0), str(a["sha256"]))
    return list(out.values())
