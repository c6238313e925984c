"""The bench's results file (bench/RESULTS.md): each full run writes what it printed there.

`python -m bench` and `python -m bench.speedups` (both run by `make bench`) each own one
block of the file, between `<!-- NAME:start -->` and `<!-- NAME:end -->`, and replace it
whole with the run's date, command, machine and printed lines. Everything outside the
blocks (the journal: what each change did to the figures) is written by hand. The
documentation's benchmarks page includes the file; the figures live nowhere else.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def block_text(command: str, lines: Sequence[str], seconds: float,
               when: datetime | None = None) -> str:
    """Return a block's Markdown: when and how the run was made, then what it printed."""
    when = when or datetime.now(UTC)
    return (f"Written by `{command}` on {when:%Y-%m-%d %H:%M} UTC ({os.cpu_count()} cores, "
            f"{seconds / 60:.0f} min).\n\n```text\n" + "\n".join(lines) + "\n```\n")


def replace_block(text: str, name: str, body: str) -> str:
    """Return `text` with the block `name` holding `body`; ValueError without its markers."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.DOTALL)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"expected one {start} ... {end} block")
    return pattern.sub(lambda _: f"{start}\n{body}{end}", text)


def record(name: str, command: str, lines: Sequence[str], seconds: float,
           path: Path = RESULTS) -> None:
    """Write a run's printed lines into its block of the results file."""
    text = path.read_text(encoding="utf-8")
    path.write_text(replace_block(text, name, block_text(command, lines, seconds)),
                    encoding="utf-8")
    print(f"results written to {path} ({name} block)")


class Report:
    """What a bench run prints, line by line, kept for its block of the results file."""

    def __init__(self, name: str, command: str) -> None:
        self.name, self.command = name, command
        self.lines: list[str] = []
        self.began = time.monotonic()

    def say(self, line: str) -> None:
        print(line, flush=True)
        self.lines.append(line)

    def write(self, path: Path = RESULTS) -> None:
        """Write the run's lines into its block, with how long it took."""
        record(self.name, self.command, self.lines, time.monotonic() - self.began, path)
