"""Run-wide pages, written at build time by mkdocs-gen-files from the store (no network).

The only module that imports mkdocs: `generate()` is called by docs/gen_pages.py, and
docs/hooks.py re-exports `on_config` / `on_page_markdown` (chronicle.yml is the one
config; the built site is a pure function of the store and the config).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from chronicle.analysis.series import Series, build_series, day_of_run
from chronicle.config import RunConfig, load_config
from chronicle.errors import ChronicleError
from chronicle.models import FailureRecord, iso
from chronicle.render import charts as ch
from chronicle.render import render
from chronicle.render.day import chart_embed, chart_title, one_line
from chronicle.render.day_charts import events_for
from chronicle.render.run_pages import watch_pages
from chronicle.render.svg import javascript_bundle, render_svg
from chronicle.render.threads import thread_pages
from chronicle.site.citable import alternate_links, archive_files, day_sections
from chronicle.store import Store, sha256_file

log = logging.getLogger("mkdocs.plugins.chronicle")
ETA_WINDOW_DAYS = 7
_DAY_PAGE = re.compile(r"^days/(\d{4}-\d{2}-\d{2})\.md$")
# Per build: the run config and store, read once for the hooks below (reset in on_config).
_BUILD: dict[str, Any] = {}


# -- mkdocs entry points -------------------------------------------------------------


def load_run_config(mkdocs_config: MkDocsConfig) -> RunConfig:
    """Return the RunConfig of the chronicle beside mkdocs.yml; errors become PluginError."""
    try:
        return load_config(Path(mkdocs_config.config_file_path).resolve().parent)
    except ChronicleError as err:
        raise PluginError(str(err)) from err


# Run-wide pages this version generates, in nav order. A chronicle keeps the mkdocs.yml
# it was scaffolded with; pages added by a later chronicle join its nav at build time, or
# `--strict` would fail on "pages not included in the nav".
SITE_PAGES: tuple[tuple[str, str], ...] = (
    ("Home", "index.md"), ("Archive", "archive.md"), ("Charts", "charts.md"),
    ("Threads", "threads/index.md"), ("Failures", "failures.md"),
    ("Corrections", "corrections.md"), ("Health", "health.md"),
    ("Prediction", "prediction.md"), ("Risks", "risks.md"), ("Throughput", "throughput.md"),
    ("Cost", "cost.md"), ("Claims", "claims.md"), ("About", "about.md"),
)


def _nav_paths(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_nav_paths(v) for v in nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*(_nav_paths(v) for v in nav)) if nav else set()
    return set()


def complete_nav(nav: list[Any] | None) -> list[Any] | None:
    """Return `nav` with every generated page it lacks appended (None: mkdocs' own nav)."""
    if nav is None:
        return None
    present = _nav_paths(nav)
    return [*nav, *({title: path} for title, path in SITE_PAGES if path not in present)]


@event_priority(100)  # before the rss plugin reads site_url
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Set site_url, name, author and copyright from chronicle.yml; pin the build date."""
    config.nav = complete_nav(config.nav)
    run = load_run_config(config)
    _BUILD.clear()
    _BUILD["run"] = run
    config.site_url = run.site.url
    config.site_name = run.site.title
    config.site_author = run.site.author
    config.site_description = config.site_description or (
        f"A dated, citable chronicle of the training run {run.run.name}: one page per day.")
    config.copyright = f"{run.site.author} · {run.site.license}"
    latest = Store(run.docs_dir).latest()
    # Same store, same bytes: sitemap.xml.gz and the feeds' build dates use this.
    os.environ.setdefault("SOURCE_DATE_EPOCH", str(int(latest.taken_at.timestamp()))
                          if latest else "0")
    rss = config.plugins.get("rss")
    image = getattr(getattr(rss, "config", None), "image", None)
    if rss is not None and image and not image.startswith(("http://", "https://")):
        rss.config.image = run.site.url + image.lstrip("/")
    return config


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Append a link to the next day to a sealed day page (it did not exist at sealing)."""
    match = _DAY_PAGE.match(page.file.src_uri)
    if not match:
        return markdown
    later = sorted(m.group(1) for f in files.documentation_pages()
                   if (m := _DAY_PAGE.match(f.src_uri)) and m.group(1) > match.group(1))
    markdown = markdown.rstrip("\n") + "\n\n" + _cite_sections(match.group(1), config)
    if not later:
        return markdown
    return markdown.rstrip("\n") + f"\n\n[Next day: {later[0]} →]({later[0]}.md)\n"


def _cite_sections(day: str, config: MkDocsConfig) -> str:
    """Return the citation and data-file blocks of a sealed day (they name its sha256)."""
    run = _BUILD.get("run") or load_run_config(config)
    if "sealers" not in _BUILD:
        _BUILD["sealers"] = Store(run.docs_dir).sealed_days()
    snap = _BUILD["sealers"].get(date.fromisoformat(day))
    path = run.docs_dir / "days" / f"{day}.json"
    if snap is None or not path.is_file():
        return ""
    return day_sections(run, json.loads(path.read_bytes()), snap)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    """Announce the failures and corrections feeds in every page's <head>."""
    run = _BUILD.get("run") or load_run_config(config)
    base = "../" * page.url.count("/")  # use_directory_urls is off: days/x.html -> ../
    return output.replace("</head>", alternate_links(run, base) + "</head>", 1)


@event_priority(-100)  # after the rss plugin has written its feeds
def on_post_build(config: MkDocsConfig) -> None:
    """Fill in the byte length of feed enclosures (the rss plugin writes length="None")."""
    # The plugin measures a page image relative to the page's source folder but builds its
    # URL relative to the site root; day images are site-root paths, so measure them here.
    _serve_sealed_sources(config)
    rss = config.plugins.get("rss")
    names = getattr(getattr(rss, "config", None), "feeds_filenames", None)
    if names is None:
        return
    site_dir, url = Path(config.site_dir), config.site_url or ""

    def length(match: re.Match[str]) -> str:
        target = site_dir / match.group(1)[len(url):]
        size = target.stat().st_size if match.group(1).startswith(url) and target.is_file() else 0
        return f'{match.group(0)[: -len(match.group(2))]}"{size}"'

    pattern = re.compile(r'<enclosure url="([^"]+)" type="[^"]*" length=("None")')
    for name in (names.rss_created, names.rss_updated):
        path = site_dir / name
        if path.is_file():
            path.write_text(pattern.sub(length, path.read_text(encoding="utf-8")),
                            encoding="utf-8")


def _serve_sealed_sources(config: MkDocsConfig) -> None:
    """Copy each sealed day's Markdown to the site byte for byte: its cited sha256 is checkable."""
    docs, site_dir = Path(config.docs_dir), Path(config.site_dir)
    for path in sorted((docs / "days").glob("*.md")):
        if _DAY_PAGE.match(f"days/{path.name}"):
            (site_dir / "days").mkdir(parents=True, exist_ok=True)
            (site_dir / "days" / path.name).write_bytes(path.read_bytes())


def generate(config: RunConfig) -> None:
    """Write every run-wide page with mkdocs_gen_files.open()."""
    import mkdocs_gen_files

    for path, content in site_files(config).items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with mkdocs_gen_files.open(path, mode) as fh:
            fh.write(content)


# -- pure: store + config -> files -----------------------------------------------------


def site_files(config: RunConfig, bundle: bool = True) -> dict[str, str | bytes]:
    """Return every generated file (path relative to docs/ -> content)."""
    # Load inputs.
    store = Store(config.docs_dir)
    snaps = store.snapshots()
    latest = snaps[-1] if snaps else None
    days = _sealed_days(store)
    series = build_series(store.load_metrics(), store.load_runs(), config)
    failures = sorted(store.load_failures(), key=lambda f: (f.start, f.id))

    # Process.
    files: dict[str, str | bytes] = {}
    files["index.md"] = _home(config, store, days, series, failures)
    files["archive.md"] = render("archive.md.j2", months=_months(days))
    files.update(_charts(config, series, failures, days))
    files.update(thread_pages(store.thread_history(), snaps))
    files["failures.md"] = _failures(failures, latest.id if latest else None)
    files["about.md"] = render(
        "about.md.j2", title=config.site.title, run_name=config.run.name,
        entity=config.wandb.entity, project=config.wandb.project, runs=config.wandb.runs,
        repo=config.github.repo, issues=config.github.issues, labels=config.github.labels,
        failure_labels=config.github.failure_labels, license=config.site.license,
        accelerators=f"{config.run.accelerators.count} × {config.run.accelerators.kind}",
        prices=sorted(config.run.prices_usd_per_accelerator_hour.items()),
        site_url=config.site.url)
    files.update(_api(config, store, days))
    files.update(archive_files(config, store, days, failures))
    files.update(watch_pages(config, store, series, failures, days))
    if bundle:
        files["assets/javascripts/vega-bundle.js"] = javascript_bundle()
    return files


def _sealed_days(store: Store) -> list[dict[str, Any]]:
    out = []
    for day, snap in sorted(store.sealed_days().items()):
        path = store.days / f"{day.isoformat()}.json"
        if not path.is_file():
            log.warning("%s: sealed by snapshot %s but missing; run `chronicle verify`",
                        path, snap.id)
            continue
        d = json.loads(path.read_bytes())
        d["link"] = f"days/{day.isoformat()}.md"
        d["line"] = one_line(d)
        out.append(d)
    return out


def _months(days: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in reversed(days):
        groups[date.fromisoformat(d["date"]).strftime("%B %Y")].append(d)
    return list(groups.items())


def _finite_xy(series: Series, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    values = series.get(name)
    if values is None:
        return None
    ok = np.isfinite(values)
    return (series.timestamp[ok], values[ok]) if ok.any() else None


def _last(series: Series, name: str, before: float = np.inf) -> float | None:
    xy = _finite_xy(series, name)
    if xy is None:
        return None
    idx = np.flatnonzero(xy[0] <= before)
    return float(xy[1][idx[-1]]) if idx.size else None


def _recent(series: Series, name: str, since: float) -> np.ndarray:
    xy = _finite_xy(series, name)
    return xy[1][xy[0] >= since] if xy is not None else np.array([])


def _stale(store: Store) -> list[dict[str, Any]]:
    snaps = store.snapshots()
    if not snaps:
        return []
    out = []
    for name, status in sorted(snaps[-1].sources.items()):
        if status.ok:
            continue
        since, last_good = snaps[-1], None
        for snap in reversed(snaps):
            s = snap.sources.get(name)
            if s is not None and s.ok:
                last_good = snap
                break
            since = snap
        out.append({"name": name, "error": status.error, "since": since.taken_at,
                    "last_good": last_good.id if last_good else None,
                    "last_good_at": last_good.taken_at if last_good else None})
    return out


def _home(config: RunConfig, store: Store, days: list[dict[str, Any]], series: Series,
          failures: list[FailureRecord]) -> str:
    latest = store.latest()
    last_t = float(series.timestamp.max()) if len(series) else None
    as_of = datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None
    now = as_of or (latest.taken_at if latest else None)
    day_now = day_of_run(config, now.date()) if now else 0
    newest = days[-1] if days else None
    tokens = _last(series, "total_tokens")
    if tokens is None and newest:
        tokens = newest["tokens"]["cumulative"]
    budget = config.run.token_budget
    pct = round(min(100.0, max(0.0, 100.0 * (tokens or 0.0) / budget)), 1)
    window = [d["tokens"]["day"] for d in days[-ETA_WINDOW_DAYS:] if d["tokens"]["day"]]
    rate = sum(window) / len(window) if window else None
    eta = None
    if rate and tokens is not None and now is not None and tokens < budget:
        eta = (now + timedelta(days=(budget - tokens) / rate)).strftime("%Y-%m-%d")
    day_ago = (last_t - 86400.0) if last_t is not None else np.inf
    loss_last = _last(series, "loss")
    loss_before = _last(series, "loss", day_ago)
    mfu = _recent(series, "mfu", day_ago)
    drop = _recent(series, "drop_fraction", day_ago)
    with_goodput = [d for d in days if d["throughput"].get("goodput") is not None]
    return render(
        "home.md.j2", title=config.site.title, run_name=config.run.name, stale=_stale(store),
        day_now=day_now, planned_days=config.run.planned_days,
        phase=newest.get("phase") if newest else None, progress_pct=pct, tokens_done=tokens,
        token_budget=budget, eta=eta, eta_days=len(window), eta_rate=rate,
        loss_last=loss_last,
        loss_change=(loss_last - loss_before) if loss_last is not None and loss_before is not None
        else None,
        mfu_p50=float(np.median(mfu)) if mfu.size else None,
        goodput=with_goodput[-1]["throughput"]["goodput"] if with_goodput else None,
        goodput_day=with_goodput[-1]["date"] if with_goodput else None,
        drop_p50=float(np.median(drop)) if drop.size else None,
        drop_max=float(drop.max()) if drop.size else None,
        open_failures=[f for f in failures if f.end is None],
        data_as_of=as_of, snapshot=latest.id if latest else None,
        snapshot_at=latest.taken_at if latest else None,
        recent=list(reversed(days[-7:])))


def _sustained(days: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray] | None:
    pts = [(datetime.fromisoformat(d["date"]).replace(tzinfo=UTC).timestamp() + 43200.0,
            d["throughput"]["sustained_tokens_per_second"])
           for d in days if d["throughput"].get("sustained_tokens_per_second") is not None]
    if not pts:
        return None
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts], dtype=float)


def _charts(config: RunConfig, series: Series, failures: list[FailureRecord],
            days: list[dict[str, Any]]) -> dict[str, str | bytes]:
    events = events_for(series, failures)
    mfu_note = "MFU in percent of peak accelerator FLOPs"
    wanted: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
        ("loss", {"train loss": _finite_xy(series, "loss"),
                  "eval loss": _finite_xy(series, "eval_loss")}, "loss",
         {"note": "Train loss includes the z-loss; eval loss is a held-out macro average. "
                  "They are different statistics: compare each with itself only."}),
        ("tokens", {"tokens processed": _finite_xy(series, "total_tokens")}, "tokens",
         {"rules": [(config.run.token_budget, "token budget")]}),
        ("throughput", {"compute-step tokens/s": _finite_xy(series, "tokens_per_second"),
                        "sustained tokens/s (daily)": _sustained(days)}, "tokens/s",
         {"note": "The gap between the compute-step rate and the sustained rate is time lost "
                  "to restarts, checkpoints, data loading and downtime."}),
        ("mfu", {"MFU (%)": _finite_xy(series, "mfu")}, "MFU (percent)", {"note": mfu_note}),
        ("drop_fraction", {"drop fraction": _finite_xy(series, "drop_fraction")},
         "fraction of tokens dropped", {"rules": [(0.07, "alert 7%")], "y_format": ".1%"}),
        ("grad_norm", {"grad norm": _finite_xy(series, "grad_norm")}, "grad norm",
         {"rules": [(2.0, "alert 2.0")]}),
        ("learning_rate", {"learning rate": _finite_xy(series, "learning_rate")},
         "learning rate", {}),
    ]
    titles = {"loss": "Loss", "tokens": "Tokens processed", "throughput": "Throughput",
              "mfu": "Model FLOPs utilisation", "drop_fraction": "MoE token drop fraction",
              "grad_norm": "Gradient norm", "learning_rate": "Learning rate"}
    out: dict[str, str | bytes] = {}
    listed = []
    for name, data, y_title, extra in wanted:
        data = {k: v for k, v in data.items() if v is not None}
        if not data:
            continue
        note = extra.pop("note", "")
        spec = ch.line_chart(data, title=titles[name], y_title=y_title, events=events, **extra)
        out[f"charts/{name}.vl.json"] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        out[f"charts/{name}.svg"] = render_svg(spec)
        title = chart_title(spec, titles[name])
        listed.append((titles[name], chart_embed(f"charts/{name}.vl.json",
                                                 f"charts/{name}.svg", title), note))
    last_t = float(series.timestamp.max()) if len(series) else None
    out["charts.md"] = render(
        "charts.md.j2", charts=listed,
        data_as_of=datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None)
    return out


def _failures(failures: list[FailureRecord], snapshot: str | None) -> str:
    kinds: dict[str, list[FailureRecord]] = defaultdict(list)
    for f in failures:
        kinds[f.kind].append(f)
    by_kind = [(k, len(v), sum(f.duration_seconds or 0.0 for f in v),
                sum(f.accelerator_hours_lost or 0.0 for f in v)) for k, v in sorted(kinds.items())]
    return render(
        "failures.md.j2", failures=[f.to_json() for f in failures], snapshot=snapshot,
        open_count=sum(1 for f in failures if f.end is None),
        total_seconds=sum(f.duration_seconds or 0.0 for f in failures),
        total_hours=sum(f.accelerator_hours_lost or 0.0 for f in failures),
        unknown_hours=sum(1 for f in failures if f.accelerator_hours_lost is None),
        by_kind=by_kind)


def _api(config: RunConfig, store: Store, days: list[dict[str, Any]]) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    index = []
    for d in days:
        md = store.days / f"{d['date']}.md"
        index.append({"date": d["date"], "day": d["day"], "title": d["title"],
                      "permalink": f"{config.site.url}days/{d['date']}.html",
                      "json": f"{config.site.url}api/days/{d['date']}.json",
                      "sealed_by": d["sealed_by"], "sealed_at": d["sealed_at"],
                      "sha256": sha256_file(md) if md.is_file() else None})
        out[f"api/days/{d['date']}.json"] = (store.days / f"{d['date']}.json").read_bytes()
    latest = store.latest()
    out["api/index.json"] = _dump({"run": config.run.name, "days": index})
    out["api/latest.json"] = _dump({
        "snapshot": latest.id if latest else None,
        "taken_at": iso(latest.taken_at) if latest else None,
        "latest_sealed_day": days[-1]["date"] if days else None,
        "stale_sources": [{"source": s["name"], "since": iso(s["since"]),
                           "last_good_snapshot": s["last_good"], "error": s["error"]}
                          for s in _stale(store)],
    })
    return out


def _dump(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


__all__ = ["generate", "load_run_config", "on_config", "on_page_markdown", "on_post_build",
           "on_post_page", "site_files"]
