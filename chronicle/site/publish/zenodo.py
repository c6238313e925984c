"""`.zenodo.json`: what Zenodo records about the chronicle when it mints a release's DOI.

A repository linked to Zenodo (its GitHub settings) gets a version DOI for each GitHub
release, and one concept DOI for all of them; `.zenodo.json` at the tagged commit is the
only metadata Zenodo then reads. It is written from chronicle.yml (`chronicle init`, and
`chronicle zenodo` whenever chronicle.yml changes; the nightly job runs it before its
commit), so the release of each week describes the chronicle as configured that week.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.files.atomic import write_atomic

FILENAME = ".zenodo.json"
UPLOAD_TYPE = "dataset"
# The release archives the repository: the store and the sealed pages the site presents.
# DataCite's IsSupplementTo ("A is a supplement to B"): the data behind the published
# site, not the site itself (IsIdenticalTo would claim the archive is the web page).
SITE_RELATION = "isSupplementTo"
DEFAULT_KEYWORDS = ("machine learning", "training run", "chronicle")


def zenodo_metadata(config: RunConfig) -> dict[str, Any]:
    """Return the chronicle's Zenodo deposit metadata (the fields Zenodo documents)."""
    creators = [
        {key: value for key, value in (("name", c.name), ("affiliation", c.affiliation),
                                       ("orcid", c.orcid)) if value}
        for c in config.zenodo.creators
    ] or [{"name": config.site.author}]
    keywords = list(config.zenodo.keywords) or [*DEFAULT_KEYWORDS, config.run.name]
    description = config.zenodo.description or _default_description(config)
    return {
        "title": config.site.title,
        "upload_type": UPLOAD_TYPE,
        "description": description,
        "creators": creators,
        "access_right": "open",
        "license": config.site.license,
        "keywords": keywords,
        "related_identifiers": [
            {"identifier": config.site.url, "relation": SITE_RELATION},
        ],
    }


def _default_description(config: RunConfig) -> str:
    # Zenodo reads the description as HTML: the run's name is text.
    name, url = html.escape(config.run.name), html.escape(config.site.url)
    return (f"<p>A daily chronicle of the training run {name}: one sealed page per day, "
            "with its figures, charts, failure records and issue threads, and the "
            "append-only, checksummed store they were computed from (each snapshot's "
            "files and manifests, chained by sha256; <code>chronicle verify</code> "
            f"checks them).</p><p>Published at <a href=\"{url}\">{url}</a>.</p>")


def zenodo_json(config: RunConfig) -> bytes:
    """Return the bytes of the chronicle's `.zenodo.json`."""
    text = json.dumps(zenodo_metadata(config), indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def write_zenodo_json(config: RunConfig) -> bool:
    """Write `.zenodo.json` beside chronicle.yml; return whether its bytes changed."""
    path: Path = config.root / FILENAME
    content = zenodo_json(config)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ChronicleError(f"{path}: not a regular file; remove it, then run "
                             "`chronicle zenodo` again")
    if path.is_file() and path.read_bytes() == content:
        return False
    try:
        write_atomic(path, content)
    except OSError as err:
        raise ChronicleError(f"{path}: cannot write it ({err.strerror or err})") from err
    return True
