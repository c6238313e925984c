"""The mkdocs side of a build's progress (site stage): a plugin `chronicle build` adds to
each edition's mkdocs build (build.py), saying each step as the chronicle plugin
and the engine end it (site/progress.py). It reads nothing and writes nothing."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import Files

from chronicle.site.progress import Steps

NAME = "chronicle-progress"  # its key among the build's plugins


class ProgressPlugin(BasePlugin):
    """Say an edition's steps: the chronicle plugin renders the sources and draws the
    charts in on_files (priorities 50 and -50), mkdocs converts and indexes the pages,
    the search and rss plugins write theirs in on_post_build (priority 0), then the
    chronicle plugin's post-build steps (priority -100)."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps

    @event_priority(-100)
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        pages = len(files.documentation_pages())
        self.steps.done(f"sources of {pages} pages rendered, charts drawn")
        return files

    @event_priority(-90)
    def _converted(self, *, config: MkDocsConfig) -> None:
        self.steps.done("pages converted and indexed for search, feeds written")

    @event_priority(-110)
    def _finished(self, *, config: MkDocsConfig) -> None:
        self.steps.done("post-build steps done (sealed sources, chart files, feed items, "
                        "sitemaps)")

    on_post_build = CombinedEvent(_converted, _finished)
