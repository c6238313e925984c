"""The command line: the only place that prints or exits.

Every ChronicleError becomes one clear message and its exit code (documentation/pages/
commands.md, "Exit codes").
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import click

from chronicle import __version__
from chronicle.config import load_config
from chronicle.config.checks import FIRST_DAY, LAST_DAY
from chronicle.config.model import ENGINES
from chronicle.errors import (
    EXIT_DEGRADED,
    ChronicleError,
    SiteCheckError,
    VerifyError,
    disk_error,
)
from chronicle.models import iso

F = TypeVar("F", bound=Callable[..., Any])
DIR_OPTION = click.option(
    "--dir",
    "root",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The chronicle folder (the one holding chronicle.yml).",
)


def _clean_errors(func: F) -> F:
    """Turn ChronicleError into a message on stderr and its exit code, never a traceback;
    so is a write the disk refuses (full, read-only, no permission), naming the file."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ChronicleError as err:
            _fail(err)
        except OSError as err:
            refused = disk_error(err, *_disk_context(func.__name__, kwargs))
            if refused is None:
                raise
            _fail(refused)
        except KeyboardInterrupt:
            click.echo(
                "interrupted; the store is unchanged unless a snapshot was reported", err=True
            )
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def _fail(err: ChronicleError) -> None:
    click.secho(f"error: {err}", fg="red", err=True)
    sys.exit(err.exit_code)


def _say(line: str) -> None:
    """Say a step of a long command (the demo's nights, each edition's build steps) as it
    ends: on stderr, so stdout keeps what the command made."""
    click.echo(line, err=True)


def _preview(root: Path) -> str:
    """Return the line that ends `build` and `demo`: how to look at the site. Served, not
    opened from disk, where its search never starts (it runs in a Web Worker)."""
    where = "" if root == Path(".") else f" --dir {root}"
    return f"preview it: chronicle serve{where}, then open http://127.0.0.1:8000/"


def _disk_context(command: str, kwargs: dict[str, Any]) -> tuple[Path, str]:
    """Return where `command` writes (named when the disk refused a write without naming
    the file) and what was left written."""
    root = Path(kwargs.get("root") or kwargs.get("out") or kwargs.get("target") or ".")
    if command == "snapshot":
        # store/write.py writes a snapshot into a temporary folder, removed on failure.
        return root / "docs" / "data", "no snapshot was written (the store is as it was)"
    if command in ("build", "serve"):
        site = kwargs.get("site_dir") or root / "site"
        return Path(site), "the store and the published site are as they were"
    if command == "demo":
        return root, "the nights snapshotted so far are kept (each one whole)"
    if command == "init":
        return root, "the scaffold may be incomplete: delete what it wrote"
    if command == "archive":
        return root / "docs" / "mementos", "no mementos record was written (the captures " \
            "made are asked for again next night)"
    return root, "nothing was changed"


def parse_as_of(value: str | None) -> datetime:
    """Parse --as-of (ISO 8601; naive means UTC) or return now."""
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    text = value.strip().replace("Z", "+00:00")
    try:
        when = datetime.fromisoformat(text)
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        when = when.astimezone(UTC).replace(microsecond=0)
    except ValueError as err:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 time; use e.g. 2026-09-30T03:17:00Z",
            param_hint="--as-of",
        ) from err
    except OverflowError:  # year 1 east of UTC, or year 9999 west of it: no UTC time
        raise click.BadParameter(
            f"{value!r} is outside {FIRST_DAY.year} to {LAST_DAY.year}, the times a chronicle "
            "records; pass a time of the run, e.g. 2026-09-30T03:17:00Z",
            param_hint="--as-of") from None
    return when  # how far from the run it may be: snapshot/preflight.py


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chronicle")
def main() -> None:
    """chronicle: turn a long public training run into a living, citable chronicle."""


@main.command()
@click.argument("target", type=click.Path(path_type=Path))
@click.option(
    "--source",
    type=click.Choice(["live", "simulated"]),
    default="live",
    show_default=True,
    help="Where data comes from.",
)
@click.option("--name", default="My training run", show_default=True, help="The run's name.")
@_clean_errors
def init(target: Path, source: str, name: str) -> None:
    """Scaffold a new chronicle in TARGET (chronicle.yml, mkdocs.yml, docs/, workflow)."""
    from chronicle.init import InitOptions, init_chronicle

    written = init_chronicle(target, InitOptions(source=source, name=name))
    click.echo(f"scaffolded {len(written)} files in {target}")
    click.echo(f"next: edit {target / 'chronicle.yml'}, then `chronicle snapshot --dir {target}`")


@main.command()
@DIR_OPTION
@click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="TIMESTAMP",
    help="Replay 'now' (ISO 8601, UTC), for backfills and tests.",
)
@_clean_errors
def snapshot(root: Path, as_of: str | None) -> None:
    """Fetch every source, append one snapshot, seal every closed day."""
    from chronicle.snapshot.take import take_snapshot

    config = load_config(root)
    when = parse_as_of(as_of)
    result = take_snapshot(
        config,
        when,
        backfilled=as_of is not None
        and config.source == "live"
        and when < datetime.now(UTC) - timedelta(days=1),
    )
    for line in result.recovered:
        click.echo(f"finished an interrupted snapshot: {line}")
    sealed = ", ".join(result.sealed) or "none"
    click.echo(
        f"snapshot {result.snapshot}: {result.rows} new rows, {result.threads} threads, "
        f"{result.failures} failure records; sealed: {sealed}"
    )
    if result.editions:
        days = result.editions
        shown = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
        click.echo(f"sealed the pages of {len(days)} earlier day(s) in the site's other "
                   f"languages ({shown}): they had none")
    for status in result.statuses:
        if not status.ok:
            click.secho(
                f"warning: source {status.name} failed: {status.error}", fg="yellow", err=True
            )
        elif status.error:  # it answered, with something left out (W&B's bad rows)
            click.secho(f"warning: source {status.name}: {status.error}", fg="yellow", err=True)
    for day in result.incomplete:
        click.secho(f"warning: {day} sealed without every source after waiting "
                    "sealing.max_wait_days; its page says so", fg="yellow", err=True)
    for wait in result.waiting:
        why = "; ".join(f"{m.source} has not answered since the day ended"
                        + (f" ({m.error})" if m.error else "") for m in wait.missing)
        click.echo(f"waiting: {wait.day} is not sealed: {why}; the next snapshot in which it "
                   f"answers seals it, else it is sealed anyway after {iso(wait.seal_anyway_at)}")
    if result.degraded:
        click.echo("degraded snapshot written (the stored data is intact); exit code 3", err=True)
        sys.exit(EXIT_DEGRADED)


@main.command()
@DIR_OPTION
@_clean_errors
def archive(root: Path) -> None:
    """Ask the Wayback Machine (Save Page Now 2) for a copy of every sealed day page that
    has none yet, and of the home page once a day; record the mementos in the store."""
    import os

    from chronicle.snapshot.archive import archive_site, check_archivable, wayback_settings

    config = load_config(root)
    check_archivable(config)
    api_url, keys = wayback_settings(os.environ)
    report = archive_site(config, datetime.now(UTC).replace(microsecond=0), api_url, keys,
                          echo=click.echo)
    for target in report.given_up:
        click.secho(f"warning: {target.url} not asked for: its captures failed too often "
                    "(see the attempts in docs/mementos)", fg="yellow", err=True)
    if report.record:
        click.echo(f"recorded in docs/{report.record} (the next snapshot puts it in the "
                   "hash chain)")
    click.echo(report.summary())


def _site_dir_option(help_text: str) -> Callable[[F], F]:
    return click.option("--site-dir", type=click.Path(file_okay=False, path_type=Path),
                        default=None, help=help_text)


@main.command()
@DIR_OPTION
@_site_dir_option("Where to write the site (default: DIR/site).")
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="Build with this engine instead of the one site.engine names.")
@_clean_errors
def build(root: Path, site_dir: Path | None, engine: str | None) -> None:
    """Build the site with the engine site.engine names (mkdocs or Zensical), strictly (no
    network)."""
    from chronicle.executor import Executor
    from chronicle.site.build import build_site, engine_notes

    config = load_config(root)
    if engine is not None:  # the same pages either way (documentation/pages/engines.md)
        config = replace(config, site=replace(config.site, engine=engine))
    started = time.perf_counter()
    cached: dict[str, int] = {}
    with Executor() as executor:
        out = build_site(config, site_dir, cached=cached, executor=executor, say=_say)
    # A nightly's log shows whether .cache/chronicle was restored
    # (documentation/pages/nightly.md).
    click.echo(f"built {out} with {config.site.engine} in {time.perf_counter() - started:.1f} s"
               f"{_cache_use(cached)}")
    for note in engine_notes(config):
        click.echo(f"note: {note}")
    click.echo(_preview(root))


@main.command()
@DIR_OPTION
@click.option("--out", "out", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the sources into: one project per edition, OUT/<lang>/.")
@_clean_errors
def render(root: Path, out: Path) -> None:
    """Write the site's sources as plain files, one project per edition (any engine builds
    OUT/<lang>/mkdocs.yml; nothing is published)."""
    from chronicle.executor import Executor
    from chronicle.site.outputs.inputs import load_inputs
    from chronicle.site.outputs.tree import check_out_dir, render_tree
    from chronicle.store import Store, locked, refuse_unsealed

    config = load_config(root)
    out = check_out_dir(out, config)
    store = Store(config.docs_dir)
    started = time.perf_counter()
    with locked(store, "render"), Executor() as executor:
        refuse_unsealed(store)
        trees = render_tree(config, load_inputs(config), out, executor)
    for tree in trees:
        files = sum(1 for p in tree.docs.rglob("*") if p.is_file())
        click.echo(f"{tree.code}: {files} files in {tree.docs}; build it with "
                   f"`properdocs build -f {tree.config_file}` or `zensical build -f "
                   f"{tree.config_file}`")
    click.echo(f"rendered {len(trees)} edition(s) in {time.perf_counter() - started:.1f} s")


def _cache_use(cached: dict[str, int]) -> str:
    """Return what a build took from .cache/chronicle and what it made (site/build_cache.py)."""
    said = [f"{label}: {cached[f'{kind} reused']} from .cache/chronicle, "
            f"{cached[f'{kind} made']} {verb}"
            for kind, label, verb in (("svgs", "chart SVGs", "drawn"),
                                      ("zensical", "Zensical caches", "started cold"))
            if cached.get(f"{kind} reused", 0) + cached.get(f"{kind} made", 0)]
    return f" ({'; '.join(said)})" if said else ""


@main.command("check-site")
@DIR_OPTION
@_site_dir_option("The built site to check (default: DIR/site).")
@_clean_errors
def check_site(root: Path, site_dir: Path | None) -> None:
    """Check the built site before deploying it (the nightly job runs this after build)."""
    from chronicle.site.publish.check import CHECKS
    from chronicle.site.publish.check import check_site as run_checks

    site = site_dir or root / "site"
    if not site.is_dir():
        raise ChronicleError(f"{site}: not a folder; run `chronicle build` first")
    report = run_checks(site)
    for problem in report.problems:
        click.secho(f"FAIL {problem}", fg="red", err=True)
    if report.problems:
        failed = sorted({p.check for p in report.problems}, key=CHECKS.index)
        raise SiteCheckError(
            f"site check failed: {len(report.problems)} problem(s) in {site} (checks "
            f"{', '.join(failed)}); fix what each FAIL line names, then `chronicle build`"
        )
    click.echo(f"site ok: {report.pages} pages checked in {site} ({', '.join(CHECKS)})")


@main.command()
@DIR_OPTION
@_clean_errors
def zenodo(root: Path) -> None:
    """Write .zenodo.json from chronicle.yml (what Zenodo records for each release)."""
    from chronicle.site.publish.zenodo import FILENAME, write_zenodo_json

    changed = write_zenodo_json(load_config(root))
    click.echo(f"{'wrote' if changed else 'unchanged:'} {root / FILENAME}")


@main.command("release-notes")
@DIR_OPTION
@click.option("--week", "week_text", default=None,
              help="The ISO week, e.g. 2026-W47 (default: the week before this one).")
@_site_dir_option("The built site whose api/mementos.json is read (default: DIR/site).")
@_clean_errors
def release_notes(root: Path, week_text: str | None, site_dir: Path | None) -> None:
    """Print the Markdown notes of a week's release (its sealed days, their sha256, SWHIDs
    and mementos); print nothing when the week is not to be released (yet)."""
    from chronicle.site.publish.release import parse_week, release_notes, week_of, week_release

    now = datetime.now(UTC)
    week = parse_week(week_text) if week_text else week_of(now.date() - timedelta(days=7))
    config = load_config(root)
    release = week_release(config, week, now, site_dir)
    for warning in release.warnings:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if release.wait:
        click.echo(f"no release: {release.wait}", err=True)
        return
    click.echo(release_notes(config, release), nl=False)


@main.command()
@DIR_OPTION
@click.option(
    "--against",
    metavar="URL|FILE|SHA",
    default=None,
    help="Also check that a published chain head (a site's URL or api/latest.json, a saved "
    "copy of it or of a MANIFEST.json, or the head's sha256) is in this store's chain.",
)
@click.option(
    "--recompute",
    is_flag=True,
    help="Also re-derive every sealed day from the stored snapshots with this code's "
    "methods and compare it, figure by figure, with what was sealed (writes nothing).",
)
@click.option(
    "--swhid",
    is_flag=True,
    help="Also print each sealed day's SWHIDs (its page's swh:1:cnt: and its chart "
    "folder's swh:1:dir:), computed from the verified bytes.",
)
@_clean_errors
def verify(root: Path, against: str | None, recompute: bool = False,
           swhid: bool = False) -> None:
    """Check every manifest, the hash chain and every sealed page."""
    from chronicle.store import Store, reading, verify_against, verify_store
    from chronicle.store.swhid import day_swhids

    config = load_config(root)
    store = Store(config.docs_dir)
    head = _published_head(against) if against else None
    # Read-only: a user who cannot write the chronicle verifies it too (store/lock.py).
    with reading(store, "verify") as access:
        for line in access.recovered:
            click.echo(f"finished an interrupted snapshot: {line}")
        for note in access.notes:
            click.secho(f"note: {note}", fg="yellow", err=True)
        problems = verify_store(store)
        if head is not None:
            problems += verify_against(store, head)
        snaps = store.snapshots() if not problems else []
        sealed = sorted(store.sealed_days()) if not problems else []
        days = len(sealed)
        # Of bytes the chain has just vouched for: anyone can recompute them with git.
        swhids = {d.isoformat(): day_swhids(store.days, d.isoformat())
                  for d in sealed} if swhid else {}
        recomputed = None
        if recompute and not problems and days:
            from chronicle.snapshot.recompute import recompute_days

            recomputed = recompute_days(config, store)
    if problems:
        for problem in problems:
            click.secho(f"FAIL {problem}", fg="red", err=True)
        raise VerifyError(
            f"{len(problems)} problem(s) in {config.docs_dir}; restore the named "
            "files from git (published files are never rewritten)"
        )
    tip = f"; head {snaps[-1].id} (manifest sha256 {snaps[-1].manifest_sha256})" if snaps else ""
    click.echo(f"ok: {len(snaps)} snapshots, {days} sealed days, hash chain intact{tip}")
    if head is not None:
        click.echo(f"ok: the head published by {head.source} ({head.sha256[:12]}…) is in "
                   "this chain")
    for day, ids in swhids.items():
        click.echo(f"swhid {day} {ids.page} {ids.folder or '-'}")
    if recomputed is not None:
        _report_recompute(recomputed, config.docs_dir)
    elif recompute:
        click.echo("recompute: no day is sealed yet")


def _report_recompute(report: Any, docs: Path) -> None:
    """Print what `verify --recompute` found; VerifyError if a sealed figure or page is not
    what the stored snapshots give."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for item in report.not_comparable:
        grouped.setdefault((item.what, item.message), []).append(item.where.removeprefix("day "))
    for (what, message), days in sorted(grouped.items()):
        span = days[0] if len(days) == 1 else f"{len(days)} days, {days[0]} … {days[-1]}"
        click.echo(f"not comparable: {what + ': ' if what else ''}{message} ({span})")
    for why, days in sorted(report.pages_skipped.items()):
        click.echo(f"pages not compared ({why}): {len(days)} day(s), {days[0]} … {days[-1]}")
    for problem in report.problems:
        click.secho(f"FAIL {problem}", fg="red", err=True)
    if report.problems:
        raise VerifyError(
            f"recompute: {len(report.problems)} difference(s) between what {docs} "
            "sealed and what its stored snapshots give; each FAIL names the day and the "
            "figure (restore the day's files and manifests from git, or find what changed "
            "them)")
    click.echo(f"ok: recomputed {report.days} sealed days from the stored snapshots: "
               f"{report.figures} figures equal to the sealed ones, {report.pages} pages "
               "byte-identical")


def _published_head(against: str) -> Any:
    """Return the chain head named by --against: a sha256, a file, a folder or a URL
    (read bounded in time and size, and checked: sources/published.py, store/verify.py)."""
    import re

    from chronicle.clean import safe_url
    from chronicle.sources.published import fetch_published, read_published_file
    from chronicle.store import Head, parse_head

    text = against.strip()
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        return Head(None, text.lower(), "the given sha256")
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        return parse_head(fetch_published(text), safe_url(text))
    path = Path(text)
    if path.is_dir():
        path = path / "api" / "latest.json"
    if not path.exists():
        raise click.BadParameter(
            f"{against!r} is not a URL, a file, a site folder or a sha256 (64 hex digits)",
            param_hint="--against")
    return parse_head(read_published_file(path), str(path))


@main.command()
@DIR_OPTION
@click.option("--port", default=8000, show_default=True, help="Port on 127.0.0.1.")
@_clean_errors
def serve(root: Path, port: int) -> None:
    """Build, then preview the site on http://127.0.0.1:PORT/."""
    from chronicle.executor import Executor
    from chronicle.site.build import build_site

    config = load_config(root)
    with Executor() as executor:
        site = build_site(config, executor=executor, say=_say)
    import http.server  # only `serve` needs it (kept out of every other command's start)

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        click.echo(f"serving {site} on http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


@main.command()
@click.option(
    "--days", default=100, show_default=True, type=click.IntRange(1, 400), help="Simulated days."
)
@click.option(
    "--out",
    "out",
    default="demo",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the demo.",
)
@_clean_errors
def demo(days: int, out: Path) -> None:
    """Simulate a run, snapshot each night, seal each day, build the site (offline)."""
    from chronicle.demo import run_demo
    from chronicle.executor import Executor

    with Executor() as executor:
        report = run_demo(out, days, echo=_say, executor=executor)
    click.echo(f"demo chronicle: {report.sealed} sealed days, {report.snapshots} snapshots, "
               f"site in {out / 'site'}")
    click.echo(_preview(out))


def entry() -> None:
    """The `chronicle` command (and `python -m chronicle.cli`): `main`, then a quick exit.

    Exiting, the interpreter runs one last full garbage collection over every object still
    alive: after a build (a store read, thousands of mkdocs pages) that pass is a
    noticeable part of the build, to free memory the process returns to the OS anyway
    (`make bench` measures the build). Freezing the heap
    first skips it. Atexit handlers and open files are unaffected (everything chronicle
    writes is closed before a command returns); only a command-line process does this,
    never a caller of `main` (tests call it in-process).
    """
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    entry()
