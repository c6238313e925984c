"""Errors a user can act on. The CLI turns them into a message and an exit code."""

from __future__ import annotations

import errno

# Exit codes (contract, documented in documentation/pages/commands.md, "Exit codes").
EXIT_OK = 0
EXIT_FAILURE = 1  # verify found a problem, or an unexpected internal error
EXIT_USAGE = 2  # bad config, bad arguments, missing folder (click uses 2 for usage errors too)
EXIT_DEGRADED = 3  # a source failed but a degraded snapshot was still written


class ChronicleError(Exception):
    """Base class: the message says what failed, where, and how to fix it."""

    exit_code = EXIT_USAGE


class ConfigError(ChronicleError):
    """chronicle.yml (or failures.yml) is missing or invalid."""

    # A file with a million bad rows must not print a million lines: the first ones suffice.
    SHOWN = 50

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems[: self.SHOWN])
        if len(problems) > self.SHOWN:
            lines += f"\n  - ... and {len(problems) - self.SHOWN:,} more (fix these first)"
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"{path}: {len(problems)} {noun}:\n{lines}")


class SourceError(ChronicleError):
    """A source (W&B, GitHub, ...) could not be fetched or returned a bad payload."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        super().__init__(f"{source}: {message}")


class StoreError(ChronicleError):
    """The store refuses an operation that would rewrite or lose published data."""


class VerifyError(ChronicleError):
    """`chronicle verify` found missing, altered or out-of-order files."""

    exit_code = EXIT_FAILURE


class SiteCheckError(ChronicleError):
    """`chronicle check-site` found a problem in the built site."""

    exit_code = EXIT_FAILURE


class BuildProcessError(ChronicleError):
    """A process building part of the site ended before it finished (killed, out of
    memory): not the user's error, and nothing was published."""

    exit_code = EXIT_FAILURE


# What a write that the disk refused means, and what to do (documentation/pages/commands.md,
# "Exit codes": 2).
_DISK = {
    errno.ENOSPC: ("the disk is full", "free space on it"),
    errno.EDQUOT: ("the disk quota is used up", "free space or raise the quota"),
    errno.EROFS: ("the file system is read-only", "run it in a writable copy"),
    errno.EACCES: ("permission denied", "run it as a user who can write there"),
    errno.EPERM: ("operation not permitted", "run it as a user who can write there"),
    errno.EFBIG: ("the file is larger than this process may write (ulimit -f)",
                  "raise the file-size limit"),
    errno.EIO: ("an input/output error (a failing disk or a lost network mount)",
                "check the disk"),
}


def disk_error(err: OSError, where: object, outcome: str) -> ChronicleError | None:
    """Return the user error for `err` when it is the disk refusing (full, read-only, no
    permission), naming the file it refused (else `where`) and `outcome` (what was, or was
    not, written); None for any other OSError (a defect, left as it is)."""
    if err.errno not in _DISK:
        return None
    what, fix = _DISK[err.errno]
    # shutil's copies name the source first and the file being written second.
    path = err.filename2 if err.filename2 is not None else err.filename
    return ChronicleError(f"{path if path is not None else where}: {what}; {outcome}: "
                          f"{fix}, then run the command again")
