"""What a Zensical build's child process runs: `zensical.build`, and nothing else of
chronicle's.

The child is `python -m chronicle.executor`, which imports the module of the function it is
sent; one in chronicle.site would import the whole build path (Altair, mkdocs, Material,
jieba: much of every Zensical build's start, twice a night). So this module sits outside
it, like chronicle/workers/draw.py for the render workers, and imports nothing from chronicle.
Zensical is called through its public API alone (`zensical.build`).
"""

from __future__ import annotations

import os
from multiprocessing.connection import Connection


def build(conn: Connection, config_file: str, log: str) -> None:
    """In the child: build with Zensical, its output into `log`; answer "done" or why not."""
    with open(log, "wb") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    try:
        import zensical

        zensical.build(config_file, {"clean": False, "strict": True})
    except BaseException as err:  # anything Zensical raises is its answer
        conn.send(f"{type(err).__name__}: {err}".strip())
        return
    conn.send("done")
