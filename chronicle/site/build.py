"""`chronicle build`: mkdocs build --strict of the chronicle folder (never the network)."""

from __future__ import annotations

import os
from pathlib import Path

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.store import Store


def build_site(config: RunConfig, site_dir: Path | None = None) -> Path:
    """Build the site into `site_dir` (default <root>/site) and return it."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config as load_mkdocs
    from mkdocs.exceptions import Abort, ConfigurationError, PluginError

    mkdocs_yml = config.root / "mkdocs.yml"
    if not mkdocs_yml.is_file():
        raise ChronicleError(
            f"{mkdocs_yml}: missing; run `chronicle init {config.root}` to scaffold it"
        )
    site_dir = site_dir or config.root / "site"
    latest = Store(config.docs_dir).latest()
    # Same store, same bytes: dates that mkdocs and the feed plugin would take from the
    # clock come from the newest snapshot instead.
    epoch = str(int(latest.taken_at.timestamp())) if latest else "0"
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = epoch
    cwd = Path.cwd()
    try:
        os.chdir(config.root)  # gen-files scripts are resolved relative to the cwd
        cfg = load_mkdocs(config_file=str(mkdocs_yml), strict=True, site_dir=str(site_dir))
        # The mkdocs CLI fires these around a build; plugins (rss) set up state in them.
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
        finally:
            cfg.plugins.on_shutdown()
    except (Abort, ConfigurationError, PluginError) as err:
        raise ChronicleError(f"{mkdocs_yml}: the site build failed: {err}") from err
    finally:
        os.chdir(cwd)
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old
    return site_dir
