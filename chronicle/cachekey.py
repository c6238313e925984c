"""The secret that makes a cache entry the product of its key (used by site/build_cache.py).

A cache entry's name is the sha256 of its inputs, and it used to carry the sha256 of its
own content: anyone who could write `.cache/chronicle` (a cache restored from elsewhere:
GitHub's actions/cache, which a pull request's run can fill; a copied folder) could
edit an entry, recompute that checksum, and have the build publish what they wrote. So
an entry now carries an HMAC-SHA256 of its key and content under a secret that the
chronicle's own runs hold and a restored or planted cache does not: an entry made
anywhere else is simply a miss, made again from the store.

The secret is `CHRONICLE_CACHE_KEY` when set (the nightly workflow passes a repository
secret, so one night's entries are good the next night on a new runner), else a random
per-user key file outside every chronicle: `$XDG_CONFIG_HOME/chronicle/cache-key`
(default `~/.config/chronicle/cache-key`), made on first use, readable by its owner only.
Where neither can be had, nothing is read from or kept in the cache (same bytes, slower).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

ENV = "CHRONICLE_CACHE_KEY"
_KEY_BYTES = 32


def key_file() -> Path:
    """Return the per-user key file (when CHRONICLE_CACHE_KEY is not set)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "chronicle" / "cache-key"


@functools.cache
def _secret(env: str | None, path: Path) -> tuple[bytes | None, str]:
    """Return (the secret or None, where it came from or why there is none)."""
    if env:
        return hashlib.sha256(b"chronicle-cache-key\0" + env.encode()).digest(), ENV
    try:
        return _read_key(path), str(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as err:
        return None, f"{path}: {err}"
    try:
        _make_key(path)
        return _read_key(path), str(path)
    except (OSError, ValueError) as err:
        return None, f"{path}: cannot make it ({err})"


def cache_secret() -> tuple[bytes | None, str]:
    """Return the secret entries are signed with (None: no cache) and its origin."""
    try:
        path = key_file()
    except RuntimeError:  # no home folder to put it in
        path = Path("/nonexistent/chronicle/cache-key")
    return _secret(os.environ.get(ENV) or None, path)


def sign(secret: bytes, kind: str, body: bytes) -> str:
    """Return the hex HMAC of one entry of `kind` (its body names its own key)."""
    return hmac.new(secret, kind.encode() + b"\0" + body, hashlib.sha256).hexdigest()


def signed(secret: bytes, kind: str, body: bytes, mac: str) -> bool:
    """Return whether `mac` is the HMAC `sign` gives (compared in constant time)."""
    return hmac.compare_digest(sign(secret, kind, body), mac)


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            # Anyone else who can read it can forge entries.
            raise ValueError("not private to this user (it must be its owner's, mode 600)")
        key = bytes.fromhex(source.read(4 * _KEY_BYTES).decode("ascii", "replace").strip())
    if len(key) < _KEY_BYTES // 2:
        raise ValueError("too short")
    return key


def _make_key(path: Path) -> None:
    """Write a new random key at `path`, whole or not at all (two processes making one at
    once: the first link wins, the other reads it)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        with os.fdopen(fd, "wb") as sink:
            sink.write(secrets.token_hex(_KEY_BYTES).encode() + b"\n")
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
