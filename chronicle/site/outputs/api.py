"""The machine API: api/index.json, api/days/<date>.json, api/latest.json,
api/mementos.json (site stage)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chronicle.models import iso
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.store import Store, sha256_file


def api_files(inputs: BuildInputs) -> dict[str, str | bytes]:
    """Return every sealed day's JSON, the index of sealed days and the latest snapshot."""
    config, store, days = inputs.config, inputs.store, inputs.days
    out: dict[str, str | bytes] = {}
    index = []
    for d in days:
        md = store.days / f"{d['date']}.md"
        ids = inputs.swhids.get(d["date"])
        index.append({"date": d["date"], "day": d["day"], "title": d["title"],
                      "permalink": f"{config.site.url}days/{d['date']}.html",
                      "json": f"{config.site.url}api/days/{d['date']}.json",
                      "sealed_by": d["sealed_by"], "sealed_at": d["sealed_at"],
                      "sha256": sha256_file(md) if md.is_file() else None,
                      # Intrinsic ids anyone can recompute from the bytes (store/swhid.py).
                      "swhid": ids.page if ids else None,
                      "swhid_dir": ids.folder if ids else None})
        out[f"api/days/{d['date']}.json"] = (store.days / f"{d['date']}.json").read_bytes()
    latest = inputs.latest
    out["api/index.json"] = _dump({"run": config.run.name, "days": index})
    out["api/latest.json"] = _dump({
        "snapshot": latest.id if latest else None,
        "taken_at": iso(latest.taken_at) if latest else None,
        # The chain head: whoever keeps this can later prove a copy was not cut or rewritten
        # (`chronicle verify --against <url>api/latest.json`).
        "head": {"snapshot": latest.id, "sha256": latest.manifest_sha256,
                 "manifest": f"data/{latest.id}/MANIFEST.json"} if latest else None,
        "latest_sealed_day": days[-1]["date"] if days else None,
        "stale_sources": [{"source": s["name"], "since": iso(s["since"]),
                           "last_good_snapshot": s["last_good"], "error": s["error"]}
                          for s in inputs.stale],
        "waiting_days": [{"day": w["day"], "sources": w["sources"],
                          "seal_anyway_at": iso(w["seal_anyway_at"])} for w in inputs.waiting],
    })
    out["api/mementos.json"] = mementos_file(store)
    out["api/ledger.json"] = ledger_file(inputs)
    return out


def ledger_file(inputs: BuildInputs) -> str:
    """Return api/ledger.json: every event of the run (analysis/ledger.py) with its
    sentence in each language of the site, the figures of each sealed day and the run's
    totals, their sum."""
    from chronicle.render.i18n import language
    from chronicle.render.ledger_text import event_text
    from chronicle.site.outputs.editions import LOCALE_FOLDER

    config, latest = inputs.config, inputs.latest
    langs = [language(code, config.root / LOCALE_FOLDER, config)
             for code in config.site.languages]
    doc = inputs.ledger.to_json(latest.id if latest else None)
    for event in doc["events"]:
        event["text"] = {lang.code: event_text(event, lang, config) for lang in langs}
    return _dump(doc)


def mementos_file(store: Store) -> str:
    """Return api/mementos.json: every Wayback memento in the hash chain, oldest first
    (`day` null for the home page); a record not yet listed by a snapshot is not in it."""
    return json.dumps([m.to_json() for m in store.mementos()], indent=1, sort_keys=True,
                      ensure_ascii=False) + "\n"


def _dump(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
