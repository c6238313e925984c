"""`chronicle build` (site/build.py): it never replaces a folder that is not an earlier site,
it lists the warnings that made `--strict` abort, quotes in sealed headings show as typed
(also on pages sealed before `md_text` kept them), and it is all or nothing: a build killed
at any point, or whose edition's process is killed, leaves the published site byte for
byte as it was and no process running, and the next build simply works."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from chronicle.config import load_config
from chronicle.errors import EXIT_FAILURE, EXIT_USAGE
from chronicle.executor import Executor
from chronicle.site.build import build_site
from tests.support.commands import cli, cli_process, night
from tests.support.config import scaffold_simulated
from tests.support.killpoint import BUILD_POINTS, KILLED_EXIT
from tests.support.processes import children, in_session, left_in_session


@pytest.fixture(scope="module")
def one_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = scaffold_simulated(tmp_path_factory.mktemp("build") / "c", days=2)
    assert cli("snapshot", "--dir", str(root), "--as-of", night(1)).exit_code == 0
    return root


@pytest.fixture
def root(one_night: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(one_night, tmp_path / "c"))


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_non_empty_folder_that_is_not_a_site_is_refused_untouched(
        root: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    (precious / "sub").mkdir(parents=True)
    (precious / "thesis.tex").write_text("years of work")
    (precious / "sub" / "data.csv").write_text("1,2,3")
    before = _tree(precious)
    result = cli("build", "--dir", str(root), "--site-dir", str(precious))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "not empty and not an earlier chronicle site" in result.output
    assert "nothing was deleted" in result.output
    assert _tree(precious) == before
    before = _tree(root)
    for target in (root, root.parent):
        result = cli("build", "--dir", str(root), "--site-dir", str(target))
        assert result.exit_code == EXIT_USAGE, result.output
        assert "the chronicle's own folder, or a folder holding it" in result.output
    assert _tree(root) == before


ENGINES = ["mkdocs", "zensical"]


def test_engine_builds_with_another_engine_for_this_build_only(root: Path) -> None:
    # The nightly action's `engine` input: chronicle.yml says mkdocs, this build Zensical.
    before = (root / "chronicle.yml").read_bytes()
    result = cli("build", "--dir", str(root), "--engine", "zensical")
    assert result.exit_code == 0, result.output
    assert f"built {root / 'site'} with zensical in " in result.stdout
    assert 'content="zensical-' in (root / "site" / "index.html").read_text(encoding="utf-8")
    assert (root / "chronicle.yml").read_bytes() == before
    wrong = cli("build", "--dir", str(root), "--engine", "hugo")
    assert wrong.exit_code == EXIT_USAGE and "'hugo' is not one of" in wrong.output


def _engine(root: Path, engine: str) -> None:
    config = root / "chronicle.yml"
    config.write_text(config.read_text().replace("site:\n", f"site:\n  engine: {engine}\n", 1))
    assert load_config(root).site.engine == engine


@pytest.mark.parametrize("engine", ENGINES)
def test_a_site_folder_that_is_a_link_is_never_built_through(
        root: Path, tmp_path: Path, engine: str) -> None:
    # git keeps links: a merged pull request can make `site` one.
    _engine(root, engine)
    missing = tmp_path / "outside" / "new"
    (root / "site").symlink_to(missing)
    result = cli("build", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE, result.output
    assert f"{root / 'site'}: a symbolic link" in result.output
    assert not missing.exists() and not missing.parent.exists()
    # A link to an earlier chronicle site elsewhere: left as it was, not replaced.
    other = tmp_path / "other"
    assert cli("build", "--dir", str(root), "--site-dir", str(other)).exit_code == 0
    (root / "site").unlink()
    (root / "site").symlink_to(other)
    before = _tree(other)
    assert cli("build", "--dir", str(root)).exit_code == EXIT_USAGE
    assert _tree(other) == before and (root / "site").is_symlink()
    # A link on the way to the site folder, inside the chronicle.
    (root / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    result = cli("build", "--dir", str(root), "--site-dir", str(root / "out" / "site"))
    assert result.exit_code == EXIT_USAGE and f"{root / 'out'}: a symbolic link" in result.output
    assert not (tmp_path / "outside").exists()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("inside", ["docs/data/x", "docs/days/x", "docs", "docs/assets/site"])
def test_a_site_folder_inside_the_store_is_refused_by_either_engine(
        root: Path, engine: str, inside: str) -> None:
    _engine(root, engine)
    before = _tree(root / "docs")
    result = cli("build", "--dir", str(root), "--site-dir", str(root / inside))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "inside the store (docs/)" in result.output and "Traceback" not in result.output
    assert _tree(root / "docs") == before
    assert cli("verify", "--dir", str(root)).exit_code == 0


def test_an_earlier_site_or_an_empty_folder_is_built_into(root: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for _ in range(2):  # the second build replaces the first one's site
        result = cli("build", "--dir", str(root), "--site-dir", str(empty))
        assert result.exit_code == 0, result.output
        assert (empty / "api" / "latest.json").is_file()


def test_strict_abort_lists_the_warnings(root: Path) -> None:
    (root / "docs" / "notes.md").write_text("# Notes\n\nSee [the plan](plan.md).\n")
    result = cli("build", "--dir", str(root))
    assert result.exit_code == EXIT_USAGE, result.output
    assert "the site build failed: Aborted with" in result.output
    assert "the warnings:" in result.output and "plan.md" in result.output, result.output


def test_quotes_in_pages_sealed_by_an_older_version_show_as_typed(root: Path) -> None:
    # Before md_text kept quotes, a sealed heading held `&\\#34;` and showed it as typed.
    page = root / "docs" / "days" / "2026-08-20.md"
    page.write_text(page.read_text() + '\n### #7 A &\\#34;quoted&\\#34; title\n')
    assert cli("build", "--dir", str(root)).exit_code == 0
    html = (root / "site" / "days" / "2026-08-20.html").read_text()
    assert "A \"quoted\" title" in html or "A &quot;quoted&quot; title" in html
    assert "&amp;#34;" not in html and "&#34;quoted" not in html


def test_the_build_hands_each_edition_its_config_and_executor(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `chronicle build` read chronicle.yml and made the executor: the plugin of each
    # mkdocs build (both editions, in this process) is handed them, never reads the file
    # again or starts an executor of its own.
    from chronicle.site.engines.mkdocs import plugin

    def read_again(*_: object) -> None:
        raise AssertionError("the plugin read chronicle.yml a second time")

    monkeypatch.setattr(plugin, "load_config", read_again)
    monkeypatch.setattr(plugin, "Executor", read_again)
    config = load_config(root)
    assert len(config.site.languages) == 2
    with Executor() as executor:
        site = build_site(config, beside=False, executor=executor)
    assert (site / "index.html").is_file() and (site / "zh" / "index.html").is_file()


def test_a_build_in_this_process_leaves_no_process_or_variable(root: Path) -> None:
    before, environ = {p.pid for p in children()}, dict(os.environ)
    site = build_site(load_config(root))
    assert (site / "zh" / "index.html").is_file()
    assert {p.pid for p in children()} == before
    assert dict(os.environ) == environ  # SOURCE_DATE_EPOCH was set for the build only
    assert _leftovers(root) == []


def test_a_build_started_elsewhere_writes_nothing_where_it_was_started(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli("build", "--dir", str(root)).exit_code == 0
    assert list(elsewhere.iterdir()) == []  # the rss plugin's cache is the chronicle's
    assert Path.cwd() == elsewhere


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".building-" in p.name or ".old-" in p.name)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chronicle with both editions built after two nights, then a third night taken:
    the next build would change the published site."""
    root = scaffold_simulated(tmp_path_factory.mktemp("published") / "c", days=4)
    for n in (1, 2):
        assert cli("snapshot", "--dir", str(root), "--as-of", night(n)).exit_code == 0
    assert cli("build", "--dir", str(root)).exit_code == 0
    assert (root / "site" / "zh" / "index.html").is_file()
    assert cli("snapshot", "--dir", str(root), "--as-of", night(3)).exit_code == 0
    return root


@pytest.mark.slow
@pytest.mark.parametrize("point", BUILD_POINTS)
def test_a_killed_build_leaves_the_site_as_it_was_and_the_next_one_works(
        published: Path, tmp_path: Path, point: str) -> None:
    if point in ("english", "workers") and (os.cpu_count() or 1) < 2:
        pytest.skip("one core: no edition builds beside English")
    root = Path(shutil.copytree(published, tmp_path / "c"))
    before = _tree(root / "site")
    proc = cli_process("build", "--dir", str(root), kill_at=point, alone=True)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == KILLED_EXIT, out
    assert left_in_session(proc.pid) == []  # the edition's process and render workers too
    killed = _tree(root / "site")
    if point == "swapped":  # killed after publishing: the new site, whole
        assert killed != before and "days/2026-08-22.html" in killed
    else:
        assert killed == before
    # The next build clears what the killed one left and publishes a site that checks.
    result = cli("build", "--dir", str(root))
    assert result.exit_code == 0, result.output
    assert _leftovers(root) == []
    assert cli("check-site", "--dir", str(root)).exit_code == 0
    if point == "swapped":
        assert _tree(root / "site") == killed


@pytest.mark.slow
def test_a_killed_edition_process_fails_the_build_and_publishes_nothing(
        published: Path, tmp_path: Path) -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: no edition builds beside English")
    root = Path(shutil.copytree(published, tmp_path / "c"))
    before = _tree(root / "site")
    proc = cli_process("build", "--dir", str(root))
    deadline = time.monotonic() + 300
    edition = None
    while edition is None and proc.poll() is None and time.monotonic() < deadline:
        # The edition's child is started before the English build (a render worker, if
        # any, only once English draws): the first executor child.
        started = [p for p in in_session(proc.pid) if "chronicle.executor" in p.cmdline]
        edition = started[0] if started else None
        time.sleep(0.02)
    assert edition is not None, "the build started no edition process"
    os.kill(edition.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == EXIT_FAILURE, out
    assert "the zh edition's build process ended before it finished (killed by SIGKILL); " \
           "nothing was published" in out
    assert "Traceback" not in out
    assert _tree(root / "site") == before
    assert _leftovers(root) == []
    assert left_in_session(proc.pid) == []

