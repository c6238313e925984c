"""The GitHub Actions workflows and chronicle's own actions (action.yml, actions/*/) as
data, and their `run:` steps run as GitHub runs them (bash -e -o pipefail, GITHUB_OUTPUT
collected) with a bin folder of fake commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import REPO, SCAFFOLD

NIGHTLY = REPO / ".github" / "workflows" / "nightly.yml"
CI = REPO / ".github" / "workflows" / "ci.yml"
SCAFFOLD_NIGHTLY = SCAFFOLD / "workflows" / "nightly.yml"
# chronicle's actions: the night's work, and the two that run in jobs of their own.
ACTION = REPO / "action.yml"
ARCHIVE_ACTION = REPO / "actions" / "archive" / "action.yml"
KEEPALIVE_ACTION = REPO / "actions" / "keepalive" / "action.yml"
ACTIONS = {"snapshot": ACTION, "archive": ARCHIVE_ACTION, "keepalive": KEEPALIVE_ACTION}
# The official actions chronicle's actions and workflows use (the rest are chronicle's).
OFFICIAL = ("actions/",)


def load_workflow(path: Path) -> dict[Any, Any]:
    """Return the parsed workflow file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    """Return the workflow's triggers."""
    # YAML 1.1 reads the bare key `on` as the boolean True.
    return workflow[True]


def all_steps(workflow: dict[Any, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Return (job name, step) for every step of every job."""
    return [(job, step) for job, spec in workflow["jobs"].items() for step in spec["steps"]]


def find_step(workflow: dict[Any, Any], job: str, name_part: str) -> dict[str, Any]:
    """Return the one step of `job` whose name contains `name_part`."""
    matches = [s for j, s in all_steps(workflow) if j == job and name_part in s.get("name", "")]
    assert len(matches) == 1, f"one step of job {job} named like {name_part!r}"
    return matches[0]


def load_action(path: Path) -> dict[str, Any]:
    """Return the parsed action metadata file (action.yml)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def action_steps(path: Path) -> list[dict[str, Any]]:
    """Return the steps of a composite action, in order."""
    steps = load_action(path)["runs"]["steps"]
    assert isinstance(steps, list)
    return steps


def action_step(path: Path, name_part: str) -> dict[str, Any]:
    """Return the one step of the action at `path` whose name contains `name_part`."""
    matches = [s for s in action_steps(path) if name_part in s.get("name", "")]
    assert len(matches) == 1, f"one step of {path} named like {name_part!r}"
    return matches[0]


def ours(uses: str) -> bool:
    """Whether a `uses:` names one of chronicle's own actions (not an official one)."""
    return not uses.startswith(OFFICIAL)


def action_uses(workflow: dict[Any, Any]) -> dict[str, str]:
    """Return {job: the `uses:` of chronicle's action it runs} for the jobs running one."""
    return {job: step["uses"] for job, step in all_steps(workflow)
            if ours(step.get("uses", "actions/"))}


def action_repository(workflow: dict[Any, Any]) -> tuple[str, str]:
    """Return (owner/name, version tag) of chronicle's actions the workflow calls: the one
    place a fork changes (README "Running it nightly for a real run")."""
    repo, _, tag = action_uses(workflow)["snapshot"].partition("@")
    return repo, tag


def fake_bin(tmp: Path, **scripts: str) -> Path:
    """A bin folder with `python` (this interpreter) and the given shell scripts."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    # A script, not a symlink: Python finds its venv (pyvenv.cfg) from the path it is
    # started by, so a symlinked venv python outside .venv/bin loses the venv's packages.
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        path.chmod(0o755)
    return bin_dir


def run_step(
    step: dict[str, Any], cwd: Path, bin_dir: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run a step's script as GitHub does (bash -e -o pipefail); return it and its outputs."""
    script = cwd.parent / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    outputs = cwd.parent / "github_output"
    outputs.write_text("", encoding="utf-8")
    full_env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(cwd.parent),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_REF": "refs/heads/main",
        "GIT_CONFIG_NOSYSTEM": "1",
        **env,
    }
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60, check=False,
    )
    pairs = [line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines()]
    return result, dict(pairs)
