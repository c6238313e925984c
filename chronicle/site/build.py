"""`chronicle build`: the chronicle folder built by its engine (never the network), staged
and published whole.

The engine (`site.engine`) builds every edition of `site.languages`: mkdocs-material
(site/engines/mkdocs/) or Zensical (site/engines/zensical/), from the same sources
(site/outputs/). Everything is built into a staging folder beside the site folder and
published whole once every edition is complete (site/publish/staging.py): a build that
fails or is killed leaves the published site as it was. It holds the store's lock (a
snapshot must not commit under it) and refuses to replace a folder holding anything but an
earlier chronicle site. What it runs beside itself (render workers, an edition's process)
belongs to the command's executor (chronicle/executor.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.executor import Executor
from chronicle.render.svg import require_han_font
from chronicle.site.build_cache import Caches
from chronicle.site.progress import Say
from chronicle.site.publish.staging import clear_leftovers, output_folder, publish, staging_dir
from chronicle.store import Store, locked, refuse_unsealed

# Files every chronicle site has: a folder holding them is a previous build, safe to replace.
SITE_MARKERS = ("index.html", "api/latest.json")


def check_site_dir(site_dir: Path) -> None:
    """Refuse a site folder that is a file, or a non-empty folder that is not a site."""
    if site_dir.exists() and not site_dir.is_dir():
        raise ChronicleError(f"{site_dir}: not a folder; pass --site-dir a folder for the site")
    if not site_dir.is_dir() or not any(site_dir.iterdir()):
        return
    if all((site_dir / marker).is_file() for marker in SITE_MARKERS):
        return
    raise ChronicleError(
        f"{site_dir}: not empty and not an earlier chronicle site (no "
        f"{' / '.join(SITE_MARKERS)}); a build replaces its site folder whole, so nothing was "
        "deleted: pass --site-dir an empty or new folder")


def build_site(config: RunConfig, site_dir: Path | None = None,
               seconds: dict[str, float] | None = None,
               cached: dict[str, int] | None = None, beside: bool | None = None,
               executor: Executor | None = None, say: Say | None = None) -> Path:
    """Build the site and publish it as `site_dir` (default <root>/site); return it.

    `seconds`, when given, receives the wall time of each language's build; `cached`, for
    each kind of cache (site/build_cache.py `Caches`), how many entries came from earlier
    builds ("<kind> reused") and how many were made ("<kind> made"): "svgs made" 0 means
    no render worker was started. `beside` (mkdocs): build each translated edition in its
    own process while English builds (None: when the executor runs that speed-up, on a
    machine with two cores; site/engines/mkdocs/edition_process.py), or after it in this
    one (False). `executor`: the command's (render workers, the edition's process, the
    staging folders); without one, the build has its own. `say`: where each edition says
    its steps as they end (site/progress.py; None: silent).
    """
    if executor is None:
        with Executor() as own:
            return build_site(config, site_dir, seconds, cached, beside, own, say)
    mkdocs_yml = config.root / "mkdocs.yml"
    if not mkdocs_yml.is_file():
        raise ChronicleError(
            f"{mkdocs_yml}: missing; run `chronicle init {config.root}` to scaffold it"
        )
    site_dir = output_folder(config.root, config.docs_dir, site_dir or config.root / "site",
                             "--site-dir")
    check_site_dir(site_dir)
    require_han_font(config.site.languages, "the build")
    store = Store(config.docs_dir)
    caches = Caches.of(config.root)
    with locked(store, "build"):
        refuse_unsealed(store)  # a stray file in docs/days: named, exit 2 (as verify does)
        clear_leftovers(site_dir)
        staging = executor.remove_on_close(staging_dir(site_dir))
        try:
            staging.mkdir(parents=True)
        except OSError as err:
            raise ChronicleError(
                f"{staging.parent}: cannot make the folder the site is built in before it "
                f"replaces {site_dir} ({err.strerror or err}); pass --site-dir a folder "
                "whose parent you can write") from err
        try:
            took = seconds if seconds is not None else {}
            if config.site.engine == "zensical":
                from chronicle.site.engines.zensical.build import build_editions as zensical

                zensical(config, staging, caches, took, executor, say)
            else:
                from chronicle.site.engines.mkdocs.build import build_editions as mkdocs

                mkdocs(config, mkdocs_yml, staging, site_dir, caches, beside, took, executor,
                       say)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)  # now, not when the command ends
            raise
        # Every edition is complete: the site is replaced whole, at once.
        publish(staging, site_dir)
        if say is not None:
            say(f"published {site_dir} ({', '.join(config.site.languages)})")
        caches.prune()  # only after every edition: they share the folders
    if cached is not None:
        for kind, cache in caches.each().items():
            cached.update({f"{kind} reused": cache.reused, f"{kind} made": cache.missed})
    return site_dir


def engine_notes(config: RunConfig) -> list[str]:
    """Return what the operator should know about how the site was built (printed by
    `chronicle build`): an mkdocs.yml from before mkdocs-gen-files."""
    if config.site.engine != "mkdocs":
        return []
    from chronicle.site.outputs.tree import read_mkdocs_yml

    names = [next(iter(p)) if isinstance(p, dict) else p
             for p in read_mkdocs_yml(config).get("plugins") or []]
    if "chronicle" in names and "gen-files" not in names:
        return [f"{config.root / 'mkdocs.yml'}: no `gen-files` plugin, so the chronicle "
                "plugin wrote the generated pages itself; add `- gen-files: {scripts: "
                "[gen_pages.py]}` after `- chronicle` and a gen_pages.py beside it (the docs' "
                "\"Engines\" page)"]
    return []
