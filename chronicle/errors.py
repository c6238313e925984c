"""Errors a user can act on. The CLI turns them into a message and an exit code."""

from __future__ import annotations

# Exit codes (contract, documented in the README).
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
