"""Publishing a build whole (site/publish/staging.py): the staged site takes the published
one's place at once, what killed builds left is removed, and a site a build moved away is
put back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chronicle.errors import ChronicleError
from chronicle.site.publish import staging as publish
from chronicle.site.publish.staging import clear_leftovers, edition_staging, staging_dir


def _site(folder: Path, marker: str) -> Path:
    (folder / "days").mkdir(parents=True)
    (folder / "index.html").write_text(marker, encoding="utf-8")
    (folder / "days" / "a.html").write_text(marker, encoding="utf-8")
    return folder


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_staging_folders_sit_beside_the_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert staging_dir(site) == tmp_path / f".site.building-{os.getpid()}"
    assert edition_staging(site, "zh") == tmp_path / f".site.building-{os.getpid()}-zh"


def test_a_first_site_is_moved_into_place(tmp_path: Path) -> None:
    new = _site(staging_dir(tmp_path / "site"), "new")
    publish.publish(new, tmp_path / "site")
    assert (tmp_path / "site" / "index.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_published_site_is_replaced_whole(tmp_path: Path, exchange: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if not exchange:  # a system without renameat2(RENAME_EXCHANGE)
        monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    site = _site(tmp_path / "site", "old")
    (site / "stale.html").write_text("gone in the new site")
    new = _site(staging_dir(site), "new")
    publish.publish(new, site)
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*")) == [
        "days", "days/a.html", "index.html"]
    assert (site / "days" / "a.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # the old one removed


def test_a_site_that_cannot_be_replaced_is_left_as_it_was(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    site = _site(tmp_path / "site", "old")
    new = _site(staging_dir(site), "new")
    monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    real_rename = os.rename

    def failing_rename(src: Path, dst: Path) -> None:
        if Path(src) == new:
            raise OSError(16, "Device or resource busy")
        real_rename(src, dst)

    monkeypatch.setattr(publish.os, "rename", failing_rename)
    with pytest.raises(ChronicleError, match=r"could not replace it \(Device or resource "
                                             r"busy\); the site folder is as it was"):
        publish.publish(new, site)
    assert (site / "index.html").read_text() == "old"


def test_what_killed_builds_left_is_removed_and_a_moved_site_put_back(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dead, alive = _dead_pid(), os.getppid()
    _site(tmp_path / f".site.old-{dead}", "previous")  # killed between its two renames
    _site(tmp_path / f".site.building-{dead}", "half")
    _site(tmp_path / f".site.building-{dead}-zh", "half")
    _site(tmp_path / f".site.building-{alive}", "another build, still running")
    _site(tmp_path / f".other.building-{dead}", "another site's")
    clear_leftovers(site)
    assert (site / "index.html").read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f".other.building-{dead}", f".site.building-{alive}", "site"]
    # With the site in place, a moved-away copy is a leftover like any other.
    _site(tmp_path / f".site.old-{dead}", "older")
    clear_leftovers(site)
    assert (site / "index.html").read_text() == "previous"
    assert not (tmp_path / f".site.old-{dead}").exists()
