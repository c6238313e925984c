"""`make bench`'s rows (bench/__main__.py): a ratio of medians against its target, with
each round's own ratio so a reader sees how far the machine drifted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.__main__ import Rounds, checkout, row, set_aside
from bench.results import RESULTS, Report, block_text, record, replace_block
from bench.speedups import Measured


def test_a_row_is_the_ratio_of_medians_with_each_rounds_ratio() -> None:
    rounds = Rounds(a=[6.0, 9.0, 7.0], b=[5.0, 6.0, 7.0])
    assert rounds.medians == (7.0, 6.0)
    line = row("build vs plain", rounds, 1.3)
    assert "7.0 s vs    6.0 s" in line
    assert "ratio 1.17  target <= 1.3x  met" in line
    assert line.endswith("(rounds: 1.20 1.50 1.00)")
    assert "ratio 1.60  target <= 1.5x  MISSED" in row("nightly", Rounds([8.0], [5.0]), 1.5)


def test_rounds_of_unequal_length_are_an_error() -> None:
    with pytest.raises(ValueError):
        Rounds(a=[1.0, 2.0], b=[1.0]).each()


def test_a_speedup_is_kept_only_when_its_row_takes_10_percent_longer_without_it() -> None:
    kept = Measured("sealing-workers", "demo", on=[10.0, 12.0, 11.0], off=[12.5, 12.0, 13.0])
    assert round(kept.gain, 3) == round(12.5 / 11.0, 3)
    assert "off/on 1.14  keep  (rounds: 1.25 1.00 1.18)" in kept.line()
    dropped = Measured("beside", "build", on=[10.0], off=[10.9])
    assert "off/on 1.09  drop" in dropped.line()


def test_a_chronicle_copied_for_an_engine_names_it_once(tmp_path: Path) -> None:
    from bench.engines import with_engine

    source = tmp_path / "c"
    (source / "site").mkdir(parents=True)
    (source / ".cache").mkdir()
    (source / "chronicle.yml").write_text("source: simulated\nsite:\n  url: https://e.org/\n"
                                          "  engine: mkdocs\n")
    copy = with_engine(source, tmp_path / "z", "zensical")
    text = (copy / "chronicle.yml").read_text()
    assert text.count("engine:") == 1 and "  engine: zensical\n" in text
    assert not (copy / "site").exists() and not (copy / ".cache").exists()
    assert "engine: mkdocs" in (source / "chronicle.yml").read_text()


def test_a_timed_steps_old_output_is_set_aside_not_deleted(tmp_path: Path) -> None:
    # Deleting thousands of files just before a timed step slows every file it creates on
    # a journal-less ext4 (bench/__main__.py set_aside): the old output is moved instead.
    site = tmp_path / "site"
    (site / "days").mkdir(parents=True)
    (site / "days" / "a.html").write_text("a")
    set_aside(site)
    assert not site.exists()
    (kept,) = (tmp_path / ".aside").iterdir()
    assert (kept / "days" / "a.html").read_text() == "a"
    set_aside(site)  # nothing there: nothing to do
    site.mkdir()
    set_aside(site)
    assert len(list((tmp_path / ".aside").iterdir())) == 2


def test_a_nightly_checkout_leaves_out_what_was_set_aside_in_its_base(tmp_path: Path) -> None:
    # A base built where it runs had its site set aside inside it; a nightly checkout
    # never has an old site, so each timed night's copy leaves it out.
    base, work = tmp_path / "base", tmp_path / "work"
    (base / "site").mkdir(parents=True)
    (base / "chronicle.yml").write_text("x")
    set_aside(base / "site")
    checkout(base, work)
    assert sorted(p.name for p in work.iterdir()) == ["chronicle.yml"]
    (work / "site").mkdir()  # what the night built
    checkout(base, work)
    assert sorted(p.name for p in work.iterdir()) == ["chronicle.yml"]
    assert len(list((tmp_path / ".aside").iterdir())) == 1  # the previous copy, moved


def test_a_run_replaces_its_own_block_of_the_results_file_and_nothing_else(
        tmp_path: Path) -> None:
    # The latest figures have one home, bench/RESULTS.md; the journal around them is kept.
    results = tmp_path / "RESULTS.md"
    results.write_text("# journal\n<!-- bench:start -->\nold\n<!-- bench:end -->\nkept\n"
                       "<!-- speedups:start -->\nx\n<!-- speedups:end -->\n")
    record("bench", "python -m bench 100", ["ratio 0.65", "peak 249 MB"], 3360.0, results)
    text = results.read_text()
    assert text.startswith("# journal\n<!-- bench:start -->\nWritten by `python -m bench 100`")
    assert f"({os.cpu_count()} cores, 56 min)" in text
    assert "```text\nratio 0.65\npeak 249 MB\n```\n<!-- bench:end -->\nkept\n" in text
    assert "<!-- speedups:start -->\nx\n<!-- speedups:end -->" in text
    with pytest.raises(ValueError):
        replace_block("no markers", "bench", "x")


def test_a_report_prints_each_line_and_writes_them_into_its_block(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("<!-- pages:start -->\nold\n<!-- pages:end -->\n")
    report = Report("pages", "python -m bench pages 100")
    report.say("home 1.07x")
    report.say("day 1.01x")
    assert capsys.readouterr().out == "home 1.07x\nday 1.01x\n"
    report.write(results)
    text = results.read_text()
    assert "Written by `python -m bench pages 100`" in text and "old" not in text
    assert "```text\nhome 1.07x\nday 1.01x\n```\n<!-- pages:end -->" in text


def test_the_results_file_has_every_block() -> None:
    text = RESULTS.read_text(encoding="utf-8")
    for name in ("bench", "speedups", "engines", "pages"):
        assert replace_block(text, name, "x\n").count("x\n") >= 1
    assert "Written by `python -m bench" in block_text("python -m bench", ["a"], 60.0)
