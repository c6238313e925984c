"""`chronicle verify --recompute`: re-derive every sealed day from the stored snapshots with
this code's own methods, and compare it with what was sealed (snapshot stage, read-only).

Plain `verify` proves that no byte changed since it was recorded in the hash chain; this
proves that what was recorded is what the stored data gives. For each snapshot that sealed
days, in order, it rebuilds what that snapshot computed when it was taken, from the store
alone: the store as the snapshot found it (`Store.before`: the snapshots before it, each
file checked against the chain) plus the snapshot's own stored files standing in for what
its sources returned (rows, run records, threads, pull requests, source statuses; the
hand-written failure records it stored). Then it runs the sealing code itself
(night.py `prepare_night`, seal.py `seal_days`): the evidence as of each day's
`figures_as_of`, summarize_day, write_summary, watch_day, provenance, render_day_files.
Nothing is computed a second way. It draws no chart: the sealed SVG/PNG files stand in for
the drawings (the specs they are drawn from are compared).

Each figure of a day JSON is compared under its method id (`provenance.figures[path]`,
declared in analysis/day_model.py): a figure sealed by another method than the code's is
*not comparable* (listed, not a failure); any other difference is a failure naming the day
and the figure. Floats are compared as JSON writes them (the same text), null equal to
null. The rest of a day (its prose, verdicts, thread updates, failure records, the page,
its chart specs) is compared byte for byte when the day's page version
(`provenance.page`, provenance.py DAY_PAGE) is the code's and every figure's method is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from chronicle.analysis.day_model import figures
from chronicle.config import CONFIG_NAME, RunConfig
from chronicle.snapshot.night import Night, Tonight, prepare_night
from chronicle.snapshot.plan import DaySeal, day_end
from chronicle.snapshot.provenance import DAY_PAGE, METHOD_PREFIX, Artifact
from chronicle.snapshot.seal import (
    FEED_IMAGES,
    Draw,
    Drawn,
    EditionInputs,
    SealInputs,
    seal_days,
    seal_editions,
)
from chronicle.store import SnapshotInfo, Store, dump_json
from chronicle.store.manifest import EDITION_PATH

# Failure records a snapshot derives itself (from the rows, from issue threads); the others
# (failures.yml, a source's own) are read as the snapshot stored them.
DERIVED_SOURCES = ("metrics", "github")
# The order fetch.py asks the sources in (a day sealed without two of them names both so).
FETCH_ORDER = ("wandb", "github")
# The code's method of each figure: dotted path -> method id.
METHODS = {path: METHOD_PREFIX + fig.method for path, fig in figures()}
_BY_LENGTH = sorted(METHODS, key=len, reverse=True)
_SHOWN = 80  # characters of a value quoted in a finding
# The words an edition's page was rendered with, in its front matter (day_edition.py).
_WORDS = re.compile(rb"^  words: ([0-9a-f]{64})$", re.MULTILINE)


@dataclass(frozen=True)
class Finding:
    """One thing recompute found: where (a day or a snapshot), what (figure, file), why."""

    where: str
    what: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}: {self.message}" if self.what else \
            f"{self.where}: {self.message}"


@dataclass
class RecomputeReport:
    """What `verify --recompute` compared and found."""

    days: int = 0  # sealed days recomputed
    figures: int = 0  # figure values compared
    pages: int = 0  # days whose files were compared byte for byte
    problems: list[Finding] = field(default_factory=list)
    not_comparable: list[Finding] = field(default_factory=list)
    pages_skipped: dict[str, list[str]] = field(default_factory=dict)  # why -> days


def recompute_days(config: RunConfig, store: Store) -> RecomputeReport:
    """Recompute every day sealed in `store` and compare it with its sealed files.

    `store` must have passed `verify_store` (a file that fails its check is a StoreError).
    """
    report = RecomputeReport()
    sealed_before: set[str] = set()
    view: Store | None = None
    for snap in store.snapshots():
        if not snap.sealed and not snap.editions and not _touches(store, snap, sealed_before):
            continue
        view = (view or store).before(snap.id)
        night = prepare_night(config, view, _stored_tonight(store, snap))
        _compare_corrections(snap, night, report)
        if snap.sealed:
            _recompute_snapshot(config, store, view, snap, night, report)
        if snap.editions:
            _recompute_editions(config, store, view, snap, night, report)
        sealed_before |= set(snap.sealed)
    return report


def _touches(store: Store, snap: SnapshotInfo, sealed: set[str]) -> bool:
    """Whether a snapshot that sealed nothing found corrections or stored rows of a day
    already sealed (whose corrections the next sealed day announces)."""
    if snap.manifest.get("corrections"):
        return True
    found = store.metrics_range(snap) if "metrics.parquet" in snap.files else None
    newest = max((date.fromisoformat(d) for d in sealed), default=None)
    return found is not None and newest is not None and \
        found[0] < day_end(newest).timestamp()


def _stored_tonight(store: Store, snap: SnapshotInfo) -> Tonight:
    """Return a stored snapshot as `prepare_night` takes the one being taken."""
    table = store.metrics_of(snap)
    statuses = sorted(snap.sources.values(), key=lambda s: (
        FETCH_ORDER.index(s.name) if s.name in FETCH_ORDER else len(FETCH_ORDER), s.name))
    given = [f for f in store.failures_of(snap) if f.source not in DERIVED_SOURCES]
    # A snapshot taken before the run's state was tracked is replayed without it: its
    # days were sealed (and its open gaps recorded) as if no run ever finished.
    sealed = [store.sealed_day(date.fromisoformat(day)) or {} for day in snap.sealed]
    states = not sealed or any("run_state" in day for day in sealed)
    # ...and one taken before a sealing rule by the rules it had (snapshot/plan.py).
    sealing = snap.manifest.get("sealing")
    return Tonight(snap.id, snap.taken_at, table,
                   table if table is not None and table.num_rows else None,
                   store.runs_of(snap), store.threads_of(snap), store.pulls_of(snap),
                   tuple(statuses), given, stored=snap, states=states,
                   sealing=sealing if isinstance(sealing, int) else 1)


def _compare_corrections(snap: SnapshotInfo, night: Night, report: RecomputeReport) -> None:
    """The corrections a snapshot recorded are the ones its rows give."""
    recorded = snap.manifest.get("corrections") or []
    if _canonical(recorded) != _canonical(night.corrections):
        got = sorted(c.get("id", "?") for c in night.corrections)
        had = sorted(c.get("id", "?") for c in recorded if isinstance(c, Mapping))
        report.problems.append(Finding(
            f"snapshot {snap.id}", "corrections",
            f"the manifest records {_show(had)}, the stored rows give {_show(got)}"))


def _recompute_snapshot(config: RunConfig, store: Store, view: Store, snap: SnapshotInfo,
                        night: Night, report: RecomputeReport) -> None:
    """Seal again, in memory, the days `snap` sealed; compare each with its files."""
    planned = {d.day.isoformat(): d for d in night.plan.ready}
    for day in sorted(set(planned) - set(snap.sealed)):
        report.problems.append(Finding(
            f"day {day}", "", f"its data was complete when snapshot {snap.id} was taken, "
            "but that snapshot's manifest does not seal it"))
    days: list[DaySeal] = []
    for day in sorted(snap.sealed):
        if day in planned:
            days.append(planned[day])
            continue
        report.problems.append(Finding(
            f"day {day}", "", f"sealed by snapshot {snap.id}, but the store as that snapshot "
            "found it does not let it seal the day then (a source had not answered since "
            "the day ended, or the day had not closed)"))
    if not days:
        return
    sealed_json = {d.day.isoformat(): store.sealed_day(d.day) or {} for d in days}
    config_changed = _use_sealed_config(night, sealed_json.values())
    recomputed = seal_days(SealInputs(
        config, view, snap.taken_at, snap.id, tuple(days), night.evidence,
        bool(snap.manifest.get("backfilled", False)), context=night.context,
        corrections=tuple(view.pending_corrections() + night.corrections),
        changes=night.changes, draw=_sealed_drawings(store), states=night.tonight.states,
        languages=_languages(snap.sealed)))
    for d in days:
        day = d.day.isoformat()
        report.days += 1
        _compare_day(store, day, sealed_json[day], snap.sealed[day], recomputed[day],
                     config_changed, report)


def _recompute_editions(config: RunConfig, store: Store, view: Store, snap: SnapshotInfo,
                        night: Night, report: RecomputeReport) -> None:
    """Render again, in memory, the editions `snap` sealed later (of days sealed before
    it); compare each with its files."""
    remade = seal_editions(EditionInputs(
        config, view, snap.id, night.changes, draw=_sealed_drawings(store),
        days=tuple(sorted(snap.editions)), languages=_languages(snap.editions)))
    for day, sealed_files in sorted(snap.editions.items()):
        where = f"day {day}"
        files = remade.get(day, {})
        version = (store.sealed_day(date.fromisoformat(day)) or {}).get(
            "provenance", {}).get("page")
        if version != DAY_PAGE:
            report.pages_skipped.setdefault(
                f"an edition sealed later of a day of page version {version}, the code's "
                f"is {DAY_PAGE}", []).append(day)
            continue
        report.pages += 1
        _compare_files(store, where, sealed_files, files, False, report)


def _languages(sealed: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """Return the languages of the editions among the files a manifest seals."""
    return tuple(sorted({rel.split("/")[1] for files in sealed.values() for rel in files
                         if EDITION_PATH.fullmatch(rel)}))


def _use_sealed_config(night: Night, days: Any) -> bool:
    """Cite the chronicle.yml the days were sealed with when it is not today's (its
    figures are still recomputed with today's); return whether it changed."""
    for day in days:
        for entry in ((day.get("provenance") or {}).get("figures") or {}).values():
            for a in entry.get("artifacts") or ():
                if a.get("path") != CONFIG_NAME:
                    continue
                current = night.context.config
                if current is not None and current.sha256 == a.get("sha256"):
                    return False
                night.context.config = Artifact(CONFIG_NAME, str(a.get("sha256")),
                                                int(a.get("size") or 0))
                return True
    return False


def _sealed_drawings(store: Store) -> Draw:
    """The sealed SVG (and feed PNG) of each chart, in place of drawing it again."""
    def draw(folder: str, charts: dict[str, dict[str, Any]]) -> Drawn:
        svgs = {n: (store.sealed_bytes(f"{folder}/{n}.svg") or b"").decode("utf-8", "replace")
                for n in charts}
        pngs = {n: store.sealed_bytes(f"{folder}/{n}.png") or b"" for n in charts
                if n in FEED_IMAGES}
        return lambda: (svgs, pngs)
    return draw


def _compare_day(store: Store, day: str, sealed: Mapping[str, Any],
                 sealed_files: Mapping[str, Any], files: Mapping[str, bytes],
                 config_changed: bool, report: RecomputeReport) -> None:
    where = f"day {day}"
    prov = sealed.get("provenance")
    if not isinstance(prov, Mapping):
        report.not_comparable.append(Finding(
            where, "", "sealed before chronicle recorded each figure's method (no "
            "provenance): none of its figures is comparable"))
        report.pages_skipped.setdefault("sealed before provenance", []).append(day)
        return
    now = json.loads(files[f"days/{day}.json"])
    methods = _sealed_methods(sealed, prov)
    comparable = set()
    for path, current in METHODS.items():
        then = methods.get(path, current)
        if path not in methods and _has(now, path):
            report.not_comparable.append(Finding(
                where, path, f"not in the day as sealed (a figure added since, {current})"))
        elif then != current:
            report.not_comparable.append(Finding(
                where, path, f"sealed by {then}, the code's method is {current}"))
        else:
            comparable.add(path)
    page_ok = prov.get("page") == DAY_PAGE and len(comparable) == len(METHODS) \
        and not config_changed
    if not page_ok:
        why = ("chronicle.yml changed since it was sealed" if config_changed
               else "a figure's method changed" if len(comparable) != len(METHODS)
               else "sealed before page versions were recorded" if not prov.get("page")
               else f"page version {prov.get('page')}, the code's is {DAY_PAGE}")
        report.pages_skipped.setdefault(why, []).append(day)
    report.figures += len(comparable)
    reported: set[str] = set()
    left, right = _leaves(sealed), _leaves(now)
    for path in sorted(set(left) | set(right)):
        if left.get(path) == right.get(path):
            continue
        figure = _figure_of(path)
        if figure is not None:
            if figure in comparable and figure not in reported:
                reported.add(figure)
                report.problems.append(Finding(where, figure, _figure_difference(
                    figure, sealed, now) + (" (chronicle.yml changed since the day was "
                    "sealed: recompute with that version, from git)" if config_changed
                    else "")))
            continue
        top = path.split(".")[0]
        if page_ok and top not in reported:
            reported.add(top)
            report.problems.append(Finding(where, top, (
                f"{path}: sealed {_clip(left.get(path, 'nothing'))}, recomputed "
                f"{_clip(right.get(path, 'nothing'))}")))
    if page_ok:
        report.pages += 1
        _compare_files(store, where, sealed_files, files, bool(reported), report)


def _compare_files(store: Store, where: str, sealed_files: Mapping[str, Any],
                   files: Mapping[str, bytes], json_reported: bool,
                   report: RecomputeReport) -> None:
    """Compare the page, JSON and chart specs byte for byte (and the set of files)."""
    for rel in sorted(set(sealed_files) ^ set(files)):
        said = "sealed but not made by the code" if rel in sealed_files else \
            "made by the code but not sealed"
        report.problems.append(Finding(where, rel, said))
    other_words = _other_words(store, sealed_files, files)
    for code in sorted(other_words):
        report.pages_skipped.setdefault(
            f"its {code} page sealed with other words (a translation changed since)",
            []).append(where.removeprefix("day "))
    for rel in sorted(set(sealed_files) & set(files)):
        if rel.endswith((".svg", ".png")) or (rel.endswith(".json") and json_reported
                                              and not rel.endswith(".vl.json")):
            continue  # drawings stand in as sealed; the JSON's differences are named above
        if EDITION_PATH.fullmatch(rel) and rel.split("/")[1] in other_words:
            continue  # an edition sealed with other words: said once, below
        blob = store.sealed_bytes(rel) or b""
        if blob != files[rel]:
            report.problems.append(Finding(where, rel, _first_difference(blob, files[rel])))


def _other_words(store: Store, sealed_files: Mapping[str, Any],
                 files: Mapping[str, bytes]) -> set[str]:
    """Return the languages whose sealed edition page was rendered with other words than
    the code's catalog and chronicle.yml give now (a translation fixed since): its files
    are not comparable byte for byte."""
    out = set()
    for rel in sealed_files:
        if rel in files and rel.endswith(".md") and EDITION_PATH.fullmatch(rel):
            then = _WORDS.search(store.sealed_bytes(rel) or b"")
            now = _WORDS.search(files[rel])
            if then is None or now is None or then.group(1) != now.group(1):
                out.add(rel.split("/")[1])
    return out


def _figure_difference(figure: str, sealed: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """Say how a figure differs: its value, or else the stored files it cites."""
    then, value = _at(sealed, figure), _at(now, figure)
    if _canonical(then) != _canonical(value):
        return f"sealed {_show(then)}, recomputed {_show(value)} ({METHODS[figure]})"
    cited = [_citations(doc, figure) for doc in (sealed, now)]
    moved = sorted(set(cited[0]) ^ set(cited[1]))
    return (f"its provenance differs: the sealed day cites "
            f"{_show(sorted(set(cited[0]) - set(cited[1])))}, the store gives "
            f"{_show(sorted(set(cited[1]) - set(cited[0])))}" if moved else
            "its provenance differs (method, kind or inputs)")


def _citations(doc: Mapping[str, Any], figure: str) -> list[str]:
    entry = ((doc.get("provenance") or {}).get("figures") or {}).get(figure) or {}
    return [f"{a.get('path')} {str(a.get('sha256'))[:12]}…" for a in entry.get("artifacts") or ()
            if isinstance(a, Mapping)]


def _first_difference(sealed: bytes, made: bytes) -> str:
    a, b = sealed.decode("utf-8", "replace").splitlines(), made.decode("utf-8", "replace") \
        .splitlines()
    for n, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return f"differs from the page rendered from its figures at line {n}: sealed " \
                   f"{_show(x)}, rendered {_show(y)}"
    return f"differs from the page rendered from its figures: {len(a)} lines sealed, " \
           f"{len(b)} rendered"


def _sealed_methods(sealed: Mapping[str, Any], prov: Mapping[str, Any]) -> dict[str, str]:
    """Return the method id each figure of the sealed day was computed by.

    A figure that was null had no provenance entry: it counts as the code's method (there
    is no sign it differed). A figure not in the day at all has none.
    """
    entries = prov.get("figures") or {}
    out = {}
    for path, current in METHODS.items():
        entry = entries.get(path)
        if isinstance(entry, Mapping):
            out[path] = str(entry.get("method") or entry.get("read_by") or "")
        elif _has(sealed, path):
            out[path] = current
    return out


def _leaves(node: Any, path: str = "") -> dict[str, str]:
    """Return every leaf of a parsed JSON document as its JSON text, by dotted path."""
    if isinstance(node, Mapping) and node:
        items: Any = node.items()
    elif isinstance(node, list) and node:
        items = enumerate(node)
    else:
        return {path: json.dumps(node, sort_keys=True, ensure_ascii=False)}
    out: dict[str, str] = {}
    for key, value in items:
        out.update(_leaves(value, f"{path}.{key}" if path else str(key)))
    return out


def _figure_of(path: str) -> str | None:
    """Return the declared figure a dotted path belongs to (its value or its provenance)."""
    rest = path.removeprefix("provenance.figures.")
    for figure in _BY_LENGTH:
        if rest == figure or rest.startswith(figure + "."):
            return figure
    return None


def _has(doc: Any, path: str) -> bool:
    node = doc
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _at(doc: Any, path: str) -> Any:
    node = doc
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _canonical(value: Any) -> bytes:
    return dump_json(value)


def _show(value: Any) -> str:
    return _clip(json.dumps(value, sort_keys=True, ensure_ascii=False))


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
