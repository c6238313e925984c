"""The test suite's own layout: shared helpers live in tests/support (and the rehearsal in
tests/rehearsal), so no file under tests/ imports a test module or conftest.py, and every
module is imported under one name (tests.support.x, never a bare `x` off sys.path)."""

from __future__ import annotations

import ast

import pytest

from tests.support.paths import TESTS

FILES = sorted(p for p in TESTS.rglob("*.py") if "fixtures" not in p.parts)
# Module names under tests/: importing `site_factory` bare would load a second copy of it.
LOCAL = frozenset(p.stem for p in FILES if p.stem != "__init__") | frozenset(
    p.parent.name for p in FILES if p.stem == "__init__" and p.parent != TESTS)


def _forbidden(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] in LOCAL:
        return f"imports {module} bare: import it as tests.{module}"
    if parts[0] == "tests" and len(parts) > 1 and (
            parts[1].startswith("test_") or parts[1] == "conftest"):
        return f"imports {module}: move what it needs to tests/support"
    return None


def offending_imports(source: str) -> list[str]:
    """Return one line per import in `source` that breaks the rules above."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                       if node.module == "tests"]
        elif isinstance(node, ast.ImportFrom):
            modules = ["(relative import)"] if node.level else []
        else:
            continue
        for module in modules:
            problem = ("uses a relative import: import from tests.support"
                       if module == "(relative import)" else _forbidden(module))
            if problem:
                found.append(f"line {node.lineno}: {problem}")
    return found


def test_no_file_under_tests_imports_a_test_module() -> None:
    assert len(FILES) > 30
    problems = [f"{path.relative_to(TESTS.parent)} {line}" for path in FILES
                for line in offending_imports(path.read_text(encoding="utf-8"))]
    assert problems == []


@pytest.mark.parametrize("source", [
    "from tests.test_sources_wandb import HERO",
    "from tests import test_pipeline_live",
    "import tests.test_workflows",
    "from tests.conftest import make_config",
    "from site_factory import make_chronicle",
    "import conftest",
    "from test_workflows import _git",
    "from .support.config import make_config",
    "def f():\n    from tests.test_cli import main\n",
])
def test_the_rule_catches_each_way_of_importing_a_test_module(source: str) -> None:
    assert len(offending_imports(source)) == 1


def test_the_rule_allows_support_and_the_rehearsal() -> None:
    source = ("from tests.support.config import make_config\nimport tests.support.goldens\n"
              "from tests.rehearsal.world import night_plan\nfrom tests import support\n")
    assert offending_imports(source) == []


def test_the_fast_selection_leaves_out_what_builds_a_site() -> None:
    # `make test-fast`'s -m expression, as the Makefile gives it, over the whole suite.
    import re
    import subprocess
    import sys

    from tests.support.paths import REPO

    expr = re.search(r'-m "([^"]+)"', (REPO / "Makefile").read_text(encoding="utf-8"))
    assert expr is not None
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "-m", expr.group(1), "tests"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    modules = {line.split("::")[0] for line in run.stdout.splitlines() if "::" in line}
    assert "tests/test_render_formats.py" in modules and len(modules) > 30
    # Found by the helpers they call (tests/conftest.py), or marked by hand.
    assert not modules & {"tests/test_site_build.py", "tests/test_rehearsal.py",
                          "tests/test_demo.py", "tests/test_pipeline_live.py"}
