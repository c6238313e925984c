"""Config stage: the `zenodo:` section, what the chronicle's `.zenodo.json` says about it.

Zenodo mints a DOI for each GitHub release of a repository linked to it, from the metadata
in `.zenodo.json` (site/publish/zenodo.py writes it from chronicle.yml). Everything here is
optional: the creators default to `site.author`, the description to a sentence about the
run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chronicle.config.checks import strings, text
from chronicle.config.fields import Invalid, Rows, Section, option

# ORCID iDs are four groups of four digits, the last character a check digit (or X).
_ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")


def _orcid(value: Any) -> str:
    """An ORCID iD, bare (0000-0002-1825-0097), not its URL."""
    found = text("an ORCID iD, e.g. 0000-0002-1825-0097")(value)
    if not _ORCID.match(found):
        raise Invalid(f"expected an ORCID iD like 0000-0002-1825-0097 (without "
                      f"https://orcid.org/), got {found!r}")
    return found


@dataclass(frozen=True, kw_only=True)
class Creator:
    """One creator of the dataset, as Zenodo names one."""

    name: str = option(text("a name, 'Family, Given'"),
                       doc="the creator's name, 'Family name, Given names'")
    affiliation: str = option(text(empty=True), default="", doc="their affiliation")
    orcid: str = option(_orcid, default="", doc="their ORCID iD")


@dataclass(frozen=True, kw_only=True)
class ZenodoSection:
    creators: tuple[Creator, ...] = option(Rows(Section(Creator), "creators"), default=(),
                                           doc="creators of the dataset (default site.author)")
    keywords: tuple[str, ...] = option(strings("[machine learning, training run]"),
                                       default=(), doc="keywords of the dataset")
    description: str = option(text(), default="",
                              doc="the dataset's description (default: a sentence)")
