"""The background copy of a build's static files (site/copier.py): the files mkdocs would
copy, and only those, are copied by a second process; mkdocs's own copy step waits for it;
a failure names the file; a failed build stops it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

from chronicle.executor import Executor
from chronicle.site.copier import CopiedFile, StaticCopy, copy_in_background
from chronicle.site.plugin import ChroniclePlugin


def _files(docs: Path, site: Path) -> Files:
    (docs / "data" / "s1").mkdir(parents=True)
    (docs / "data" / "s1" / "metrics.parquet").write_bytes(bytes(range(256)) * 40)
    (docs / "days").mkdir()
    (docs / "days" / "2026-01-02.json").write_text('{"day": 1}', encoding="utf-8")
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    (docs / "draft.png").write_bytes(b"png")

    def file(path: str, inclusion: InclusionLevel = InclusionLevel.INCLUDED) -> File:
        return File(path, str(docs), str(site), False, inclusion=inclusion)

    generated = File(  # what a plugin makes in memory: mkdocs writes it
        "api/index.json", None, str(site), False, inclusion=InclusionLevel.INCLUDED)
    generated.content_bytes = b"{}"
    generated.generated_by = "chronicle"
    return Files([file("index.md"), file("data/s1/metrics.parquet"),
                  file("days/2026-01-02.json"), file("draft.png", InclusionLevel.DRAFT),
                  generated])


def test_static_files_are_copied_by_the_second_process_and_mkdocs_waits(
        tmp_path: Path) -> None:
    docs, site = tmp_path / "docs", tmp_path / "site"
    with Executor(cores=2) as executor:
        files, copy = copy_in_background(_files(docs, site), executor)
        assert copy is not None
        _copied_by_the_second_process(files, docs, site)
    # Without the speed-up (or on one core), mkdocs copies them itself.
    original = _files(tmp_path / "docs2", tmp_path / "site2")
    for off in (Executor(cores=2, without=["copier"]), Executor(cores=1), None):
        assert copy_in_background(original, off) == (original, None)


def _copied_by_the_second_process(files: Files, docs: Path, site: Path) -> None:
    taken = sorted(f.src_uri for f in files if isinstance(f, CopiedFile))
    assert taken == ["data/s1/metrics.parquet", "days/2026-01-02.json"]
    # Pages, generated files and files left out of the build stay mkdocs's.
    assert [f.src_uri for f in files] == ["index.md", "data/s1/metrics.parquet",
                                          "days/2026-01-02.json", "draft.png",
                                          "api/index.json"]
    assert not any(isinstance(files.get_file_from_path(p), CopiedFile)
                   for p in ("index.md", "draft.png", "api/index.json"))
    # mkdocs's copy step: the first copy_file waits for every file.
    files.copy_static_files(dirty=False, inclusion=InclusionLevel.is_included)
    for rel in taken:
        assert (site / rel).read_bytes() == (docs / rel).read_bytes()
    assert (site / "api" / "index.json").read_bytes() == b"{}"
    assert not (site / "draft.png").exists()


def test_nothing_to_copy_starts_no_process(tmp_path: Path) -> None:
    docs, site = tmp_path / "docs", tmp_path / "site"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    files = Files([File("index.md", str(docs), str(site), False,
                        inclusion=InclusionLevel.INCLUDED)])
    with Executor(cores=2) as executor:
        assert copy_in_background(files, executor) == (files, None)


def test_a_file_that_cannot_be_copied_is_named(tmp_path: Path) -> None:
    source = tmp_path / "a.json"
    source.write_text("{}", encoding="utf-8")
    (tmp_path / "site").write_text("a file where the site folder should be", encoding="utf-8")
    copy = StaticCopy([(str(source), str(tmp_path / "site" / "days" / "a.json"))])
    with pytest.raises(PluginError) as err:
        copy.wait()
    assert str(source) in str(err.value)
    assert "Check the site folder's free space and permissions" in str(err.value)
    copy.wait()  # reported once; waiting again is a no-op


def test_a_failed_build_stops_the_copy(tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(b"x" * 1000)
    copy = StaticCopy([(str(source), str(tmp_path / "site" / f"{i}.bin"))
                       for i in range(20000)])
    proc = copy._proc
    assert proc is not None and proc.poll() is None
    plugin = ChroniclePlugin()
    plugin._copy = copy
    plugin.on_build_error(error=RuntimeError("a page failed"))
    assert proc.returncode is not None  # killed and reaped
    assert len(list((tmp_path / "site").glob("*.bin"))) < 20000
    assert not Path(copy._list).exists()
    assert plugin._copy is None


def test_the_child_sees_only_the_standard_library(tmp_path: Path) -> None:
    # -I -S: the copy must not depend on (or pay for) the venv's site-packages.
    source = tmp_path / "a"
    source.write_bytes(b"a")
    copy = StaticCopy([(str(source), str(tmp_path / "out" / "a"))])
    assert copy._proc is not None
    assert copy._proc.args[1:3] == ["-I", "-S"]  # type: ignore[index]
    copy.wait()
    assert (tmp_path / "out" / "a").read_bytes() == b"a"
    assert not os.path.exists(copy._list)


def test_without_a_process_to_copy_with_mkdocs_copies_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, site = tmp_path / "docs", tmp_path / "site"
    original = _files(docs, site)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    before = set(tmp_path.glob("chronicle-copy-*"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Executor(cores=2) as executor:
        files, copy = copy_in_background(original, executor)
    assert copy is None and files is original  # nothing handed over, no list left behind
    assert set(tmp_path.glob("chronicle-copy-*")) == before
    files.copy_static_files(dirty=False, inclusion=InclusionLevel.is_included)
    assert (site / "days" / "2026-01-02.json").read_bytes() == b'{"day": 1}'
