"""chronicle/files/atomic.py: a file is written whole or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import pytest

from chronicle.files.atomic import write_atomic


def test_a_file_is_replaced_whole_with_the_mode_asked(tmp_path: Path) -> None:
    target = tmp_path / "bundle.js"
    target.write_text("old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o644  # mkstemp's 0600 is not left
    write_atomic(target, lambda sink: sink.write(b"streamed"), mode=0o600)
    assert target.read_bytes() == b"streamed" and target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["bundle.js"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "copy.arrow"
    target.write_bytes(b"old copy")

    def half(sink: BinaryIO) -> None:
        sink.write(b"half of a ")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, half)
    assert target.read_bytes() == b"old copy"
    assert [p.name for p in tmp_path.iterdir()] == ["copy.arrow"]
