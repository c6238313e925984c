"""The citable archive's generated files: citations, the snapshot chain, corrections, feeds
(site stage).

Functions of one build's inputs: the generated files of site/outputs/pages.py, and the
blocks the page hook appends to sealed day pages (a page cannot contain its own sha256).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from chronicle.config import RunConfig
from chronicle.models import iso
from chronicle.render import feeds, render
from chronicle.render.changes_page import change_items
from chronicle.render.cite import Entry, citation_cff, cite_markdown, csl_json, data_files
from chronicle.render.i18n import N_, Language, edition_dir, site_title
from chronicle.render.ledger_text import correction_rows
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.store import SnapshotInfo
from chronicle.store.manifest import EDITION_PATH
from chronicle.store.mementos import Memento
from chronicle.store.swhid import DaySwhids


def day_entry(config: RunConfig, day: Mapping[str, Any], snap: SnapshotInfo,
              swhids: DaySwhids | None = None, memento: Memento | None = None) -> Entry:
    """Return the citation of a sealed day, its sha256s taken from the sealing manifest,
    its SWHIDs (`swhids`) from its sealed bytes and its archived copy (`memento`, from
    the chain: BuildInputs.mementos)."""
    files = snap.sealed.get(day["date"], {})
    md = files.get(f"days/{day['date']}.md", {})
    js = files.get(f"days/{day['date']}.json", {})
    return Entry(
        title=day["title"], run=config.run.name, site_title=config.site.title,
        author=config.site.author, day=int(day["day"]), planned_days=config.run.planned_days,
        date=day["date"], permalink=f"{config.site.url}days/{day['date']}.html",
        snapshot=snap.id, sealed_at=iso(snap.taken_at) or "", sha256=str(md.get("sha256", "")),
        json_sha256=js.get("sha256"), license=config.site.license,
        swhid=swhids.page if swhids else None, swhid_dir=swhids.folder if swhids else None,
        doi=config.site.doi,
        memento=(memento.memento, memento.datetime) if memento is not None else None)


def day_sections(config: RunConfig, day: Mapping[str, Any], snap: SnapshotInfo,
                 lang: Language, record: str = "", swhids: DaySwhids | None = None,
                 memento: Memento | None = None) -> str:
    """Return the Markdown appended to a sealed day page: "Cite this entry" and "Data files"
    in `lang` (`record`: the path to the English site root from a translated day page;
    `swhids`: the day's, BuildInputs.swhids)."""
    used = [a for entry in ((day.get("provenance") or {}).get("figures") or {}).values()
            for a in entry.get("artifacts") or []]
    if not used:  # sealed before provenance existed: the snapshot that sealed it
        used = [{"path": f"data/{snap.id}/{name}", **meta} for name, meta in snap.files.items()]
    # The record's files (an edition's own are linked from its page, and its pages are
    # not the record's data).
    files = data_files({rel: meta for rel, meta in snap.sealed.get(day["date"], {}).items()
                        if not EDITION_PATH.fullmatch(rel)}, used)
    return cite_markdown(day_entry(config, day, snap, swhids, memento), files,
                         f"{day['date']}/cite.json", lang, record)


def newest_day_identifiers(inputs: BuildInputs) -> list[dict[str, str]]:
    """Return CITATION.cff's `identifiers` (CFF type `swh`): the SWHIDs of the newest
    sealed day's page and chart folder (none before a day is sealed)."""
    if not inputs.days:
        return []
    day = inputs.days[-1]["date"]
    ids = inputs.swhids.get(day)
    if ids is None:
        return []
    out = [{"type": "swh", "value": ids.page,
            "description": f"The sealed page of the newest day, {day} (days/{day}.md)."}]
    if ids.folder:
        out.append({"type": "swh", "value": ids.folder,
                    "description": f"The charts of the newest day, {day} (days/{day}/)."})
    return out


def snapshot_chain(snapshots: Sequence[SnapshotInfo]) -> list[dict[str, Any]]:
    """Return the hash chain of manifests, oldest first (api/snapshots.json)."""
    return [{
        "snapshot": s.id,
        "taken_at": iso(s.taken_at),
        "manifest": f"data/{s.id}/MANIFEST.json",
        "manifest_sha256": s.manifest_sha256,
        "previous": s.manifest.get("previous"),
        "sources": {n: ("ok" if st.ok else "failed") for n, st in sorted(s.sources.items())},
        "sealed": sorted(s.sealed),
        "corrections": [c["id"] for c in s.manifest.get("corrections", ())],
        "backfilled": bool(s.manifest.get("backfilled")),
    } for s in snapshots]


def archive_files(inputs: BuildInputs, lang: Language) -> dict[str, str | bytes]:
    """Return the citation, chain, corrections and feed files of the site, in `lang`."""
    _ = lang.gettext
    config, store, days, failures = inputs.config, inputs.store, inputs.days, inputs.failures
    url = config.site.url
    latest = inputs.latest
    built = latest.taken_at if latest else datetime(1970, 1, 1, tzinfo=UTC)
    sealers = inputs.sealers
    out: dict[str, str | bytes] = {}
    for d in days:
        snap = sealers.get(datetime.fromisoformat(d["date"]).date())
        if snap is not None:
            out[f"days/{d['date']}/cite.json"] = csl_json(
                day_entry(config, d, snap, inputs.swhids.get(d["date"]),
                          inputs.mementos.get(d["date"])))
    out["CITATION.cff"] = citation_cff(
        title=config.site.title, author=config.site.author, url=url,
        released=latest.taken_at.date().isoformat() if latest else None,
        license_id=config.site.license, version=latest.id if latest else None,
        abstract=f"A dated chronicle of the training run {config.run.name}: one sealed, "
                 "checksummed page per day, with the data each page was built from.",
        doi=config.site.doi, identifiers=newest_day_identifiers(inputs))
    chain = {"run": config.run.name, "chain": snapshot_chain(inputs.snapshots)}
    out["api/snapshots.json"] = json.dumps(chain, indent=1, sort_keys=True) + "\n"
    # Late rows the manifests recorded and what the ledger found later, one list.
    corrections = correction_rows([e.to_json() for e in inputs.ledger.of_kind("correction")],
                                  lang)
    out["corrections.md"] = render("corrections.md.j2", lang, corrections=corrections)
    # The feeds of a translated edition link its own pages and speak its language.
    url = edition_url(config, lang.code)
    groups = {
        "failures": (feeds.failure_items(failures, store.failures_first_seen(), url, lang),
                     _feed_title(config, "failures", lang),
                     _("Failure records of the run: incidents, restarts, gaps, loss spikes."),
                     f"{url}failures.html"),
        "corrections": (feeds.correction_items(corrections, url, lang),
                        _feed_title(config, "corrections", lang),
                        _("Late data that changed a figure of a sealed day."),
                        f"{url}corrections.html"),
        "changes": (change_items(inputs.changes.changes, url, lang),
                    _feed_title(config, "changes", lang),
                    _("What the run changed mid-flight: config, context length, token budget, "
                      "data mixture, and the merged pull requests behind them."),
                    f"{url}changes.html"),
    }
    for name, (items, title, about, page) in groups.items():
        xml_name, json_name = feeds.FEEDS[name]
        out[xml_name] = feeds.rss(items, title, about, page, url + xml_name, built, lang)
        out[json_name] = feeds.json_feed(items, title, about, page, url + json_name)
    return out


def feed_links(config: RunConfig, base: str, lang: Language) -> list[dict[str, str]]:
    """Return the failures, corrections and changes feeds a page announces in its <head>
    (type, title, href), for the theme to write (site/theme/main.html).

    `base` is the page's relative path to the site root: Material's instant navigation
    follows alternate links, so they must stay on the site being read.
    """
    _ = lang.gettext
    out = []
    for name, (xml_name, json_name) in feeds.FEEDS.items():
        title = _feed_title(config, name, lang)
        out.append({"type": "application/rss+xml", "title": title, "href": base + xml_name})
        out.append({"type": "application/feed+json", "title": _("{feed} (JSON)").format(feed=title),
                    "href": base + json_name})
    return out


FEED_NAMES = {"failures": N_("failures"), "corrections": N_("corrections"),
              "changes": N_("changes")}


def _feed_title(config: RunConfig, name: str, lang: Language) -> str:
    _ = lang.gettext
    return _("{site}: {feed}").format(site=site_title(config, lang), feed=_(FEED_NAMES[name]))


def edition_url(config: RunConfig, code: str) -> str:
    """Return the public URL of a language's edition (the site's own URL for English)."""
    return config.site.url + edition_dir(code)

