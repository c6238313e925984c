"""What a build says while it runs (site stage): one line per step of an edition, so a
first build (minutes for a long run, on two cores) is not silence.

A command hands the build a `say` callback (cli.py: a line on stderr); the build says each
step of each edition as it ends, with the seconds since the edition started: its sources
rendered and charts drawn, its pages built by the engine, its post-build steps done
(site/publish/finish.py). A translated edition building in a process of its own sends its
lines to the command, which says them as they come
(site/engines/mkdocs/edition_process.py). Nothing here touches a built file: a build that
says nothing is the same bytes. No mkdocs import here (a Zensical build uses this module
too): the mkdocs side is site/engines/mkdocs/progress_plugin.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Say = Callable[[str], None]


class Steps:
    """The steps of one edition's build, each said as it ends."""

    def __init__(self, say: Say, code: str, engine: str) -> None:
        self.say, self.code, self.engine = say, code, engine
        self.started = time.perf_counter()
        say(f"{code} edition: building with {engine}")

    def done(self, step: str) -> None:
        """Say that `step` is done, with the seconds since the edition started."""
        self.say(f"{self.code} edition: {step} ({time.perf_counter() - self.started:.1f} s)")
