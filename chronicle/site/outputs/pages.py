"""The page registry: every run-wide page a build generates, in nav order (site stage).

One list feeds both the navigation and the generated files, so a page cannot be built
without being in the nav (or the other way round). A chronicle keeps the mkdocs.yml it was
scaffolded with: pages a later version adds join its nav at build time, or `--strict`
would fail on "pages not included in the nav".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronicle.render.archive_pages import about_page, archive_page, failures_page
from chronicle.render.changes_page import changes_json, changes_page, sealed_dates
from chronicle.render.charts_page import charts_page
from chronicle.render.home import HomeInputs, render_home
from chronicle.render.i18n import N_, Language
from chronicle.render.run_pages import run_pages
from chronicle.render.signals import signals_json
from chronicle.render.svg import javascript_bundle
from chronicle.render.threads import thread_pages
from chronicle.site.outputs.api import api_files
from chronicle.site.outputs.citable import archive_files
from chronicle.site.outputs.inputs import BuildInputs

Files = dict[str, str | bytes]


@dataclass(frozen=True)
class Section:
    """A nav entry and the builder of the files behind it (several pages may share one)."""

    title: str
    path: str
    build: Callable[[BuildInputs, Language], Files] | None = None


def _home(i: BuildInputs, lang: Language) -> Files:
    out: Files = {}
    out["index.md"] = render_home(HomeInputs(
        i.config, i.days, i.series, i.failures, i.stale, i.latest, i.history, i.runs,
        waiting=i.waiting, head_sha256=i.latest.manifest_sha256 if i.latest else None,
        state=i.state, sections=[(lang.gettext(s.title), s.path) for s in SECTIONS
                                 if s.path != "index.md"], ledger=i.ledger), out,
        lang)
    records = i.history[-1]["risks"] if i.history else []
    out["api/signals.json"] = json.dumps(
        signals_json(i.signals, records, lang, configured=i.config.watch.prediction is not None),
        ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    return out


def _run_pages(i: BuildInputs, lang: Language) -> Files:
    latest = i.latest
    return run_pages(i.config, i.series, i.failures, i.days, i.runs,
                     (i.config_artifact(), i.manifest_artifact()),
                     latest.id if latest else None, lang, i.changes, i.history, i.state,
                     i.ledger)


def _changes(i: BuildInputs, lang: Language) -> Files:
    sealed = sealed_dates(i.days)
    return {"changes.md": changes_page(i.changes, sealed, i.config, lang,
                                       [e for e in i.events if e["kind"] == "decision"]),
            "api/changes.json": changes_json(i.changes, i.config, sealed)}


# Nav order. Pages whose files come from a shared builder (run_pages writes six, the
# archive files write corrections.md and the feeds) name it once, on their first entry.
SECTIONS: tuple[Section, ...] = (
    Section(N_("Home"), "index.md", _home),
    Section(N_("Archive"), "archive.md",
            lambda i, lang: {"archive.md": archive_page(i.days, lang)}),
    Section(N_("Charts"), "charts.md",
            lambda i, lang: charts_page(i.config, i.series, i.failures, i.days, lang,
                                        i.changes.changes)),
    Section(N_("Threads"), "threads/index.md",
            lambda i, lang: thread_pages(i.threads, i.snapshots, lang)),
    Section(N_("Failures"), "failures.md", lambda i, lang: {"failures.md": failures_page(
        i.failures, i.latest.id if i.latest else None, lang, i.ledger)}),
    Section(N_("Changes"), "changes.md", _changes),
    Section(N_("Corrections"), "corrections.md", archive_files),
    Section(N_("Health"), "health.md", _run_pages),
    Section(N_("Prediction"), "prediction.md"),
    Section(N_("Risks"), "risks.md"),
    Section(N_("Throughput"), "throughput.md"),
    Section(N_("Cost"), "cost.md"),
    Section(N_("Claims"), "claims.md"),
    Section(N_("About"), "about.md", lambda i, lang: {"about.md": about_page(i.config, lang)}),
)
BUNDLE = "assets/javascripts/vega-bundle.js"
# The site's own style and script ship with the package, like the vega bundle, so an
# upgrade restyles every chronicle (a copy a scaffold once put under docs/ is replaced).
STYLESHEET, SCRIPT = "assets/stylesheets/chronicle.css", "assets/javascripts/chronicle.js"
ASSETS = {STYLESHEET: "chronicle.css", SCRIPT: "chronicle.js"}
ASSET_DIR = Path(__file__).parents[1] / "assets"
THEME_DIR = Path(__file__).parents[1] / "theme"  # Material template overrides


def nav() -> list[dict[str, str]]:
    """Return the navigation of every generated page, in order."""
    return [{s.title: s.path} for s in SECTIONS]


def complete_nav(nav_now: list[Any] | None) -> list[Any]:
    """Return `nav_now` with every generated page it lacks appended (None: the whole nav)."""
    if nav_now is None:
        return nav()
    present = nav_paths(nav_now)
    return [*nav_now, *({s.title: s.path} for s in SECTIONS if s.path not in present)]


def nav_paths(node: Any) -> set[str]:
    """Return every path a mkdocs.yml `nav` (or a part of it) names, titles aside."""
    if isinstance(node, str):
        return {node}
    if isinstance(node, dict):
        return set().union(*(nav_paths(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(nav_paths(v) for v in node)) if node else set()
    return set()


def site_files(inputs: BuildInputs, lang: Language, bundle: bool = True) -> Files:
    """Return every generated file of the `lang` edition (path relative to docs/ ->
    content); the API and assets too (a translated edition leaves those to the root)."""
    files: Files = {}
    for section in SECTIONS:
        if section.build is not None:
            files.update(section.build(inputs, lang))
    files.update(api_files(inputs))
    missing = [s.path for s in SECTIONS if s.path not in files]
    if missing:  # a registry entry whose builder was forgotten
        raise RuntimeError(f"no builder wrote {', '.join(missing)}")
    for path, name in ASSETS.items():
        files[path] = (ASSET_DIR / name).read_text(encoding="utf-8")
    if bundle:
        files[BUNDLE] = javascript_bundle()
    return files
