"""The README documents every config key and every CLI option (datasette-style check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from chronicle.cli import main
from chronicle.config import _SCHEMA, DEFAULT_METRICS

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def _keys(schema: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, spec in schema.items():
        if isinstance(spec, dict):
            out += _keys(spec, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def test_every_config_key_is_documented() -> None:
    missing = [k for k in _keys(_SCHEMA) if f"`{k}`" not in README and k not in README]
    assert not missing, f"README lacks config keys: {missing}"


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
