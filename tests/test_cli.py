"""The CLI on bad input: one clear message, the documented exit code, store untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.config import load_config
from chronicle.errors import EXIT_USAGE
from tests.support.config import scaffold_simulated


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*") if p.is_file()
    )


@pytest.fixture
def chronicle_dir(tmp_path: Path) -> Path:
    return scaffold_simulated(tmp_path / "c")


def test_init_scaffolds_and_refuses_to_overwrite(chronicle_dir: Path) -> None:
    for rel in (
        "chronicle.yml",
        "failures.yml",
        "mkdocs.yml",
        "docs/assets/chronicle.svg",
        ".github/workflows/nightly.yml",
    ):
        assert (chronicle_dir / rel).is_file(), rel
    # The site's stylesheet and script ship with the package (served by the plugin).
    assert not (chronicle_dir / "docs/assets/stylesheets/chronicle.css").exists()
    # Both languages: the English record at the root, a Chinese edition under zh/.
    assert load_config(chronicle_dir).site.languages == ("en", "zh")
    result = CliRunner().invoke(main, ["init", str(chronicle_dir)])
    assert result.exit_code == EXIT_USAGE
    assert "already lives here" in result.output


def test_init_never_follows_a_link(tmp_path: Path) -> None:
    dangling = tmp_path / "c"
    dangling.symlink_to(tmp_path / "nowhere")
    result = CliRunner().invoke(main, ["init", str(dangling)])
    assert result.exit_code == EXIT_USAGE and isinstance(result.exception, SystemExit)
    assert f"{dangling}: a symbolic link to {tmp_path / 'nowhere'}, which does not exist" \
        in result.output
    assert not (tmp_path / "nowhere").exists()
    # Inside a folder that holds planted links (a cloned repository): nothing is written
    # through one, and nothing at all is written.
    folder = tmp_path / "clone"
    folder.mkdir()
    (folder / "mkdocs.yml").symlink_to(tmp_path / "victim")
    (folder / ".github").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    for planted, expected in (("mkdocs.yml", "a regular file"), (".github", "a folder")):
        result = CliRunner().invoke(main, ["init", str(folder)])
        assert result.exit_code == EXIT_USAGE, result.output
        assert f"{folder / planted}: a symbolic link, where chronicle expects {expected}" \
            in result.output
        assert not (tmp_path / "victim").exists() and not (tmp_path / "elsewhere").exists()
        assert all(p.is_symlink() for p in folder.iterdir())  # nothing written
        (folder / planted).unlink()  # removed: the next link is met
    assert CliRunner().invoke(main, ["init", str(folder)]).exit_code == 0


def test_malformed_config_is_one_clear_message(chronicle_dir: Path) -> None:
    (chronicle_dir / "chronicle.yml").write_text("run:\n  name: x\n  strat: 2026-01-01\n")
    result = CliRunner().invoke(main, ["snapshot", "--dir", str(chronicle_dir)])
    assert result.exit_code == EXIT_USAGE
    assert "Traceback" not in result.output
    assert "chronicle.yml" in result.output and "run.strat: unknown key" in result.output
    assert "did you mean 'start'" in result.output


def test_missing_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", "--dir", str(tmp_path / "absent")])
    assert result.exit_code == EXIT_USAGE
    assert "does not exist" in result.output and "chronicle init" in result.output


def test_as_of_rules_leave_the_store_as_it_was(chronicle_dir: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main, ["snapshot", "--dir", str(chronicle_dir), "--as-of", "2026-08-22T03:17:00Z"]
    )
    assert ok.exit_code == 0, ok.output
    assert "sealed: 2026-08-20, 2026-08-21" in ok.output
    before = _tree(chronicle_dir / "docs")
    for as_of, needle in (
        ("2026-08-21T00:00:00Z", "not after the newest snapshot"),
        ("2026-08-22T03:17:00Z", "not after the newest snapshot"),
        ("yesterday", "not an ISO 8601 time"),
        # Out of datetime's range once moved to UTC (a traceback once).
        ("0001-01-01T00:00:00+01:00", "outside 1970 to 2100"),
        ("9999-12-31T23:30:00-01:00", "outside 1970 to 2100"),
    ):
        result = runner.invoke(main, ["snapshot", "--dir", str(chronicle_dir), "--as-of", as_of])
        assert result.exit_code == EXIT_USAGE, result.output
        assert needle in result.output and "Traceback" not in result.output
    assert _tree(chronicle_dir / "docs") == before
    verify = runner.invoke(main, ["verify", "--dir", str(chronicle_dir)])
    assert verify.exit_code == 0 and "hash chain intact" in verify.output


def test_verify_names_an_altered_file(chronicle_dir: Path) -> None:
    runner = CliRunner()
    runner.invoke(
        main, ["snapshot", "--dir", str(chronicle_dir), "--as-of", "2026-08-22T03:17:00Z"]
    )
    page = chronicle_dir / "docs" / "days" / "2026-08-21.md"
    page.write_bytes(page.read_bytes().replace(b"Day", b"Dax", 1))
    result = runner.invoke(main, ["verify", "--dir", str(chronicle_dir)])
    assert result.exit_code == 1
    assert "docs/days/2026-08-21.md" in result.output and "altered" in result.output


def test_bad_failures_file_stops_before_fetching(chronicle_dir: Path) -> None:
    (chronicle_dir / "failures.yml").write_text("- id: x\n  strat: 2026-08-20T00:00:00Z\n")
    result = CliRunner().invoke(
        main, ["snapshot", "--dir", str(chronicle_dir), "--as-of", "2026-08-22T03:17:00Z"]
    )
    assert result.exit_code == EXIT_USAGE
    assert "failures.yml" in result.output
    assert not list((chronicle_dir / "docs" / "data").iterdir())


def test_the_command_line_entry_keeps_exit_codes_and_skips_the_last_collection(
        tmp_path: Path) -> None:
    import importlib.metadata
    import subprocess
    import sys

    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert [e.value for e in scripts if e.name == "chronicle"] == ["chronicle.cli:entry"]
    # entry() runs main, then freezes the heap so the interpreter's exit skips its last
    # full collection (~0.5 s after a build); errors keep their exit code and message.
    code = ("import gc, sys; from chronicle.cli import entry\n"
            "try:\n    entry()\nexcept SystemExit as e:\n"
            "    print('frozen', gc.get_freeze_count() > 0, file=sys.stderr); raise\n")
    done = subprocess.run([sys.executable, "-c", code, "build", "--dir", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == EXIT_USAGE
    assert "chronicle.yml" in done.stderr and "frozen True" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_stray_file_in_docs_days_is_named_by_build_as_by_verify(chronicle_dir: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(
        main, ["snapshot", "--dir", str(chronicle_dir), "--as-of", "2026-08-22T03:17:00Z"])
    assert ok.exit_code == 0, ok.output
    for stray in ("2026-13-45.md", "notes.txt"):
        path = chronicle_dir / "docs" / "days" / stray
        path.write_text("# not sealed\n")
        result = runner.invoke(main, ["build", "--dir", str(chronicle_dir)])
        assert result.exit_code == EXIT_USAGE, result.output
        assert isinstance(result.exception, SystemExit)  # a message, not a traceback
        assert f"{path}: not sealed by any snapshot manifest" in result.output
        assert not (chronicle_dir / "site").exists()
        verify = runner.invoke(main, ["verify", "--dir", str(chronicle_dir)])
        assert verify.exit_code == 1 and f"docs/days/{stray}: not sealed" in verify.output
        path.unlink()
