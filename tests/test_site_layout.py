"""The build path's layout (chronicle/site/): what an edition is made of (outputs/) and what
happens to a built site (publish/) load no engine (their imports, lazy ones included, are
an import-linter contract in pyproject.toml, run by `make lint`); each engine's adapter
lives in engines/<engine>/ and reaches its engine through public names only."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import chronicle

PACKAGE = Path(chronicle.__file__).parent
SITE = PACKAGE / "site"
NEUTRAL = ("outputs", "publish")
# The engines and what runs inside them: mkdocs (and ProperDocs, the MkDocs 1.x it runs
# on), Material, the plugins chronicle's mkdocs builds use, Zensical, and jieba (loaded by
# Material's search for Chinese).
ENGINES = ("mkdocs", "properdocs", "material", "mkdocs_gen_files", "mkdocs_rss_plugin",
           "zensical", "jieba")


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(
        ".__init__")


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every import in `path`, at any depth (a function's lazy import included): (module,
    names)."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def _is_engine(module: str) -> bool:
    return (module.split(".")[0] in ENGINES
            or module == "chronicle.site.engines" or module.startswith("chronicle.site.engines."))


def test_loading_the_engine_neutral_build_loads_no_engine() -> None:
    # What `chronicle build` loads before it knows its engine, with everything neutral:
    # nothing of mkdocs, Material, jieba or Zensical is in the process afterwards.
    names = ["chronicle.site.build", "chronicle.site.build_cache", "chronicle.site.progress",
             *(_dotted(p) for folder in NEUTRAL for p in _modules(SITE / folder))]
    code = ("import importlib, json, sys\n"
            f"for name in {names!r}: importlib.import_module(name)\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    loaded = json.loads(done.stdout)
    assert "chronicle.site.outputs.sources" in loaded  # the check ran what it names
    assert [m for m in loaded if _is_engine(m)] == []


def test_each_engine_has_its_adapter_folder_and_every_site_module_a_place() -> None:
    assert sorted(p.name for p in (SITE / "engines").iterdir()
                  if p.is_dir() and p.name != "__pycache__") == ["mkdocs", "zensical"]
    flat = sorted(p.name for p in SITE.glob("*.py"))
    # The command (build), what every engine shares (its caches, its progress lines),
    # the names old chronicles import (__init__, gen_pages): the rest is in a folder.
    assert flat == ["__init__.py", "build.py", "build_cache.py", "gen_pages.py", "progress.py"]


def test_no_private_name_of_an_engine_is_imported() -> None:
    offenders = [f"{path.relative_to(PACKAGE)}: {module} {names}"
                 for path in _modules(PACKAGE) for module, names in _imports(path)
                 if module.split(".")[0] in ENGINES
                 and (any(part.startswith("_") for part in module.split("."))
                      or any(name.startswith("_") for name in names))]
    assert offenders == []


def test_chronicle_keeps_at_most_eight_flat_modules() -> None:
    flat = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(flat) <= 8, flat
