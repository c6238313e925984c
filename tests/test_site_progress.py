"""What a build says while it runs (site/progress.py,
site/engines/mkdocs/progress_plugin.py): each edition's steps as they end, the translated
edition's from its own process too, with either engine; and saying them changes no built
byte."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.site.build import build_site
from tests.support.commands import cli
from tests.support.site_factory import Built, make_chronicle, tree_bytes

MKDOCS_STEPS = ("building with mkdocs-material on ProperDocs",
                "sources of", "pages converted and indexed for search, feeds written",
                "post-build steps done")
ZENSICAL_STEPS = ("building with Zensical 0.0.73", "sources of", "charts drawn",
                  "pages built by Zensical", "post-build steps done")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return make_chronicle(tmp_path_factory.mktemp("progress") / "c", nights=2,
                          languages=("en", "zh"))


def _steps(lines: list[str], code: str) -> list[str]:
    """The steps the `code` edition said, in order, without their seconds."""
    return [re.sub(r" \(\d+\.\d s\)$", "", line.removeprefix(f"{code} edition: "))
            for line in lines if line.startswith(f"{code} edition: ")]


def test_each_edition_says_its_steps_and_the_bytes_are_those_of_a_silent_build(
        made: Built, tmp_path: Path) -> None:
    config = load_config(made.root)
    lines: list[str] = []
    said = build_site(config, tmp_path / "said", beside=True, say=lines.append)
    silent = build_site(config, tmp_path / "silent", beside=True)
    assert tree_bytes(said) == tree_bytes(silent)
    for code in ("en", "zh"):  # zh from its own process, handed on as it came
        steps = _steps(lines, code)
        assert len(steps) == len(MKDOCS_STEPS), steps
        assert all(s.startswith(want) for s, want in zip(steps, MKDOCS_STEPS, strict=True))
    assert all(re.search(r" \(\d+\.\d s\)$", line) for line in lines
               if " edition: " in line and "building with" not in line)
    assert lines[-1] == f"published {said} (en, zh)"


def test_zensical_editions_say_their_steps(made: Built, tmp_path: Path) -> None:
    config = load_config(made.root)
    config = replace(config, site=replace(config.site, engine="zensical"))
    lines: list[str] = []
    build_site(config, tmp_path / "site", say=lines.append)
    assert lines[0].startswith("store read (")
    for code in ("en", "zh"):
        steps = _steps(lines, code)
        assert [s[:len(w)] for s, w in zip(steps, ZENSICAL_STEPS, strict=True)] == \
            list(ZENSICAL_STEPS)


def test_chronicle_build_says_them_on_stderr_and_ends_with_how_to_preview(
        made: Built, tmp_path: Path) -> None:
    result = cli("build", "--dir", str(made.root), "--site-dir", str(tmp_path / "site"))
    assert result.exit_code == 0, result.output
    assert "en edition: post-build steps done" in result.stderr
    assert " edition: " not in result.stdout  # stdout keeps what the command made
    assert result.stdout.splitlines()[-1] == (
        f"preview it: chronicle serve --dir {made.root}, then open http://127.0.0.1:8000/")
