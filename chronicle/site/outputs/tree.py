"""A chronicle's site sources as plain files, one project per edition (site stage).

`chronicle render --out FOLDER` writes them for inspection, for other engines and for the
benchmarks; the Zensical adapter (site/engines/zensical/build.py) builds them. Each edition
is a folder `<FOLDER>/<code>/` holding an `mkdocs.yml` that any engine reading Material's
config builds (theme, search, rss, Markdown extensions; no chronicle plugin, no gen-files,
no hooks: everything they would add is in the files), `overrides/` (chronicle's template
overrides, then the chronicle's own `custom_dir`) and `docs/`: the chronicle's docs/
(copied: a tree is never a way to write into the store) under the edition's sources
(site/outputs/sources.py). A file whose bytes did not change is not written again, and what
the sources no longer hold is removed, so an engine's own cache stays warm between builds.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from markupsafe import escape

from chronicle.config import RunConfig
from chronicle.errors import ChronicleError
from chronicle.executor import Executor
from chronicle.render.i18n import (
    DEFAULT,
    NAMES,
    Language,
    edition_dir,
    language,
    site_title,
)
from chronicle.render.svg import require_han_font
from chronicle.site.build_cache import Caches
from chronicle.site.outputs.citable import edition_url, feed_links
from chronicle.site.outputs.editions import (
    LOCALE_FOLDER,
    EditionFiles,
    alternates,
    generator_words,
    localize_toc,
    localized_palette,
    translate_nav,
)
from chronicle.site.outputs.inputs import BuildInputs
from chronicle.site.outputs.pages import (
    BUNDLE,
    SCRIPT,
    SECTIONS,
    STYLESHEET,
    THEME_DIR,
    complete_nav,
)
from chronicle.site.outputs.sources import edition_sources
from chronicle.site.publish.staging import output_folder
from chronicle.store.manifest import EDITION_PATH

CONFIG_NAME = "mkdocs.yml"
HEADER = "# Written by chronicle from chronicle.yml and mkdocs.yml: edit those, not this.\n"
# Plugins a Material-compatible engine runs itself; chronicle's own (and gen-files, and
# any other plugin an engine without plugins would skip in silence) are left out: their
# work is in the files.
ENGINE_PLUGINS = ("search", "material/search", "rss")
# Keys of the chronicle's mkdocs.yml a tree keeps (the rest chronicle sets, or belong to
# mkdocs plugins and hooks).
KEPT = ("use_directory_urls", "exclude_docs", "not_in_nav", "validation", "theme",
        "markdown_extensions", "extra", "extra_css", "extra_javascript", "nav", "strict",
        "copyright", "repo_url", "repo_name", "edit_uri")


@dataclass(frozen=True)
class EditionTree:
    """One edition's project in a tree: its config file and docs folder."""

    code: str
    root: Path

    @property
    def config_file(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def site(self) -> Path:
        return self.root / "site"


def read_mkdocs_yml(config: RunConfig) -> dict[str, Any]:
    """Return the chronicle's mkdocs.yml as data (what a tree's config starts from)."""
    path = config.root / CONFIG_NAME
    try:
        # Material's configs may name Python objects (`!!python/name:`): mkdocs and
        # Zensical both load them with PyYAML's full loader; so does this.
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.Loader)
    except FileNotFoundError as err:
        raise ChronicleError(f"{path}: missing; run `chronicle init {config.root}` to "
                             "scaffold it") from err
    except yaml.YAMLError as err:
        raise ChronicleError(f"{path}: not valid YAML ({err}); fix it and build again") from err
    if not isinstance(data, dict):
        raise ChronicleError(f"{path}: expected a mapping of mkdocs settings")
    return data


# Zensical's search separator with one change: a hyphen between digits does not split, so
# "2026-11-09" is one word and a date query finds its day first (split, it matched every
# day whose title holds 2026, 11 and 09, the earliest listed first). Zensical splits a
# query with the same separator as the index; Material does not (its query lexer keeps
# lunr's own), so this is written for a Zensical build only.
ZENSICAL_SEPARATOR = r'[\s_,:!=\[\]()\\"`/]+|\.(?!\d)|-(?!\d)|(?<!\d)-'


def edition_config(base: Mapping[str, Any], config: RunConfig, lang: Language,
                   zensical: bool = False) -> dict[str, Any]:
    """Return the mkdocs.yml of the `lang` edition's project: the chronicle's settings, and
    what the chronicle plugin would set at build time (site_url, names, nav, language,
    the language switch, the chronicle's feeds, style and script)."""
    _ = lang.gettext
    out: dict[str, Any] = {k: base[k] for k in KEPT if k in base}
    url = edition_url(config, lang.code)
    out |= {
        # Text, never markup: Zensical's templates, like Material's, print these raw in
        # some places (the header, <title>) and escaped (`| e`) in others (the logo's
        # tooltip); escaped here, an `&` or `<` in chronicle.yml never becomes markup
        # (where a template escapes it again, it shows as its entity).
        "site_name": str(escape(site_title(config, lang))),
        "site_url": url,
        "site_author": str(escape(config.site.author)),
        "site_description": str(escape(_(
            "A dated, citable chronicle of the training run {run}: one page per day."
        ).format(run=config.run.name))),
        "copyright": str(escape(f"{config.site.author} · {config.site.license}")),
        "docs_dir": "docs",
        "site_dir": "site",
    }
    nav = complete_nav(base.get("nav"))
    out["nav"] = nav if lang.code == DEFAULT else translate_nav(
        nav, {s.path: s.title for s in SECTIONS}, lang)
    theme = dict(base.get("theme") or {"name": "material"})
    theme["language"] = lang.code
    if lang.code != DEFAULT and "palette" in theme:
        theme["palette"] = localized_palette(theme["palette"], lang)
    theme["custom_dir"] = "overrides"
    # Zensical's default look is its own ("modern"); chronicle's style and the template
    # overrides are Material's, which Zensical calls "classic" (mkdocs ignores the key).
    theme.setdefault("variant", "classic")
    out["theme"] = theme
    up = "" if lang.code == DEFAULT else "../"  # the site's style and script live at its root
    css = [p for p in base.get("extra_css") or [] if p != STYLESHEET]
    js = [p for p in base.get("extra_javascript") or [] if p != SCRIPT]
    out["extra_css"] = [*css, up + STYLESHEET]
    out["extra_javascript"] = [*js, up + SCRIPT]
    extra = dict(base.get("extra") or {})
    if len(config.site.languages) > 1:
        extra["alternate"] = alternates(config.site.languages, lang.code)
        # A page's twin in each language: that edition's folder from this one's root
        # (site/theme/ joins it to the page's own path: no plugin hands it over here).
        up = "" if lang.code == DEFAULT else "../"
        extra["chronicle_twins"] = [
            {"name": NAMES[code], "lang": code,
             "prefix": "" if code == lang.code else up + edition_dir(code)}
            for code in config.site.languages]
    # The chronicle's feeds, relative to the site's root (site/theme/main.html).
    extra["chronicle_feeds"] = feed_links(config, "", lang)
    if lang.code != DEFAULT:
        extra["chronicle_made_with"] = generator_words(lang)
    out["extra"] = extra
    if lang.code != DEFAULT:
        # Keep the words of Chinese headings in their anchors (#关键数字), as the mkdocs
        # build does (site/engines/mkdocs/config.py localize_config).
        extensions = []
        for entry in base.get("markdown_extensions") or []:
            if entry == "toc" or (isinstance(entry, dict) and "toc" in entry):
                toc = dict((entry.get("toc") or {}) if isinstance(entry, dict) else {})
                localize_toc(toc, lang, _CaseLowerSlugify())
                entry = {"toc": toc}
            extensions.append(entry)
        out["markdown_extensions"] = extensions
    out["plugins"] = _plugins(base.get("plugins") or [], config, lang, zensical)
    return out


class _CaseLowerSlugify:
    """pymdownx's slugify(case="lower"), written into the YAML as the call that makes it."""


class _Dumper(yaml.Dumper):
    """PyYAML's full dumper: what the full loader read (`!!python/name:`) is written back."""


def _represent_slugify(dumper: _Dumper, _value: _CaseLowerSlugify) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:python/object/apply:pymdownx.slugs."
                                    "slugify", {"kwds": {"case": "lower"}})


_Dumper.add_representer(_CaseLowerSlugify, _represent_slugify)


def _plugins(entries: list[Any], config: RunConfig, lang: Language,
             zensical: bool = False) -> list[Any]:
    out: list[Any] = []
    for entry in entries:
        name, options = (entry, {}) if isinstance(entry, str) else next(iter(entry.items()))
        if name not in ENGINE_PLUGINS:
            continue
        options = dict(options or {})
        if name.endswith("search") and lang.code != DEFAULT:
            options["lang"] = [lang.code]  # Material segments Chinese with jieba
        elif name.endswith("search") and zensical:
            options.setdefault("separator", ZENSICAL_SEPARATOR)
        if name == "rss":
            image = options.get("image")
            if isinstance(image, str) and not image.startswith(("http://", "https://")):
                options["image"] = config.site.url + image.lstrip("/")
            options.pop("cache_dir", None)  # the tree's own (.cache/ beside its config)
        out.append({name: options} if options else name)
    return out


def _docs_files(config: RunConfig, code: str) -> Iterator[tuple[str, Path]]:
    """Yield (path relative to docs, file) of the chronicle's docs/ an edition builds:
    everything for English but the other languages' sealed pages (their editions take
    them); another edition leaves the sealed days and the data at the root."""
    for path in sorted(config.docs_dir.rglob("*")):
        rel = path.relative_to(config.docs_dir).as_posix()
        if path.is_symlink() or not path.is_file():
            continue  # the store refuses links; a tree copies files only
        if code != DEFAULT and rel.startswith(("days/", "data/", "mementos/")):
            continue
        if EDITION_PATH.fullmatch(rel):
            continue
        yield rel, path


def _same(target: Path, content: bytes) -> bool:
    try:
        return target.stat().st_size == len(content) and target.read_bytes() == content
    except OSError:
        return False


def _write(target: Path, content: str | bytes | Path) -> None:
    if isinstance(content, Path):
        if content.resolve() == target.resolve():
            return  # drawn into the tree already
        content = content.read_bytes()
    data = content.encode("utf-8") if isinstance(content, str) else content
    if _same(target, data):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)  # never write through a link
    target.write_bytes(data)


def _copy(source: Path, target: Path) -> None:
    """Copy a docs file unless the copy is already there (same size and time)."""
    try:
        have, want = target.stat(), source.stat()
        if have.st_size == want.st_size and have.st_mtime_ns == want.st_mtime_ns:
            return
    except OSError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    shutil.copy2(source, target)


def write_edition(inputs: BuildInputs, lang: Language, tree: EditionTree,
                  caches: Caches | None = None, executor: Executor | None = None,
                  zensical: bool = False) -> EditionFiles:
    """Write the `lang` edition's project into `tree`; return its sources (a translated
    edition's day charts are drawn straight into the tree)."""
    config = inputs.config
    base = read_mkdocs_yml(config)
    tree.docs.mkdir(parents=True, exist_ok=True)
    sources = edition_sources(inputs, lang)
    wanted: set[str] = set()
    for rel, path in _docs_files(config, lang.code):
        if rel not in sources:
            _copy(path, tree.docs / rel)
            wanted.add(rel)
    for rel, content in sources.items():
        if lang.code != DEFAULT and rel == BUNDLE:
            continue
        _write(tree.docs / rel, content)
        wanted.add(rel)
    for path in sorted(tree.docs.rglob("*"), reverse=True):  # files before their folders
        rel = path.relative_to(tree.docs).as_posix()
        if path.is_file() and rel not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    _write_overrides(base, config, tree)
    text = yaml.dump(edition_config(base, config, lang, zensical), Dumper=_Dumper,
                     allow_unicode=True, sort_keys=False)
    _write(tree.config_file, HEADER + text)
    return sources


def _write_overrides(base: Mapping[str, Any], config: RunConfig, tree: EditionTree) -> None:
    """Put chronicle's template overrides in the tree, then the chronicle's own
    `custom_dir` over them (its files win, as they do in the mkdocs build)."""
    target = tree.root / "overrides"
    shutil.rmtree(target, ignore_errors=True)
    # Not the search partial: it is Material 9.8's search box, given an accessible name;
    # Zensical's own search (another box, named already) would break under it.
    shutil.copytree(THEME_DIR, target,
                    ignore=shutil.ignore_patterns("__pycache__", "search.html"))
    custom = (base.get("theme") or {}).get("custom_dir")
    if isinstance(custom, str) and (config.root / custom).is_dir():
        shutil.copytree(config.root / custom, target, dirs_exist_ok=True)


def check_out_dir(out: Path, config: RunConfig) -> Path:
    """Return the folder to write a tree into (publish.output_folder's rule: no link, not
    the chronicle, not in docs/); refuse a file, or a non-empty folder that holds anything
    but an earlier tree."""
    out = output_folder(config.root, config.docs_dir, out, "--out")
    if out.exists() and not out.is_dir():
        raise ChronicleError(f"{out}: not a folder; pass --out a folder for the sources")
    if not out.is_dir() or not any(out.iterdir()):
        return out
    first = out / config.site.languages[0] / CONFIG_NAME
    if first.is_file() and first.read_text(encoding="utf-8").startswith(HEADER):
        return out
    raise ChronicleError(f"{out}: not empty and not an earlier `chronicle render`; nothing "
                         "was written: pass --out an empty or new folder")


def render_tree(config: RunConfig, inputs: BuildInputs, out: Path,
                executor: Executor | None = None) -> list[EditionTree]:
    """Write every edition of `config.site.languages` as a project under `out`, its
    charts' static SVGs drawn into it (an engine copies them like any static file)."""
    from chronicle.site.outputs.statics import Drawing

    require_han_font(config.site.languages, "`chronicle render`")
    trees = []
    for code in config.site.languages:
        lang = language(code, config.root / LOCALE_FOLDER, config)
        tree = EditionTree(code, out / code)
        sources = write_edition(inputs, lang, tree, None, executor)
        drawing = Drawing({p: c for p, c in sources.items()
                           if code == DEFAULT or not p.startswith("days/")}, None, executor)
        for path, svg in drawing.svgs().items():
            _write(tree.docs / path, svg)
        trees.append(tree)
    return trees
