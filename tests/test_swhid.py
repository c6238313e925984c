"""SWHIDs of sealed files, computed without git and checked against git itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronicle.errors import StoreError
from chronicle.store.swhid import content_swhid, day_swhids, directory_swhid
from tests.support.git import git


def _tree(root: Path) -> None:
    """A day folder whose names sort differently in plain and in git order."""
    files = {
        "loss.vl.json": b'{"mark": "line"}\n',
        "loss.svg": b"<svg/>\n",
        "a.b": b"file named a.b\n",
        "a/inner.txt": b"inside a/\n",  # git compares the folder as "a/": after "a.b"
        "a0": b"after a/ in git order\n",
        "nested/deeper/x.png": bytes(range(256)),
        "empty.txt": b"",
        "中文.json": b"{}\n",
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def test_content_swhid_is_the_git_blob_id(tmp_path: Path) -> None:
    for i, data in enumerate([b"", b"hello\n", "2026-08-21 · 丢弃率\n".encode(),
                              bytes(range(256)) * 9]):
        path = tmp_path / f"f{i}"
        path.write_bytes(data)
        assert content_swhid(data) == "swh:1:cnt:" + git(tmp_path, "hash-object", str(path))
    # The empty file's, as Software Heritage lists it (git's well-known empty blob).
    assert content_swhid(b"") == "swh:1:cnt:e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_directory_swhid_is_the_git_tree_id(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    folder = repo / "days" / "2026-08-21"
    folder.mkdir(parents=True)
    _tree(folder)
    git(repo, "add", "-A")
    whole = git(repo, "write-tree")
    expected = git(repo, "rev-parse", f"{whole}:days/2026-08-21")
    assert directory_swhid(folder) == f"swh:1:dir:{expected}"
    assert directory_swhid(folder / "nested") == \
        "swh:1:dir:" + git(repo, "rev-parse", f"{whole}:days/2026-08-21/nested")
    (folder.parent / "2026-08-21.md").write_bytes(b"# Day 2\n")
    ids = day_swhids(folder.parent, "2026-08-21")
    assert ids.folder == f"swh:1:dir:{expected}"
    assert ids.page == "swh:1:cnt:" + git(repo, "hash-object", "days/2026-08-21.md")


def test_a_changed_byte_changes_the_swhids(tmp_path: Path) -> None:
    folder = tmp_path / "2026-08-21"
    folder.mkdir()
    _tree(folder)
    (tmp_path / "2026-08-21.md").write_bytes(b"# Day 2\nloss 2.31\n")
    before = day_swhids(tmp_path, "2026-08-21")
    (tmp_path / "2026-08-21.md").write_bytes(b"# Day 2\nloss 2.32\n")
    (folder / "nested" / "deeper" / "x.png").write_bytes(bytes(range(255)) + b"\0")
    after = day_swhids(tmp_path, "2026-08-21")
    assert after.page != before.page and after.folder != before.folder


def test_a_link_in_a_day_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "2026-08-21"
    folder.mkdir()
    (folder / "loss.svg").symlink_to("/etc/hostname")
    with pytest.raises(StoreError, match=r"loss\.svg: not a regular file"):
        directory_swhid(folder)
