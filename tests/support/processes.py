"""The processes a command left running, read from /proc (Linux; psutil is no dependency).

A command started with `start_new_session=True` leads a session of its own: every
process it starts is in that session unless it starts one itself, and stays there when
the command is killed and the kernel re-parents it. So what a killed command left
running is what still runs in its session.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

PROC = Path("/proc")
LEFT_AFTER_SECONDS = 4.0  # issue #24: nothing runs 4 s after its parent was killed


@dataclass(frozen=True)
class Process:
    """One running process: its pid, parent, session and command line."""

    pid: int
    ppid: int
    session: int
    cmdline: str


def running() -> list[Process]:
    """Return every process that runs (zombies, already ended, are not counted)."""
    out = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                "utf-8", "replace").strip()
        except OSError:
            continue  # it ended while we looked
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] in ("Z", "X"):
            continue
        out.append(Process(int(entry.name), int(fields[1]), int(fields[3]), cmdline))
    return out


def in_session(session: int) -> list[Process]:
    """Return the processes that run in `session` (a killed command's, by its pid)."""
    return [p for p in running() if p.session == session]


def children(pid: int | None = None) -> list[Process]:
    """Return the processes whose parent is `pid` (default: this process)."""
    parent = os.getpid() if pid is None else pid
    return [p for p in running() if p.ppid == parent]


def left_in_session(session: int, seconds: float = LEFT_AFTER_SECONDS) -> list[Process]:
    """Return what still runs in `session` once none does or `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while (left := in_session(session)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def sleep_in_child(conn: Connection) -> None:
    """A child of an Executor that does nothing for ten minutes (chronicle/executor.py
    `Executor.start`): what ends it sooner is its parent's end, or the executor's."""
    time.sleep(600)


def done_then_gone(conn: Connection) -> None:
    """A Zensical build's child that says "done" and ends before it sends the scans it was
    given (site/engines/zensical/build.py `_wait`): killed, or out of memory, at that
    moment."""
    conn.send("done")
