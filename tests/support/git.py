"""git for tests: commands run with a fixed identity and no user or system config, and a
clone of a local bare remote to push to."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# The identity the nightly workflow commits as (.github/workflows/nightly.yml).
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` (HOME is its parent: no user config); return its stripped stdout."""
    env = {**os.environ, "HOME": str(cwd.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"]
    out = subprocess.run(["git", *ident, *args], cwd=cwd, env=env, capture_output=True,
                         text=True, check=True, timeout=60)
    return out.stdout.strip()


def clone_with_remote(tmp_path: Path, commit_env: dict[str, str] | None = None) -> Path:
    """Make tmp_path/remote.git holding one commit ("start") on main; return a clone of it.

    `commit_env` is added to that commit's environment (e.g. GIT_COMMITTER_DATE).
    """
    remote, seed, work = tmp_path / "remote.git", tmp_path / "seed", tmp_path / "work"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    seed.mkdir()
    git(seed, "init", "-q")
    (seed / "README.md").write_text("chronicle\n", encoding="utf-8")
    git(seed, "add", "README.md")
    env = {**os.environ, "HOME": str(tmp_path), **(commit_env or {})}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit",
                    "-q", "-m", "start"], cwd=seed, env=env, check=True, timeout=60)
    git(seed, "push", "-q", str(remote), "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", "--branch", "main", str(remote), str(work))
    return work
