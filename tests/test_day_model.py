"""The day JSON's declared shape (analysis/day_model.py): documented, and what sealing writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_type_hints

from chronicle.analysis.day_model import DaySummary, figure_at, figures, required_fields
from tests.support.goldens import unpack_v1
from tests.support.paths import REPO

DAY_JSON_PAGE = REPO / "documentation" / "pages" / "day-json.md"


def test_every_day_field_is_documented() -> None:
    section = DAY_JSON_PAGE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    missing = [k for k in get_type_hints(DaySummary) if f"`{k}`" not in section]
    assert not missing, f"{DAY_JSON_PAGE.name}'s Day JSON section lacks {missing}"


def test_sealed_day_json_has_exactly_the_declared_fields(tmp_path: Path) -> None:
    # The v1 chronicle's sealed days, written before the TypedDicts existed, fit them.
    unpack_v1(tmp_path)
    declared = set(get_type_hints(DaySummary))
    required = required_fields()
    for path in sorted((tmp_path / "docs" / "days").glob("*.json")):
        day = json.loads(path.read_text(encoding="utf-8"))
        assert set(day) <= declared, f"{path.name}: undeclared {set(day) - declared}"
        assert required <= set(day), f"{path.name}: lacks {required - set(day)}"
        # Every figure with provenance is a figure the types declare, and vice versa.
        recorded = set(day["provenance"]["figures"])
        assert recorded == {p for p, _ in figures() if figure_at(day, p) not in (None, {})}


def test_figure_methods_are_versioned_ids() -> None:
    found = dict(figures())
    assert "tokens.day" in found and "cost.usd" in found and "downtime_seconds" in found
    for path, fig in found.items():
        assert re.fullmatch(r"[a-z_]+/\d+", fig.method), path
        assert fig.kind in ("OBSERVED", "DERIVED") and fig.scopes, path


def test_fields_older_sealed_days_lack_are_not_required() -> None:
    required = required_fields()
    assert {"changes", "sequence_length", "summary", "provenance"}.isdisjoint(required)
    assert {"date", "tokens", "moe", "threads_updated"} <= required
