"""The cache secret (chronicle/cachekey.py): CHRONICLE_CACHE_KEY when set, else a random
per-user key file made once, private to its owner; a key file anyone else could read or
swap (a link, group-readable, another owner's) is no key, and then nothing is cached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chronicle import cachekey
from chronicle.cachekey import ENV, cache_secret, key_file, sign, signed


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def test_a_key_file_is_made_once_private_to_its_owner(home: Path) -> None:
    secret, origin = cache_secret()
    assert secret is not None and origin == str(home / "chronicle" / "cache-key")
    assert key_file().stat().st_mode & 0o777 == 0o600
    assert key_file().parent.stat().st_mode & 0o077 == 0
    assert [p.name for p in key_file().parent.iterdir()] == ["cache-key"]  # no temp left
    cachekey._secret.cache_clear()  # a later process reads the same key
    assert cache_secret()[0] == secret


def test_the_environment_wins_and_each_secret_signs_differently(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "nightly secret")
    first, origin = cache_secret()
    assert first is not None and origin == ENV and not key_file().exists()
    monkeypatch.setenv(ENV, "another secret")
    second = cache_secret()[0]
    assert second is not None and second != first
    mac = sign(first, "svgs", b"body")
    assert signed(first, "svgs", b"body", mac)
    assert not signed(second, "svgs", b"body", mac)
    assert not signed(first, "threads", b"body", mac)  # an entry of another kind
    assert not signed(first, "svgs", b"body!", mac)


@pytest.mark.parametrize("how", ["a link", "readable by others", "another owner's"])
def test_a_key_file_others_could_read_or_swap_is_no_key(home: Path, how: str) -> None:
    path = key_file()
    path.parent.mkdir(parents=True)
    real = home / "elsewhere"
    real.write_text("ab" * 32 + "\n")
    real.chmod(0o600)
    if how == "a link":
        path.symlink_to(real)
    else:
        os.link(real, path)
        if how == "readable by others":
            path.chmod(0o644)
        elif os.geteuid() == 0:
            os.chown(path, 65534, 65534)
        else:
            pytest.skip("making a file another user's needs root")
    secret, why = cache_secret()
    assert secret is None and why.startswith(f"{path}: ")
