"""chronicle's GitHub Actions (action.yml, actions/archive/, actions/keepalive/): shaped as
the nightly contract says, actionlint- and shellcheck-clean, and their shell steps behave
(run here with bash, as a runner runs a composite action's steps, against fake
`chronicle` / `pip` / `gh` commands and local git remotes). The 5-night rehearsal
(tests/rehearsal/) runs them against fake W&B and GitHub servers; `chronicle check-site`,
the step that checks the built site, is tested in test_check_site.py."""

from __future__ import annotations

import json
import re
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chronicle.models import SourceStatus
from chronicle.store import Store, write_snapshot
from tests.support.actionlint import SHELLCHECK_HINT, run_actionlint, steps_workflow
from tests.support.git import BOT_EMAIL, clone_with_remote, git
from tests.support.paths import REPO
from tests.support.workflows import (
    ACTION,
    ACTIONS,
    ARCHIVE_ACTION,
    KEEPALIVE_ACTION,
    action_step,
    action_steps,
    fake_bin,
    load_action,
    ours,
    run_step,
)

# Lowest majors that run on Node 24 (actionlint flags the Node 20 ones as deprecated).
MIN_MAJOR = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache": 5,
    "actions/upload-pages-artifact": 4,
}
SID = "2026-09-30T031700Z"
PYPROJECT = (REPO / "pyproject.toml").read_text(encoding="utf-8")


def _names(path: Path) -> list[str]:
    return [s.get("name", "") for s in action_steps(path)]


# ---- shape and lint -----------------------------------------------------------------------


@pytest.mark.parametrize("path", ACTIONS.values(), ids=list(ACTIONS))
def test_each_action_is_a_composite_with_documented_inputs(path: Path) -> None:
    meta = load_action(path)
    assert meta["name"] and meta["description"] and meta["author"]
    assert meta["runs"]["using"] == "composite"
    for name, spec in (meta.get("inputs") or {}).items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), name
        assert spec["description"] and spec["required"] is False and "default" in spec, name
    for name, spec in (meta.get("outputs") or {}).items():
        assert spec["description"] and spec["value"].startswith("${{ steps."), name
    for step in action_steps(path):
        assert step["name"], step
        # A composite step names its shell; what it may not have (a job's keys) it has not.
        assert ("run" in step) == (step.get("shell") == "bash") != ("uses" in step), step
        assert not {"timeout-minutes", "permissions", "environment", "secrets"} & set(step)
    text = path.read_text(encoding="utf-8")
    assert "secrets." not in text and "vars." not in text  # secrets come in as inputs
    assert text.startswith("# chronicle")  # the header says why it exists


@pytest.mark.parametrize("path", ACTIONS.values(), ids=list(ACTIONS))
def test_actionlint_and_shellcheck_pass_every_step(path: Path, tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.fail(SHELLCHECK_HINT)
    result = run_actionlint(steps_workflow(path, tmp_path), cwd=tmp_path)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_the_step_lint_catches_a_bad_input_and_a_shell_mistake(tmp_path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.fail(SHELLCHECK_HINT)
    workflow = steps_workflow(ACTION, tmp_path)
    text = workflow.read_text(encoding="utf-8")
    text = text.replace("${{ inputs.as-of }}", "${{ inputs.as_of }}")
    workflow.write_text(text.replace("chronicle verify", "chronicle verify $WHERE"), "utf-8")
    result = run_actionlint(workflow, cwd=tmp_path)
    assert result.returncode == 1
    assert 'property "as_of" is not defined' in result.stdout
    assert "SC2086" in result.stdout  # shellcheck: an unquoted expansion


def test_official_actions_are_current_majors() -> None:
    for path in ACTIONS.values():
        for step in action_steps(path):
            if "uses" in step:
                action, _, ref = step["uses"].partition("@")
                assert not ours(action) and re.fullmatch(r"v\d+", ref), step["uses"]
                assert int(ref[1:]) >= MIN_MAJOR[action], f"{path}: {step['uses']} is old"


def test_every_script_is_strict_and_prints_its_duration(tmp_path: Path) -> None:
    for path in ACTIONS.values():
        for step in action_steps(path):
            if "run" in step:
                first, second = step["run"].splitlines()[:2]
                assert first == "set -euo pipefail", f"{path}: {step['name']}"
                assert second == (f"trap 'echo \"::notice title=duration::{step['name']}: "
                                  "${SECONDS} s\"' EXIT"), step["name"]
    # Run for real: the duration is printed on success and on failure alike.
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = fake_bin(tmp_path, chronicle="exit 1\n")
    result, _ = run_step(action_step(ACTION, "Check the built site"), work, bin_dir, {})
    assert result.returncode == 1
    assert re.search(r"::notice title=duration::Check the built site: \d+ s", result.stdout)


def test_the_chronicle_folder_is_where_the_chronicle_steps_run() -> None:
    command = re.compile(r"^\s*(if !\s+)?chronicle (?!--version)", re.M)
    seen = 0
    for path in (ACTION, ARCHIVE_ACTION):
        for step in action_steps(path):
            if command.search(step.get("run", "")) or "git add" in step.get("run", ""):
                assert step["working-directory"] == "${{ inputs.directory }}", step["name"]
                seen += 1
    assert seen == 10
    cache = next(s for s in action_steps(ACTION) if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == "${{ inputs.directory }}/.cache/chronicle"


# ---- the night's work (action.yml) --------------------------------------------------------


def test_site_is_verified_built_and_checked_before_upload() -> None:
    order = [s.get("run", s.get("uses", "")) for s in action_steps(ACTION)]
    verify = next(i for i, r in enumerate(order) if "chronicle verify" in r)
    commit = next(i for i, r in enumerate(order) if "git commit" in r)
    build = next(i for i, r in enumerate(order) if 'args=(build)' in r)
    check = next(i for i, r in enumerate(order) if "chronicle check-site" in r)
    upload = next(i for i, r in enumerate(order) if "upload-pages-artifact" in r)
    assert verify < commit < build < check < upload


def test_python_with_pip_cache_keyed_on_what_is_installed(tmp_path: Path) -> None:
    setups = [s for p in (ACTION, ARCHIVE_ACTION) for s in action_steps(p)
              if "setup-python" in s.get("uses", "")]
    assert len(setups) == 2  # the night's and the archive's, the same
    assert setups[0]["with"] == setups[1]["with"] == {
        "python-version": "${{ inputs.python-version }}", "cache": "pip",
        "cache-dependency-path": ".chronicle-requirement"}
    for path in (ACTION, ARCHIVE_ACTION):
        assert load_action(path)["inputs"]["python-version"]["default"] == "3.11"
        names = _names(path)
        assert names.index("Name what pip installs (the pip cache key)") < \
            names.index("Set up Python") < names.index("Install chronicle")
    # The same script in both: the file names a requirement, or the checkout installed.
    record = action_step(ACTION, "Name what pip installs")
    assert record["run"] == action_step(ARCHIVE_ACTION, "Name what pip installs")["run"]
    said = {}
    for case, pyproject, version in (("requirement", None, "0.2.0"),
                                     ("own", PYPROJECT, ""), ("action", None, "")):
        work = tmp_path / case / "work"
        work.mkdir(parents=True)
        if pyproject is not None:
            (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        env = {"CHRONICLE_VERSION": version, "CHRONICLE_SOURCE": str(REPO)}
        result, _ = run_step(record, work, fake_bin(tmp_path / case), env)
        assert result.returncode == 0, result.stderr
        said[case] = (work / ".chronicle-requirement").read_text(encoding="utf-8")
    assert said["requirement"] == "requirement 0.2.0\n"
    assert said["own"] == said["action"].replace("action", "checkout", 1)  # same pyproject
    assert re.fullmatch(r"action [0-9a-f]{64}  -\n", said["action"])
    assert ".chronicle-requirement" in (REPO / "chronicle" / "scaffold" / "gitignore").read_text()


def test_chronicle_cache_is_restored_before_the_snapshot() -> None:
    # Without it every night is cold: the run-wide charts' SVGs (and, with Zensical, its
    # own cache of each edition) are made again from the whole store.
    steps = action_steps(ACTION)
    caches = [i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache@")]
    assert len(caches) == 1
    cache = steps[caches[0]]["with"]
    # A new key each night (a cache is never overwritten), the newest restored by prefix.
    assert "${{ github.run_id }}" in cache["key"]
    prefix = cache["restore-keys"].strip()
    assert cache["key"].startswith(prefix) and "github.run_id" not in prefix
    runs = [s.get("run", "") for s in steps]
    snapshot = next(i for i, r in enumerate(runs) if "args=(snapshot)" in r)
    build = next(i for i, r in enumerate(runs) if "args=(build)" in r)
    assert caches[0] < snapshot < build
    assert ".cache/" in (REPO / "chronicle" / "scaffold" / "gitignore").read_text().split()


def test_secrets_reach_the_steps_that_need_them_only() -> None:
    snap = action_step(ACTION, "Take a snapshot")
    assert snap["env"]["WANDB_API_KEY"] == "${{ inputs.wandb-api-key }}"
    assert snap["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert load_action(ACTION)["inputs"]["github-token"]["default"] == "${{ github.token }}"
    # ...and the cache's signing secret the build step only (chronicle/cachekey.py).
    build = action_step(ACTION, "Build the site")
    assert build["env"] == {"CHRONICLE_CACHE_KEY": "${{ inputs.cache-key }}",
                            "ENGINE": "${{ inputs.engine }}"}
    # ...and the Wayback keys the archive's check and archive steps.
    keys = {"WAYBACK_S3_ACCESS_KEY": "${{ inputs.wayback-access-key }}",
            "WAYBACK_S3_SECRET_KEY": "${{ inputs.wayback-secret-key }}"}
    wayback = [action_step(ARCHIVE_ACTION, "Look for the Wayback keys"),
               action_step(ARCHIVE_ACTION, "Archive the new pages")]
    assert all(s["env"] == keys for s in wayback)
    secret = ("wandb-api-key", "github-token", "cache-key", "wayback-access-key",
              "wayback-secret-key")
    holders = {(ACTION, snap["name"]), (ACTION, build["name"]),
               *((ARCHIVE_ACTION, s["name"]) for s in wayback)}
    others = [s for p in ACTIONS.values() for s in action_steps(p)
              if (p, s["name"]) not in holders]
    assert len(others) > 10
    assert not any(f"inputs.{name}" in json.dumps(s) for s in others for name in secret)


def _install_run(tmp_path: Path, pyproject: str | None, version: str) -> tuple[Any, str]:
    work = tmp_path / "work"
    work.mkdir()
    if pyproject is not None:
        (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, pip=f'echo "$@" >> "{calls}"\n',
                       chronicle='echo "chronicle, version 0.1.0"\n')
    env = {"CHRONICLE_VERSION": version, "CHRONICLE_SOURCE": "/runner/_actions/o/c/v1",
           "PYTHONPATH": str(REPO)}
    result, _ = run_step(action_step(ACTION, "Install chronicle"), work, bin_dir, env)
    return result, calls.read_text() if calls.exists() else ""


def test_install_takes_the_actions_own_checkout_by_default(tmp_path: Path) -> None:
    result, calls = _install_run(tmp_path, '[project]\nname = "my-chronicle"\n', "")
    assert result.returncode == 0, result.stderr
    assert calls == "install /runner/_actions/o/c/v1\n"
    assert "chronicle, version 0.1.0" in result.stdout
    install = action_step(ACTION, "Install chronicle")
    assert install["env"]["CHRONICLE_SOURCE"] == "${{ github.action_path }}"
    assert action_step(ARCHIVE_ACTION, "Install chronicle")["env"]["CHRONICLE_SOURCE"] == \
        "${{ github.action_path }}/../.."  # actions/archive/ of the same checkout
    assert install["run"] == action_step(ARCHIVE_ACTION, "Install chronicle")["run"]


def test_install_uses_the_checkout_in_chronicles_own_repository(tmp_path: Path) -> None:
    result, calls = _install_run(tmp_path, PYPROJECT, "")
    assert result.returncode == 0, result.stderr
    assert calls == "install .\n"


@pytest.mark.parametrize(("version", "installed"), [
    ("0.2.0", "training-chronicle==0.2.0"),
    ("training-chronicle @ git+https://example.org/c@v2", "training-chronicle @ "
     "git+https://example.org/c@v2")])
def test_install_takes_a_version_or_a_requirement(tmp_path: Path, version: str,
                                                   installed: str) -> None:
    result, calls = _install_run(tmp_path, PYPROJECT, version)
    assert result.returncode == 0, result.stderr
    assert calls == f"install {installed}\n"


def test_a_weekly_cold_build_comes_before_the_upload_and_can_be_asked_for() -> None:
    cold = action_step(ACTION, "without the cache")
    assert cold["env"] == {"COLD_BUILD": "${{ inputs.cold-build }}",
                           "ENGINE": "${{ inputs.engine }}"}
    names = [s.get("name", s.get("uses", "")) for s in action_steps(ACTION)]
    assert names.index("Check the built site") < names.index(cold["name"]) < \
        names.index("Upload the site for Pages")


def _cold_step(tmp_path: Path, differs: bool, asked: str, engine: str = ""
               ) -> tuple[Any, Path]:
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
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {"COLD_BUILD": asked, "RUNNER_TEMP": str(temp), "ENGINE": engine}
    result, _ = run_step(action_step(ACTION, "without the cache"), work, bin_dir, env)
    return result, calls


def test_the_cold_build_passes_when_the_sites_are_the_same_bytes(tmp_path: Path) -> None:
    result, calls = _cold_step(tmp_path, differs=False, asked="true")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "byte for byte" in result.stdout and calls.read_text().startswith("build --dir ")
    assert (tmp_path / "work" / ".cache" / "chronicle" / "svgs" / "e.json").is_file()


def test_the_cold_build_uses_the_engine_asked_for(tmp_path: Path) -> None:
    result, calls = _cold_step(tmp_path, differs=False, asked="true", engine="zensical")
    assert result.returncode == 0, result.stdout + result.stderr
    assert calls.read_text().rstrip().endswith("--engine zensical")


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


@pytest.mark.parametrize(("engine", "said"), [("", "build\n"), ("zensical", "build --engine "
                                                                            "zensical\n")])
def test_build_step_builds_with_the_engine_asked_for(tmp_path: Path, engine: str,
                                                     said: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, chronicle=f'echo "$@" >> "{calls}"\n')
    env = {"ENGINE": engine, "CHRONICLE_CACHE_KEY": "k" * 40}
    result, _ = run_step(action_step(ACTION, "Build the site"), work, bin_dir, env)
    assert result.returncode == 0, result.stderr
    assert calls.read_text() == said
    assert "no cache-key" not in result.stdout
    result, _ = run_step(action_step(ACTION, "Build the site"), work, bin_dir, {"ENGINE": ""})
    assert "::notice title=chronicle::no cache-key" in result.stdout


def test_check_step_runs_chronicle_check_site_and_fails_with_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    calls = tmp_path / "calls"
    bin_dir = fake_bin(tmp_path, chronicle=f'echo "$@" >> "{calls}"\nexit 1\n')
    result, _ = run_step(action_step(ACTION, "Check the built site"), work, bin_dir, {})
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
    step = action_step(ACTION, "Take a snapshot")
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
    # ...which the action hands on as its outputs.
    assert load_action(ACTION)["outputs"]["snapshot"]["value"] == \
        "${{ steps.snap.outputs.snapshot }}"


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
    result, outputs = run_step(action_step(ACTION, "Take a snapshot"), work, bin_dir,
                               {"AS_OF": ""})
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
    step = action_step(ACTION, "Commit the new snapshot")
    assert step["env"] == {"MESSAGE": "${{ steps.snap.outputs.message }}"}
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
    step = action_step(ACTION, "Commit the new snapshot")
    result, _ = run_step(step, work, fake_bin(tmp_path), {"MESSAGE": f"snapshot {SID}"})
    assert result.returncode == 0, result.stderr
    assert git(tmp_path / "remote.git", "log", "-1", "--format=%s", "main") == f"snapshot {SID}"


def test_commit_step_commits_a_chronicle_in_a_folder_of_the_repository(tmp_path: Path) -> None:
    # `directory`: the steps run in the chronicle's folder; git commits from there.
    work = clone_with_remote(tmp_path)
    chronicle = work / "runs" / "mine"
    _manifest(chronicle, SID, {}, [])
    step = action_step(ACTION, "Commit the new snapshot")
    result, _ = run_step(step, chronicle, fake_bin(tmp_path), {"MESSAGE": f"snapshot {SID}"})
    assert result.returncode == 0, result.stderr
    files = git(tmp_path / "remote.git", "show", "--name-only", "--format=", "main")
    assert files.splitlines() == [f"runs/mine/docs/data/{SID}/MANIFEST.json"]


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
    step = action_step(ACTION, "Release the weeks that ended")
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
    step = action_step(ACTION, "Release the weeks that ended")
    assert step["continue-on-error"] is True
    assert step["env"] == {"GH_TOKEN": "${{ github.token }}"}
    assert action_steps(ACTION)[-1] == step  # after the upload: it cannot hold the deploy back


def test_zenodo_json_is_written_before_the_commit_and_committed(tmp_path: Path) -> None:
    steps = action_steps(ACTION)
    names = _names(ACTION)
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


# ---- the archive (actions/archive) and the keep-alive (actions/keepalive) ----------------


def test_the_archive_runs_only_with_its_keys(tmp_path: Path) -> None:
    first, *rest = action_steps(ARCHIVE_ACTION)
    assert all(s["if"] == "steps.keys.outputs.set == 'true'" for s in rest)
    archive = action_step(ARCHIVE_ACTION, "Archive the new pages")
    assert archive["run"].splitlines()[-1] == "chronicle archive --dir ."
    work = tmp_path / "work"
    work.mkdir()
    for keys, said in (({}, "false"), ({"WAYBACK_S3_ACCESS_KEY": "key-a1"}, "false"),
                       ({"WAYBACK_S3_ACCESS_KEY": "key-a1", "WAYBACK_S3_SECRET_KEY": "key-s2"},
                        "true")):
        result, outputs = run_step(first, work, fake_bin(tmp_path), keys)
        assert result.returncode == 0 and outputs == {"set": said}
        assert "key-" not in result.stdout + result.stderr


def test_the_archive_commits_the_mementos_it_recorded(tmp_path: Path) -> None:
    work = clone_with_remote(tmp_path)
    (work / "docs" / "mementos").mkdir(parents=True)
    (work / "docs" / "mementos" / "2026-09-30.json").write_text("{}\n", encoding="utf-8")
    step = action_step(ARCHIVE_ACTION, "Commit the mementos recorded")
    result, _ = run_step(step, work, fake_bin(tmp_path), {})
    assert result.returncode == 0, result.stderr
    remote = tmp_path / "remote.git"
    assert git(remote, "log", "-1", "--format=%s|%ae", "main") == \
        f"mementos: Wayback copies recorded by chronicle archive|{BOT_EMAIL}"
    again, _ = run_step(step, work, fake_bin(tmp_path), {})
    assert "no memento recorded" in again.stdout


@pytest.mark.parametrize(("days_old", "keepalive"), [(55, True), (10, False)])
def test_keepalive_commits_only_after_50_quiet_days(
    tmp_path: Path, days_old: int, keepalive: bool
) -> None:
    when = f"@{int(time.time()) - days_old * 86400} +0000"
    work = clone_with_remote(tmp_path, {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when})
    step = action_step(KEEPALIVE_ACTION, "keep-alive")
    result, _ = run_step(step, work, fake_bin(tmp_path), {})
    assert result.returncode == 0, result.stderr
    log = git(tmp_path / "remote.git", "log", "--format=%s", "main").splitlines()
    if keepalive:
        assert len(log) == 2 and log[0].startswith(f"keep-alive: no commit for {days_old} days")
        assert git(tmp_path / "remote.git", "show", "--name-only", "--format=", "main") == ""
    else:
        assert log == ["start"]
