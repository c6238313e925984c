"""Fixtures shared by the test modules; each delegates to tests/support, where the helpers
live (test modules import those directly, never each other)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronicle.site.engines.mkdocs.core import load_core

# Before any test imports mkdocs: builds run in this process on the MkDocs 1.x that
# `chronicle build` runs on (ProperDocs, site/engines/mkdocs/core.py), as those of its
# edition processes do.
load_core()

from chronicle.config import RunConfig  # noqa: E402
from tests.support.config import make_config  # noqa: E402
from tests.support.fakes.wandb_server import FakeWandb  # noqa: E402
from tests.support.live import Live, live_chronicle, live_servers  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_under_basetemp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every temporary file of the session, this process's and its children's, under
    pytest's base folder, which pytest removes a few runs later: a process a test kills
    (a build SIGKILLed mid-way) cannot remove its own (mkdocs-gen-files' folder of
    generated pages), and they piled up in /tmp."""
    folder = tmp_path_factory.getbasetemp() / "tmp"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder))
        patch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
        yield


@pytest.fixture
def config(tmp_path: Path) -> RunConfig:
    """A valid config rooted in tmp_path, with its docs/ folder."""
    (tmp_path / "docs").mkdir()
    return make_config(tmp_path)


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, FakeWandb]]:
    """A chronicle wired to fake W&B and GitHub servers (see tests/support/live.py)."""
    with live_chronicle(tmp_path, monkeypatch) as pair:
        yield pair


@pytest.fixture
def live_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """The same, with both servers at hand (to change what GitHub serves, too)."""
    with live_servers(tmp_path, monkeypatch) as world:
        yield world


# What `make test-fast` leaves out (-m "not integration"): a module that builds a chronicle
# or a site, or runs the CLI's nights end to end, through these helpers. Read from the
# module's own words, so a new test module is placed by what it calls, not by a list.
_INTEGRATION = re.compile(
    r"\b(make_chronicle|build_site|simulated_chronicle|chronicle_build|take_night|run_demo"
    r"|rehearse|cli_process)\b|\bcli\(\"(build|snapshot|demo|serve)\"")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    texts: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.fspath))
        if path not in texts:
            texts[path] = bool(_INTEGRATION.search(path.read_text(encoding="utf-8")))
        if texts[path]:
            item.add_marker(pytest.mark.integration)
