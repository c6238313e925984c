"""The README documents every config key and every CLI option (datasette-style check)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from chronicle.cli import main
from chronicle.config import DEFAULT_METRICS, declared_keys

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
_TICKED = re.compile(r"`([^`]+)`")


def _config_table() -> list[tuple[set[str], str]]:
    """Return (keys in the first column, meaning) for each row of the README's key table."""
    section = README.split("## Configuration: `chronicle.yml`")[1].split("\n## ")[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            keys, meaning = line.strip("|").split("|", 1)
            rows.append((set(_TICKED.findall(keys)), meaning))
    return rows


def _documented(path: str, rows: list[tuple[set[str], str]]) -> bool:
    """A key has its own row, or its nearest ancestor with a row names it in `backticks`."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        ancestor = ".".join(parts[:cut])
        for keys, meaning in rows:
            if ancestor in keys:
                return cut == len(parts) or f"`{parts[-1]}`" in meaning
    return False


def test_every_declared_config_key_is_in_the_readme_table() -> None:
    rows = _config_table()
    assert len(rows) > 20
    declared = declared_keys()
    parents = {p.rsplit(".", 1)[0] for p in declared if "." in p}
    # Sections (run, wandb, ...) are documented by their keys; every leaf needs a row.
    leaves = [p for p in declared if p not in parents or any(p in keys for keys, _ in rows)]
    missing = [k for k in leaves if not _documented(k, rows)]
    assert not missing, f"README's configuration table lacks: {missing}"


def test_the_readme_table_documents_only_declared_keys() -> None:
    declared = set(declared_keys())
    stale = [k for keys, _ in _config_table() for k in keys if k not in declared]
    assert not stale, f"README documents keys chronicle.yml does not have: {stale}"


def test_every_canonical_metric_is_documented() -> None:
    missing = [m for m in DEFAULT_METRICS if f"`{m}`" not in README]
    assert not missing


def test_every_cli_command_and_option_is_documented() -> None:
    assert isinstance(main, click.Group)
    missing = []
    for name, command in main.commands.items():
        if f"chronicle {name}" not in README:
            missing.append(name)
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt not in README:
                    missing.append(f"{name} {opt}")
    assert not missing, f"README lacks: {missing}"


def test_readme_starts_with_the_two_setup_commands() -> None:
    head = README.split("\n## ")[0]
    assert "make demo" in head and "make test" in head
