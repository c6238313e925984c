"""config/template.py: a line of chronicle.yml written from a key's declaration reads back,
through YAML and the key's own check, as the declared default."""

from __future__ import annotations

import pytest
import yaml

from chronicle.config import declared_keys
from chronicle.config.fields import REQUIRED, UNSET
from chronicle.config.template import COMMENT_COLUMN, declaration, declared_line, yaml_text

# Every key with a plain default (not a section, not a factory-made mapping or list, not
# "" or None: a value derived when absent).
PLAIN = [p for p in declared_keys()
         if declaration(p).default not in (REQUIRED, UNSET) and declaration(p).factory is None
         and declaration(p).default not in (None, "") and declaration(p).schema is None]


def test_there_are_defaults_to_write() -> None:
    assert {"wandb.mfu_unit", "failures.gap_minutes", "simulated.seed", "site.engine",
            "sealing.max_wait_days"} <= set(PLAIN)


@pytest.mark.parametrize("path", PLAIN)
def test_a_declared_line_reads_back_as_the_default(path: str) -> None:
    opt = declaration(path)
    line = declared_line(path)
    key = path.rsplit(".", 1)[-1]
    value = yaml.safe_load(line)[key]
    assert opt.check(value) == opt.default
    assert line.endswith(f"# {opt.doc}")


def test_the_comment_lines_up_and_a_value_can_be_given() -> None:
    line = declared_line("simulated.days", 42)
    assert line.index("#") == COMMENT_COLUMN - 2  # after the section's two-space indent
    assert yaml.safe_load(line) == {"days": 42}
    assert declared_line("site.engine", indent=4).index("#") == COMMENT_COLUMN - 4


@pytest.mark.parametrize(("value", "text"), [
    (10.0, "10"), (0.5, "0.5"), (535, "535"), (True, "true"), ("percent", "percent"),
    ("a: b", '"a: b"'), (("en", "zh"), "[en, zh]"), ({"a": 1}, "{a: 1}"),
])
def test_values_are_written_as_yaml_reads_them(value: object, text: str) -> None:
    assert yaml_text(value) == text
    assert yaml.safe_load(f"k: {text}")["k"] == (list(value) if isinstance(value, tuple)
                                                 else value)


def test_an_undeclared_key_is_named() -> None:
    with pytest.raises(KeyError, match=r"wandb\.nope"):
        declared_line("wandb.nope")
