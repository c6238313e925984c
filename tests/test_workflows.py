"""The GitHub Actions workflows: actionlint-clean, and shaped as the nightly contract says.
The nightly workflow a chronicle gets (chronicle/scaffold/workflows/nightly.yml, copied to
this repository's .github/workflows/) is a short caller of chronicle's actions; what the
actions do, step by step, is tested in test_action.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.actionlint import local_caller, run_actionlint
from tests.support.paths import REPO
from tests.support.workflows import (
    ACTION,
    ACTIONS,
    CI,
    NIGHTLY,
    SCAFFOLD_NIGHTLY,
    action_repository,
    action_uses,
    all_steps,
    load_action,
    load_workflow,
    ours,
    triggers,
)

WORKFLOWS = [NIGHTLY, CI, SCAFFOLD_NIGHTLY]
# Lowest majors that run on Node 24 (actionlint flags the Node 20 ones as deprecated).
MIN_MAJOR = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/upload-pages-artifact": 4,
    "actions/deploy-pages": 5,
}
MAX_CALLER_LINES = 80  # a chronicle's copy stays short: the work lives in the actions


# ---- actionlint -------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(REPO)))
def test_actionlint_is_clean(path: Path) -> None:
    result = run_actionlint(path)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_actionlint_checks_the_callers_inputs_against_the_actions(tmp_path: Path) -> None:
    repository, _ = action_repository(load_workflow(SCAFFOLD_NIGHTLY))
    workflow = local_caller(SCAFFOLD_NIGHTLY, repository, tmp_path)
    result = run_actionlint(workflow, cwd=tmp_path)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")
    # ...and would say so of an input an action does not have.
    text = workflow.read_text(encoding="utf-8")
    workflow.write_text(text.replace("cache-key:", "cache_key:"), encoding="utf-8")
    result = run_actionlint(workflow, cwd=tmp_path)
    assert result.returncode == 1
    assert 'input "cache_key" is not defined in action "chronicle nightly"' in result.stdout


def test_actionlint_catches_a_deprecated_action_and_a_bad_expression(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: echo ${{ github.nonexistent_thing }}\n",
        encoding="utf-8",
    )
    result = run_actionlint(bad)
    assert result.returncode == 1
    assert 'runtime "node20" is deprecated' in result.stdout
    assert "nonexistent_thing" in result.stdout


# ---- the nightly caller -------------------------------------------------------------------


def test_the_caller_is_short_and_names_one_repository_at_one_version() -> None:
    text = SCAFFOLD_NIGHTLY.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_CALLER_LINES
    wf = load_workflow(SCAFFOLD_NIGHTLY)
    repository, tag = action_repository(wf)
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", repository) and re.fullmatch(r"v\d+", tag)
    # The night's work, the archive and the keep-alive: each job runs one of the actions
    # of that repository at that version, and nothing to fill in but the run's secrets.
    assert action_uses(wf) == {"snapshot": f"{repository}@{tag}",
                               "archive": f"{repository}/actions/archive@{tag}",
                               "keepalive": f"{repository}/actions/keepalive@{tag}"}
    assert all((REPO / rel).is_file() for rel in ("action.yml", "actions/archive/action.yml",
                                                   "actions/keepalive/action.yml"))
    assert "<" not in text and "CHRONICLE_PACKAGE" not in text and "vars." not in text


def test_schedule_is_daily_and_off_the_top_of_the_hour() -> None:
    schedule = triggers(load_workflow(NIGHTLY))["schedule"]
    assert len(schedule) == 1
    minute, hour, dom, month, dow = schedule[0]["cron"].split()
    assert minute.isdigit() and 1 <= int(minute) <= 59, "minute 0 is GitHub's busiest"
    assert hour.isdigit() and (dom, month, dow) == ("*", "*", "*")


def test_manual_runs_take_an_optional_as_of_and_cold_build() -> None:
    wf = load_workflow(NIGHTLY)
    inputs = triggers(wf)["workflow_dispatch"]["inputs"]
    assert inputs["as_of"]["required"] is False and inputs["as_of"]["type"] == "string"
    cold = inputs["cold_build"]
    assert (cold["type"], cold["default"], cold["required"]) == ("boolean", False, False)
    (step,) = wf["jobs"]["snapshot"]["steps"]
    assert step["with"]["as-of"] == "${{ inputs.as_of }}"
    assert step["with"]["cold-build"] == "${{ inputs.cold_build }}"


def test_runs_never_overlap_nor_cancel_a_snapshot() -> None:
    concurrency = load_workflow(NIGHTLY)["concurrency"]
    assert concurrency["group"]
    assert concurrency["cancel-in-progress"] is False


def test_permissions_are_least_privilege() -> None:
    wf = load_workflow(NIGHTLY)
    assert wf["permissions"] == {}
    jobs = wf["jobs"]
    assert jobs["snapshot"]["permissions"] == {"contents": "write"}
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["keepalive"]["permissions"] == {"contents": "write"}
    assert jobs["archive"]["permissions"] == {"contents": "write"}
    ci = load_workflow(CI)
    assert ci["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in ci["jobs"].values())


def test_ci_runs_make_test_on_every_push_and_pull_request() -> None:
    ci = load_workflow(CI)
    assert set(triggers(ci)) == {"push", "pull_request"}
    (job,) = ci["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    assert job["container"] == "python:3.11-bookworm"  # Debian, as the dev machines
    assert job["steps"][-1]["run"].splitlines()[-1] == "make test"


def test_every_job_has_a_timeout() -> None:
    for path in (NIGHTLY, CI):
        for name, job in load_workflow(path)["jobs"].items():
            assert 0 < job["timeout-minutes"] <= 60, f"{path.name}: job {name}"


def test_deploy_job_deploys_the_pages_artifact_the_action_uploaded() -> None:
    deploy = load_workflow(NIGHTLY)["jobs"]["deploy"]
    assert deploy["needs"] == "snapshot"
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    upload = [s for s in load_action(ACTION)["runs"]["steps"]
              if s.get("uses", "").startswith("actions/upload-pages")]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "${{ inputs.directory }}/site"


def test_the_archive_job_runs_after_the_deploy_and_the_keepalive_whatever_happened() -> None:
    jobs = load_workflow(NIGHTLY)["jobs"]
    assert jobs["archive"]["needs"] == "deploy"
    assert jobs["keepalive"]["needs"] == "snapshot"
    assert jobs["keepalive"]["if"] == "${{ !cancelled() }}"


def test_secrets_reach_the_actions_inputs_only() -> None:
    wf = load_workflow(NIGHTLY)
    steps = {job: step for job, step in all_steps(wf) if ours(step.get("uses", "actions/"))}
    assert steps["snapshot"]["with"] == {
        "wandb-api-key": "${{ secrets.WANDB_API_KEY }}",
        "github-token": "${{ secrets.CHRONICLE_GITHUB_TOKEN || github.token }}",
        "cache-key": "${{ secrets.CHRONICLE_CACHE_KEY }}",
        "as-of": "${{ inputs.as_of }}", "cold-build": "${{ inputs.cold_build }}"}
    assert steps["archive"]["with"] == {
        "wayback-access-key": "${{ secrets.WAYBACK_S3_ACCESS_KEY }}",
        "wayback-secret-key": "${{ secrets.WAYBACK_S3_SECRET_KEY }}"}
    assert "with" not in steps["keepalive"]
    others = [s for _, s in all_steps(wf) if all(s is not x for x in steps.values())]
    assert not any("secrets." in json.dumps(s) for s in others)


def test_no_browser_in_the_nightly_job() -> None:
    # The one system package a night installs is the font its Chinese charts are drawn
    # with (when the runner lacks it); never a browser, nor the test extras.
    for path in (NIGHTLY, *ACTIONS.values()):
        text = path.read_text(encoding="utf-8").lower()
        for banned in ("chromium", "playwright", "[dev]"):
            assert banned not in text, f"{path}: {banned}"
        installs = re.findall(r"apt-get install[^\n]*", text)
        assert all(line.split()[-2:] == ["fonts-noto-cjk", ">/dev/null"] for line in installs), \
            (path, installs)


def test_actions_are_current_majors() -> None:
    for path in WORKFLOWS:
        for _, step in all_steps(load_workflow(path)):
            if "uses" not in step:
                continue
            action, _, ref = step["uses"].partition("@")
            assert re.fullmatch(r"v\d+", ref), f"{path.name}: pin {action} to a major tag"
            if ours(action):
                continue  # chronicle's own (test_the_caller_is_short_and_names_...)
            assert int(ref[1:]) >= MIN_MAJOR[action], f"{path.name}: {step['uses']} is old"


def test_history_is_never_rewritten() -> None:
    for path in (*WORKFLOWS, *ACTIONS.values()):
        text = path.read_text(encoding="utf-8")
        for banned in ("--force", "push -f", "--amend", "+HEAD", "reset --hard"):
            assert banned not in text, f"{path.name} contains {banned!r}"
