"""Where things are: the repository, its test fixtures and the scaffold."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
FIXTURES = TESTS / "fixtures"
SCAFFOLD = REPO / "chronicle" / "scaffold"
