"""Which MkDocs 1.x runs chronicle's mkdocs builds (site stage): ProperDocs.

MkDocs 1.6.1 is the last 1.x release; the next on the index, 2.0 (pre-releases so far),
drops the plugin system a chronicle's mkdocs build runs on. ProperDocs ("a continuation
of MkDocs 1.x and a drop-in replacement", in its own words) is maintained, and
mkdocs-gen-files (pinned here) already depends on it. Its `properdocs.replacement` makes
every later `import mkdocs.x` load `properdocs.x`, so Material, mkdocs-gen-files,
mkdocs-rss-plugin and chronicle's own plugin run on it unchanged; the pages are those
mkdocs 1.6.1 builds but for the version in Material's generator meta tag.

The alias works only when it comes before the first `import mkdocs` of a process, so it
is made where an mkdocs build starts (build.py), in the command's process and in each
translated edition's (edition_process.py, told which core its parent runs). A process
that already runs the real mkdocs (the chronicle plugin inside `mkdocs build`)
keeps it: swapping modules under a running mkdocs would mix the two. A Zensical build
never comes here: it imports neither."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

PROPERDOCS = "properdocs"
MKDOCS = "mkdocs"
CORES = (PROPERDOCS, MKDOCS)


def load_core(wanted: str = PROPERDOCS) -> str:
    """Make this process's `import mkdocs` load `wanted` (ProperDocs unless told
    otherwise), unless mkdocs is loaded already; return the core the process runs."""
    if wanted not in CORES:
        raise ValueError(f"unknown core {wanted!r}; known: {CORES}")
    loaded = sys.modules.get("mkdocs")
    if loaded is not None:
        return PROPERDOCS if loaded.__name__ == PROPERDOCS else MKDOCS
    if wanted == PROPERDOCS:
        import properdocs.replacement  # noqa: F401  (every mkdocs.x is properdocs.x from here)
    else:
        import mkdocs  # noqa: F401  (loaded now: a later call keeps it)
    return wanted


def describe_core() -> str:
    """Return the MkDocs 1.x this process runs, as a reader names it ("ProperDocs 1.6.7")."""
    loaded = sys.modules.get("mkdocs")
    if loaded is None:
        return "nothing yet"
    name = "ProperDocs" if loaded.__name__ == PROPERDOCS else "MkDocs"
    return f"{name} {getattr(loaded, '__version__', '')}".strip()


@contextmanager
def core_logging() -> Iterator[logging.Logger]:
    """Yield the logger of the core this process runs (`properdocs` or `mkdocs`: its
    strict mode counts the warnings of that tree only), with the `mkdocs` logger under it
    for the block, as ProperDocs' own command line sets it up: what plugins log as
    `mkdocs.*` (the chronicle plugin's data warnings, `mkdocs.plugins.chronicle`) is
    counted, and heard by a handler on the yielded logger."""
    loaded = sys.modules.get("mkdocs")
    top = logging.getLogger(loaded.__name__ if loaded is not None else MKDOCS)
    legacy = logging.getLogger(MKDOCS)
    if legacy is top:
        yield top
        return
    parent = legacy.parent
    legacy.parent = top
    try:
        yield top
    finally:
        legacy.parent = parent
