"""Where a chronicle build spends its time beyond plain mkdocs: one profiled build.

Run as `python -m bench.profile_build DIR`; prints the cumulative seconds of the build's
parts (reading the store, each generated page group, the page hooks, the rss and search
plugins, Markdown and templates) so the next person knows where to look.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

from chronicle.config import load_config
from chronicle.site.build import build_site

# (label, module path fragment, function name): cumulative time of these entry points.
PARTS = (
    ("read the store (inputs)", "chronicle/site/outputs/inputs.py", "load_inputs"),
    ("generated pages, all", "chronicle/site/outputs/pages.py", "site_files"),
    ("  home", "chronicle/render/home.py", "render_home"),
    ("  charts page", "chronicle/render/charts_page.py", "charts_page"),
    ("  watch pages", "chronicle/render/run_pages.py", "run_pages"),
    ("    verdicts of every day", "chronicle/analysis/verdicts.py", "watch_history"),
    ("  threads", "chronicle/render/threads.py", "thread_pages"),
    ("  citations, chain, feeds", "chronicle/site/outputs/citable.py", "archive_files"),
    ("  API", "chronicle/site/outputs/api.py", "api_files"),
    ("  SVG renders in the build process", "chronicle/render/svg.py", "render_svg"),
    ("  vega bundle", "chronicle/render/svg.py", "javascript_bundle"),
    ("other editions: day pages (.cache/chronicle or rendered)",
     "chronicle/site/outputs/editions.py",
     "edition_days"),
    ("  rendered", "chronicle/render/day_edition.py", "edition_day_page"),
    ("static SVGs (read, or drawn by the render workers)", "chronicle/site/outputs/statics.py",
     "svgs"),
    ("page hook: cite + next day", "chronicle/site/engines/mkdocs/plugin.py", "on_page_markdown"),
    ("page hook: feed links", "chronicle/site/engines/mkdocs/plugin.py", "on_post_page"),
    ("post-build, all", "chronicle/site/engines/mkdocs/plugin.py", "on_post_build"),
    ("rss plugin: pages", "mkdocs_rss_plugin/plugin.py", "on_page_content"),
    ("rss plugin: feeds", "mkdocs_rss_plugin/plugin.py", "on_post_build"),
    ("search plugin: pages (jieba for zh)", "material/plugins/search/plugin.py",
     "on_page_context"),
    ("search plugin: index", "material/plugins/search/plugin.py", "on_post_build"),
    # docs/...: mkdocs's or ProperDocs' (the core the build runs on,
    # chronicle/site/engines/mkdocs/core.py).
    ("Markdown -> HTML (all pages)", "docs/structure/pages.py", "render"),
    ("page templates (all pages)", "docs/commands/build.py", "_build_page"),
)


def profile(root: Path) -> list[tuple[str, float]]:
    """Build the chronicle at `root` under cProfile; return (part, cumulative s) rows."""
    config = load_config(root)
    prof = cProfile.Profile()
    with tempfile.TemporaryDirectory() as tmp:
        prof.enable()
        # Every edition in this process: `chronicle build` builds a second language in a
        # process of its own (site/engines/mkdocs/edition_process.py), which cProfile here
        # would not see.
        build_site(config, Path(tmp) / "site", beside=False)
        prof.disable()
    stats = pstats.Stats(prof)
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in table.values())  # all own time = the build's wall in one thread
    rows = [("whole build (profiled)", total)]
    for label, fragment, name in PARTS:
        ct = sum(v[3] for (file, _, func), v in table.items()
                 if func == name and fragment in file.replace("\\", "/"))
        rows.append((label, ct))
    return rows


def main() -> None:
    rows = profile(Path(sys.argv[1]))
    width = max(len(label) for label, _ in rows)
    for label, seconds in rows:
        print(f"  {label:<{width}}  {seconds:6.2f} s")


if __name__ == "__main__":
    main()
