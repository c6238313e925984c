"""The key of a translated edition's day pages kept between builds (site stage).

A translated edition's day page and its translated charts are a pure function of the
sealed day (its JSON, chart specs and SVGs, the entry that seals it), the language and
its catalog, the chronicle's config and the chronicle code. Sealed bytes never change,
so a nightly build would otherwise translate and render every earlier day again to get
the same bytes (most of what a second language costs, issue #13). Each day's outputs are
kept in `<chronicle>/.cache/chronicle/editions/` (site/build_cache.py), named by the
sha256 of all of those inputs' bytes; `edition_key` is the part every page of an edition
shares, which the edition's other cached pages (threads) use too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.render.i18n import catalog_path
from chronicle.site.build_cache import FORMAT, cache_root, code_fingerprint, config_sha256

LOCALE_FOLDER = "locale"  # a chronicle's own translations: <root>/locale/<lang>.po


def cache_dir(root: Path) -> Path:
    """Return the folder of the translated day pages of the chronicle at `root`."""
    return cache_root(root) / "editions"


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"


def edition_key(config: RunConfig, code: str) -> str:
    """Return the sha256 of what every page of the `code` edition depends on beyond the
    page itself: code, language, effective catalog and the whole config."""
    parts = [
        f"format={FORMAT}",
        f"code={code_fingerprint()}",
        f"language={code}",
        f"catalog={_file_sha256(catalog_path(code))}",
        f"own catalog={_file_sha256(config.root / LOCALE_FOLDER / f'{code}.po')}",
        f"config={config_sha256(config)}",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
