"""The configuration reference (config/reference.py): each key's default and doc from its
declaration, what it accepts in its check's own words, cells that stay table cells."""

from __future__ import annotations

import re

from chronicle.config.reference import reference, reference_keys, table_cell
from chronicle.config.template import declaration

REFERENCE = reference()


def _row(key: str) -> list[str]:
    line = next(li for li in REFERENCE.splitlines() if li.startswith(f"| `{key}` |"))
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_a_row_is_the_declaration_default_doc_and_what_the_check_expects() -> None:
    assert _row("wandb.timeout_seconds") == [
        "`wandb.timeout_seconds`", "`30`", "a whole number from 1 to 3,600",
        declaration("wandb.timeout_seconds").doc]
    assert _row("site.engine")[1:3] == ["`mkdocs`", "one of mkdocs, zensical"]
    assert _row("run.name")[1] == "required"
    assert _row("run.sequence_length")[1] == "not set"
    assert _row("failures")[1] == "its keys' defaults"
    # A check that takes an empty string says so, though its message names a non-empty one.
    assert _row("claims[].unit")[2] == "a string (may be empty)"


def test_a_list_of_mappings_names_its_item_keys() -> None:
    assert "risks[].after" in reference_keys()
    assert "### `risks`\n\nNamed risks watched over a budget window: a list; each item has " \
           "these keys." in REFERENCE


def test_a_long_default_is_listed_under_its_own_heading_and_linked() -> None:
    assert _row("wandb.keys")[1] == "[below](#default-of-wandbkeys)"
    assert "#### Default of `wandb.keys`\n\n`train/loss`, " in REFERENCE
    assert "| `grad_norm` | `grad_norm` | `max > 2` | the day | warn |" in REFERENCE
    assert "| `loss` | `train/loss` |" in REFERENCE


def test_a_cell_escapes_tags_emphasis_and_pipes_outside_code() -> None:
    assert table_cell("'<stat> <op>' like `a|b` or a*b|c") == (
        r"'&lt;stat> &lt;op>' like `a\|b` or a\*b\|c")
