"""The MkDocs 1.x under chronicle's mkdocs builds (site/engines/mkdocs/core.py):
ProperDocs, in the command's process and in each translated edition's, without a banner; a
process that runs the real mkdocs already keeps it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.site_factory import make_chronicle

PROPERDOCS_TAG = '<meta name="generator" content="mkdocs-ProperDocs 1.6.7, mkdocs-material-'


def _python(code: str) -> str:
    """Run `code` in a new interpreter (its own sys.modules); return what it printed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return proc.stdout.strip()


def test_load_core_makes_every_mkdocs_import_load_properdocs() -> None:
    said = _python(
        "from chronicle.site.engines.mkdocs.core import describe_core, load_core\n"
        "print(load_core())\n"
        "import mkdocs.config.defaults, mkdocs.plugins\n"
        "print(mkdocs.__name__, mkdocs.plugins.__name__, describe_core())")
    assert said.splitlines() == ["properdocs", "properdocs properdocs.plugins ProperDocs 1.6.7"]


def test_a_process_running_mkdocs_keeps_it() -> None:
    said = _python(
        "import mkdocs.plugins\n"
        "from chronicle.site.engines.mkdocs.core import describe_core, load_core\n"
        "print(load_core(), mkdocs.plugins.__name__, describe_core())")
    assert said == "mkdocs mkdocs.plugins MkDocs 1.6.1"
    assert _python("from chronicle.site.engines.mkdocs.core import load_core\n"
                   "print(load_core('mkdocs'), load_core())") == "mkdocs mkdocs"


class _Heard(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.heard: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.heard.append(f"{record.name}: {record.getMessage()}")


def test_what_plugins_log_as_mkdocs_reaches_the_cores_logger_during_a_build() -> None:
    # ProperDocs' strict mode counts the warnings of its own logger tree; the chronicle
    # plugin (and others) log under mkdocs.*: during a build, that tree hangs under it.
    from chronicle.site.engines.mkdocs.core import core_logging

    heard = _Heard()
    legacy = logging.getLogger("mkdocs")
    before = legacy.parent
    with core_logging() as top:
        assert top.name == "properdocs"  # this process runs ProperDocs (conftest)
        top.addHandler(heard)
        try:
            logging.getLogger("mkdocs.plugins.chronicle").warning("a day waits")
            logging.getLogger("properdocs.structure.pages").warning("a link is broken")
        finally:
            top.removeHandler(heard)
    assert heard.heard == ["mkdocs.plugins.chronicle: a day waits",
                           "properdocs.structure.pages: a link is broken"]
    assert legacy.parent is before  # as it was after the build


def test_an_unknown_core_is_refused() -> None:
    from chronicle.site.engines.mkdocs.core import load_core

    with pytest.raises(ValueError, match="unknown core 'mkdocs2'"):
        load_core("mkdocs2")


def test_chronicle_build_runs_both_editions_on_properdocs_without_a_banner(
        tmp_path: Path) -> None:
    made = make_chronicle(tmp_path / "c", nights=1, languages=("en", "zh"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_MKDOCS_2_WARNING", "DISABLE_MKDOCS_2_WARNING")}
    chronicle = Path(sys.executable).parent / "chronicle"  # as a user starts it
    proc = subprocess.run([str(chronicle), "build", "--dir", str(made.root)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout + proc.stderr
    for banner in ("MkDocs may break support", "end of life", "ProperDocs. That notice"):
        assert banner not in said
    assert "en edition: building with mkdocs-material on ProperDocs 1.6.7" in proc.stderr
    for page in ("index.html", "zh/index.html"):  # the edition's own process too
        assert PROPERDOCS_TAG in (made.root / "site" / page).read_text(encoding="utf-8")
