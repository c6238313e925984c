"""Rehearse the nightly workflow locally: `python -m tests.rehearsal [--nights N] [--keep DIR]`.

Runs the nightly workflow (.github/workflows/nightly.yml) as a runner would: for its
snapshot job and its keepalive job, the `with:` the workflow gives chronicle's action
(action.yml, actions/keepalive/action.yml) becomes the action's inputs, and the action's
`run:` steps run in order with bash as GitHub runs them, the real `chronicle` CLI of this
venv and fake W&B and GitHub servers on 127.0.0.1; commits go to a local bare git remote.
Night 2's first attempt is killed halfway, W&B answers 500 on night 3, and night 4 has
no new data while a maintainer pushes to the branch (the job's push must rebase). After
every night the checks in tests/rehearsal/checks.py run; the first failing check stops
the rehearsal with a message naming the night and the check.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from chronicle.store import snapshot_id
from tests.rehearsal.checks import NightResult, RehearsalFailure, check_final, check_night
from tests.rehearsal.world import (
    ENTITY,
    MAINTAINER_SUBJECT,
    MIN_NIGHTS,
    PROJECT,
    RUN,
    START,
    Night,
    World,
    night_plan,
)
from tests.support.git import git
from tests.support.killpoint import KILLED_EXIT
from tests.support.paths import REPO
from tests.support.workflows import (
    ACTIONS,
    NIGHTLY,
    action_steps,
    action_uses,
    load_action,
    load_workflow,
    run_step,
)

# >= 40 characters, as W&B keys are; the checks make sure it never reaches a file.
API_KEY = "rehearsal-wandb-key-0123456789abcdef-0123456789abcdef"
GH_TOKEN = "ghs_rehearsal0123456789abcdefREHEARSAL"
CACHE_KEY = "rehearsal-cache-key-0123456789abcdef"  # signs .cache/chronicle's entries
COLD_NIGHT = MIN_NIGHTS  # the night the workflow also builds without the cache
BRANCH = "main"
# `run:` steps of the actions that only make sense on a GitHub runner, by name, and why
# they are skipped (`uses:` steps, the official actions, are a runner's too).
SKIPPED = {
    "Install chronicle": "pip-installs chronicle; the rehearsal runs this checkout's CLI "
                         "from the current venv instead",
}
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
KILL_WAIT_SECONDS = 120.0
MAX_LOG_LINES = 40  # of a failing step's output in the failure message
CHECKED = (
    "Checked each night: snapshot exit code (3 when W&B failed), the ::warning naming "
    "wandb, one whole new snapshot and no half-written one, source statuses, the day "
    "sealed, every W&B row stored once and none lost, threads as GitHub shows them, one "
    "new commit on the remote naming the snapshot and child of the last, earlier files "
    "byte-for-byte unchanged, verify, build, check-site, the stale notice. At the "
    "end: a fresh clone verifies; no secret in any committed or built file."
)


@dataclass(frozen=True)
class Scratch:
    """The rehearsal's folders: the bare remote, the runner's checkout and temp space."""

    root: Path

    @property
    def remote(self) -> Path:
        return self.root / "remote.git"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def temp(self) -> Path:
        return self.root / "runner-temp"

    @property
    def shim(self) -> Path:
        return self.root / "bin"


def venv_chronicle() -> Path:
    """Return the `chronicle` executable beside this interpreter (e.g. .venv/bin)."""
    path = Path(sys.executable).parent / "chronicle"
    if not path.is_file():
        raise RehearsalFailure(0, "set-up", f"{path} not found: install chronicle into this "
                               "venv first (`make install`, or pip install -e .)")
    return path


def _job_action(job: str) -> Path:
    """Return the file of chronicle's action the workflow's `job` runs: the local copy of
    what its `uses:` names (this checkout is the version the rehearsal tests)."""
    uses = action_uses(load_workflow(NIGHTLY)).get(job)
    if uses is None:
        raise RehearsalFailure(0, "set-up", f"{NIGHTLY}: job {job} runs none of chronicle's "
                               "actions")
    path = uses.partition("@")[0].split("/", 2)[2:]  # owner/name[/actions/x]
    local = REPO.joinpath(*path, "action.yml") if path else REPO / "action.yml"
    if local != ACTIONS[job]:
        raise RehearsalFailure(0, "set-up", f"{NIGHTLY}: job {job} uses {uses}, not "
                               f"{ACTIONS[job].relative_to(REPO)}")
    return local


def _action_inputs(job: str, context: dict[str, str]) -> dict[str, str]:
    """Return the inputs the workflow's `job` gives its action: its `with:`, evaluated in
    the workflow's context, over the action's defaults."""
    (step,) = [s for s in load_workflow(NIGHTLY)["jobs"][job]["steps"] if "uses" in s]
    declared = load_action(_job_action(job)).get("inputs") or {}
    given = {k: str(v) for k, v in (step.get("with") or {}).items()}
    unknown = set(given) - set(declared)
    if unknown:
        raise RehearsalFailure(0, "set-up", f"{NIGHTLY}: job {job} gives its action inputs "
                               f"it does not have: {sorted(unknown)}")
    return {name: expand(given.get(name, str(spec.get("default", ""))), context)
            for name, spec in declared.items()}


def _action_run_steps(job: str) -> list[dict[str, Any]]:
    """Return the `run:` steps of the job's action in order, minus the GitHub-only ones
    (SKIPPED)."""
    path = _job_action(job)
    steps = action_steps(path)
    names = {s.get("name") for s in steps}
    missing = set(SKIPPED) - names if job == "snapshot" else set()
    if missing:
        raise RehearsalFailure(0, "set-up", f"{path}: no step named {sorted(missing)}; "
                               "update SKIPPED in tests/rehearsal/runner.py")
    for step in steps:
        if "if" in step or step.get("shell", "bash") != "bash":
            raise RehearsalFailure(0, "set-up", f"{path}: step {step.get('name')!r} uses "
                                   "if/shell, which the rehearsal cannot run")
    return [s for s in steps if "run" in s and s.get("name") not in SKIPPED]


def expand(text: str, context: dict[str, str]) -> str:
    """Substitute ${{ a || b }} expressions from `context`; unknown names fail loudly."""

    def value(match: re.Match[str]) -> str:
        for name in (part.strip() for part in match.group(1).split("||")):
            if name not in context:
                raise RehearsalFailure(0, "workflow expression", f"{NIGHTLY}: the "
                                       f"rehearsal cannot evaluate ${{{{ {name} }}}}")
            if context[name]:
                return context[name]
        return ""

    return _EXPR.sub(value, text)


def _set_up(scratch: Scratch, world: World) -> None:
    """Make the bare remote and the runner's clone of it: a `chronicle init` chronicle."""
    scratch.root.mkdir(parents=True, exist_ok=True)
    seed = scratch.root / "seed"
    subprocess.run([str(venv_chronicle()), "init", str(seed), "--source", "live",
                    "--name", "Rehearsal of the Marin hero run"],
                   check=True, capture_output=True, timeout=60)
    config_path = seed / "chronicle.yml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["run"]["start"] = START
    config["run"].pop("example", None)  # its run values are set (init marks them examples)
    config["wandb"].update({"entity": ENTITY, "project": PROJECT, "runs": [RUN],
                            "timeout_seconds": 2})
    config["github"] = {"repo": world.github.world["repo"], "issues": [8506, 8453],
                        "labels": ["hero-run"], "failure_labels": ["incident"],
                        "max_rate_limit_wait_seconds": 1}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    git(scratch.root, "init", "-q", "--bare", str(scratch.remote))
    git(seed, "init", "-q")
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "chronicle init")
    git(seed, "push", "-q", str(scratch.remote), f"HEAD:refs/heads/{BRANCH}")
    git(scratch.root, "clone", "-q", "--branch", BRANCH, str(scratch.remote), str(scratch.work))
    scratch.temp.mkdir()
    scratch.shim.mkdir()
    # `chronicle` is the venv's real CLI, wrapped to record its exit code for the checks.
    shim = scratch.shim / "chronicle"
    shim.write_text(f'#!/bin/sh\n"{venv_chronicle()}" "$@"\nrc=$?\n'
                    f'echo "$rc $*" >> "{scratch.root / "chronicle-calls"}"\nexit $rc\n',
                    encoding="utf-8")
    shim.chmod(0o755)


def _env(scratch: Scratch, world: World) -> dict[str, str]:
    """Return the runner's environment, minus each step's own `env:`."""
    return {
        "PATH": os.pathsep.join([str(scratch.shim), str(Path(sys.executable).parent),
                                 os.environ.get("PATH", "/usr/bin:/bin")]),
        "WANDB_BASE_URL": world.wandb.url,
        "GITHUB_API_URL": world.github.base_url,
        "GITHUB_STEP_SUMMARY": str(scratch.root / "step-summary.md"),
        "RUNNER_TEMP": str(scratch.temp),
        "LC_ALL": "C.UTF-8",
    }


def _workflow_context(scratch: Scratch, night: Night) -> dict[str, str]:
    """What the workflow's expressions read (its secrets, its dispatch inputs, github.*)."""
    return {
        "secrets.WANDB_API_KEY": API_KEY,
        "secrets.CHRONICLE_GITHUB_TOKEN": "",
        "github.token": GH_TOKEN,
        "github.ref": f"refs/heads/{BRANCH}",
        "runner.temp": str(scratch.temp),
        "inputs.as_of": night.stamp,
        # One night builds the site again without the cache and compares (Sundays do).
        "inputs.cold_build": "true" if night.number == COLD_NIGHT else "false",
        "secrets.CHRONICLE_CACHE_KEY": CACHE_KEY,
    }


def _context(scratch: Scratch, night: Night, job: str, inputs: dict[str, str],
             outputs: dict[str, dict[str, str]]) -> dict[str, str]:
    """What the action's expressions read: its inputs, its earlier steps' outputs and the
    github and runner contexts (github.action_path: this checkout's copy of it)."""
    workflow = _workflow_context(scratch, night)
    context = {k: v for k, v in workflow.items() if k.startswith(("github.", "runner."))}
    context["github.action_path"] = str(_job_action(job).parent)
    context.update({f"inputs.{k}": v for k, v in inputs.items()})
    for step_id, values in outputs.items():
        context.update({f"steps.{step_id}.outputs.{k}": v for k, v in values.items()})
    return context


def _run_job(job: str, scratch: Scratch, night: Night, env: dict[str, str]) -> list[str]:
    """Run the steps of the action of a job of the workflow in the checkout; return their
    logs. A failing step fails the night."""
    outputs: dict[str, dict[str, str]] = {}  # step id -> what it wrote to GITHUB_OUTPUT
    inputs = _action_inputs(job, _workflow_context(scratch, night))
    action_path = str(_job_action(job).parent)
    logs = []
    for step in _action_run_steps(job):
        context = _context(scratch, night, job, inputs, outputs)
        step_env = {k: expand(str(v), context) for k, v in (step.get("env") or {}).items()}
        script = {"run": expand(step["run"], context)}
        folder = expand(step.get("working-directory", "."), context)
        cwd = scratch.work if folder in ("", ".") else scratch.work / folder
        started = time.monotonic()
        try:
            result, out = run_step(script, cwd, scratch.shim,
                                   {**env, "GITHUB_ACTION_PATH": action_path, **step_env})
        except subprocess.TimeoutExpired as err:
            raise RehearsalFailure(night.number, f"step {step['name']!r} finished",
                                   f"still running after {err.timeout} s") from err
        if "id" in step:
            outputs[step["id"]] = out
        logs.append(f"--- {job} / {step['name']} (exit {result.returncode}, "
                    f"{time.monotonic() - started:.1f} s)\n{result.stdout}{result.stderr}")
        with (scratch.root / f"night-{night.number}.log").open("a", encoding="utf-8") as log:
            log.write(logs[-1] + "\n")
        if result.returncode != 0:
            tail = "\n".join(logs[-1].splitlines()[-MAX_LOG_LINES:])
            raise RehearsalFailure(night.number, f"step {step['name']!r} exited "
                                   f"{result.returncode}", tail)
    return logs


def _interrupted_attempt(scratch: Scratch, night: Night, env: dict[str, str]) -> str:
    """Run `chronicle snapshot` for `night` and SIGKILL it halfway through writing.

    tests.support.killpoint kills it when it starts staging the sealed day files inside the
    snapshot's temporary folder: the snapshot's data files are written, nothing committed.
    """
    sid = snapshot_id(night.as_of)
    log = (scratch.root / "killed-attempt.log").open("w", encoding="utf-8")
    full_env = {**env, "HOME": str(scratch.root), "WANDB_API_KEY": API_KEY,
                "GITHUB_TOKEN": GH_TOKEN, "WANDB_ERROR_REPORTING": "false",
                "WANDB_DIR": str(scratch.temp / "wandb"),
                "WANDB_CACHE_DIR": str(scratch.temp / "wandb-cache"),
                "WANDB_CONFIG_DIR": str(scratch.temp / "wandb-config"),
                "PYTHONPATH": str(REPO)}
    with log:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.support.killpoint", "stage", "--", "snapshot",
             "--as-of", night.stamp], cwd=scratch.work, env=full_env, stdout=log, stderr=log,
            start_new_session=True, timeout=KILL_WAIT_SECONDS, check=False)
    tmp = scratch.work / "docs" / "data" / f".tmp-{sid}"
    if proc.returncode != KILLED_EXIT or not tmp.is_dir():
        raise RehearsalFailure(night.number, "killed attempt", f"the snapshot exited "
                               f"{proc.returncode} before staging a sealed page (log: {log.name})")
    left = sorted(p.name for p in tmp.iterdir())
    return f"killed mid-write: left .tmp-{sid}/ ({', '.join(left)})"


def _maintainer_push(scratch: Scratch) -> str:
    """Push an unrelated commit to the branch, as a maintainer might while the job runs."""
    clone = scratch.root / "maintainer"
    if not clone.exists():
        git(scratch.root, "clone", "-q", "--branch", BRANCH, str(scratch.remote), str(clone))
    git(clone, "pull", "-q", "--ff-only", "origin", BRANCH)
    (clone / "NOTES.md").write_text("Ask in marin-community/marin#8506.\n", encoding="utf-8")
    git(clone, "add", "NOTES.md")
    git(clone, "commit", "-q", "-m", MAINTAINER_SUBJECT)
    git(clone, "push", "-q", "origin", f"HEAD:refs/heads/{BRANCH}")
    return f"a maintainer pushed {git(clone, 'rev-parse', '--short=10', 'HEAD')} meanwhile"


def _say(line: str) -> None:
    print(line, flush=True)  # night by night, also when stdout is a pipe (make)


def rehearse(nights: int, root: Path, echo: Any = _say) -> list[NightResult]:
    """Run the rehearsal in `root` (must not exist or be empty); return each night's result."""
    if root.exists() and any(root.iterdir()):
        raise RehearsalFailure(0, "set-up", f"{root} is not empty; pass a new folder to --keep")
    scratch = Scratch(root)
    plan = night_plan(nights)
    results: list[NightResult] = []
    with World(API_KEY) as world:
        _set_up(scratch, world)
        env = _env(scratch, world)
        for night in plan:
            started = time.monotonic()
            world.set_night(night)
            note = ""
            if night.interrupted_first:
                note = _interrupted_attempt(scratch, night, env)
            if night.maintainer_push:
                note = _maintainer_push(scratch)
            logs = _run_job("snapshot", scratch, night, env)
            logs += _run_job("keepalive", scratch, night, env)
            result = check_night(scratch.root, night, world, results, logs,
                                 time.monotonic() - started, note)
            results.append(result)
            echo(result.line())
        check_final(scratch.root, plan, results, secrets=(API_KEY, GH_TOKEN, CACHE_KEY))
    return results


def _hint(keep: Path | None) -> str:
    if keep is None:
        return "\n(rerun with --keep DIR to keep the scratch repositories and night-N.log files)"
    return f"\n(scratch repositories and night-N.log files are in {keep})"


def main(argv: list[str] | None = None) -> int:
    """Run the rehearsal from the command line; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m tests.rehearsal", description=__doc__)
    parser.add_argument("--nights", type=int, default=5, help="nights to rehearse (>= 5)")
    parser.add_argument("--keep", type=Path, help="run in this new folder and keep it")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="chronicle-rehearsal-") as tmp:
        root = args.keep.resolve() if args.keep else Path(tmp) / "r"
        print(f"rehearsing {args.nights} nights of .github/workflows/nightly.yml in {root}")
        print(NightResult.header())
        try:
            rehearse(args.nights, root)
        except (RehearsalFailure, ValueError) as err:
            print(f"rehearsal FAILED: {err}{_hint(args.keep)}", file=sys.stderr)
            return 1
        except subprocess.CalledProcessError as err:
            print(f"rehearsal FAILED: {' '.join(map(str, err.cmd))} exited {err.returncode}: "
                  f"{err.stderr or ''}{_hint(args.keep)}", file=sys.stderr)
            return 1
    print(f"rehearsal passed: {args.nights} nights in {time.monotonic() - started:.1f} s. "
          f"{CHECKED}")
    return 0

