"""Rewriting a sealed file as an attacker with write access to the repository would: the
file, its manifest entry and every later manifest's `previous` link, so that plain
`chronicle verify` (the hash chain) still passes."""

from __future__ import annotations

import json
from pathlib import Path

from chronicle.store import dump_json, sha256_bytes


def rewrite_sealed(docs: Path, rel: str, blob: bytes) -> None:
    """Replace the sealed file `rel` (under docs/) by `blob` and fix the chain up after it."""
    (docs / rel).write_bytes(blob)
    previous: str | None = None
    fixing = False
    for folder in sorted(p for p in (docs / "data").iterdir()
                         if p.is_dir() and not p.name.startswith(".")):
        path = folder / "MANIFEST.json"
        manifest = json.loads(path.read_bytes())
        changed = False
        for files in manifest.get("sealed", {}).values():
            if rel in files:
                files[rel] = {"sha256": sha256_bytes(blob), "size": len(blob)}
                changed = True
        if fixing and manifest.get("previous"):
            manifest["previous"]["sha256"] = previous
            changed = True
        if changed:
            path.write_bytes(dump_json(manifest))
            fixing = True
        previous = sha256_bytes(path.read_bytes())


def edit_day_json(docs: Path, day: str, edit: dict[str | tuple[str, ...], object]) -> None:
    """Set values of a sealed day's JSON by path ("loss.train_last", or a tuple of keys
    where a key holds a dot) and fix the chain up; a path starting with "-" is deleted."""
    rel = f"days/{day}.json"
    doc = json.loads((docs / rel).read_bytes())
    for path, value in edit.items():
        parts = path.split(".") if isinstance(path, str) else list(path)
        node = doc
        for part in parts[:-1]:
            node = node[part.lstrip("-")]
        if parts[-1].startswith("-"):
            node.pop(parts[-1][1:])
        else:
            node[parts[-1]] = value
    blob = (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    rewrite_sealed(docs, rel, blob)


def rewrite_manifest(docs: Path, sid: str, manifest: dict[str, object]) -> None:
    """Replace snapshot `sid`'s manifest by `manifest` and fix every later `previous` up."""
    path = docs / "data" / sid / "MANIFEST.json"
    path.write_bytes(dump_json(manifest))
    previous = sha256_bytes(path.read_bytes())
    for folder in sorted(p for p in (docs / "data").iterdir()
                         if p.is_dir() and not p.name.startswith(".") and p.name > sid):
        later = folder / "MANIFEST.json"
        m = json.loads(later.read_bytes())
        m["previous"]["sha256"] = previous
        later.write_bytes(dump_json(m))
        previous = sha256_bytes(later.read_bytes())


def rewrite_snapshot_file(docs: Path, sid: str, name: str, blob: bytes) -> None:
    """Replace snapshot `sid`'s data file `name` by `blob`, record it in the snapshot's
    manifest and fix every later `previous` up: the chain holds, the content is forged."""
    (docs / "data" / sid / name).write_bytes(blob)
    manifest = json.loads((docs / "data" / sid / "MANIFEST.json").read_bytes())
    manifest["files"][name] = {"sha256": sha256_bytes(blob), "size": len(blob)}
    rewrite_manifest(docs, sid, manifest)
