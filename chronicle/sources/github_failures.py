"""How a GitHub fetch fails (sources stage): bounded retries, and one message per failure
that says what GitHub answered, for which request, and what to do about it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chronicle.clean import scrub_urls
from chronicle.errors import SourceError

RETRIES = 3
SECONDARY_WAIT = 60.0  # GitHub asks clients to wait at least a minute after a secondary limit


def bounded_retry(max_wait: float) -> Any:
    """GithubRetry whose every wait (reset, secondary, Retry-After) is at most `max_wait`."""
    from github import GithubRetry
    from github.GithubException import RateLimitExceededExceedsMaxWait

    class _BoundedRetry(GithubRetry):
        def get_retry_after(self, response: Any) -> float | None:
            # urllib3 sleeps whatever Retry-After says; refuse instead of hanging the job.
            value = super().get_retry_after(response)
            if value is not None and value > max_wait:
                raise RateLimitExceededExceedsMaxWait(
                    response.status, {"message": "Retry-After exceeds the configured wait"},
                    dict(response.headers), wait=value,
                )
            return value

    return _BoundedRetry(
        total=RETRIES,
        backoff_factor=min(0.5, max_wait / 10),
        backoff_max=max_wait,
        secondary_rate_wait=min(SECONDARY_WAIT, max_wait / RETRIES),
        max_rate_limit_wait=max_wait,
    )


def source_error(message: str, token: str | None) -> SourceError:
    """Return the GitHub source's error, its token and any URL credentials scrubbed."""
    if token:
        message = message.replace(token, "***")
    return SourceError("github", scrub_urls(message))


def rate_limit_message(err: Any, where: str, wait: float, token: str | None) -> str:
    """Return the message of a rate limit longer than the configured wait."""
    asked = getattr(err, "wait", None)
    asked_text = f"GitHub asks to wait {asked:.0f} s, " if asked else ""
    hint = ("set GITHUB_TOKEN (5,000 requests an hour instead of 60)" if not token
            else "wait for the limit to reset")
    return (f"rate limit reached while fetching {where}: {asked_text}"
            f"more than github.max_rate_limit_wait_seconds ({wait:.0f} s); {hint}, "
            "or raise that setting in chronicle.yml, then run the snapshot again")


def github_message(err: Any, where: str, what: str, api_url: str) -> str:
    """Return the message of an error GitHub answered, with what to do about it."""
    status = getattr(err, "status", None)
    data = getattr(err, "data", None)
    said = data.get("message") if isinstance(data, Mapping) else None
    answer = f"{status} {said}" if said else str(status)
    if status == 401:
        fix = ("GITHUB_TOKEN was rejected: replace it with a valid token, or unset it "
               "(public repositories can be read without one)")
    elif status == 404 and what.startswith("repository"):
        fix = (f"check github.repo in chronicle.yml (owner/name) and GITHUB_API_URL ({api_url}); "
               "for a private repository GITHUB_TOKEN must be able to read it")
    elif status == 404 and "pull request" in what:
        fix = ("GITHUB_API_URL does not list pull requests for this repository: check it, "
               "or remove github.pulls from chronicle.yml")
    elif status == 404:
        fix = "remove it from github.issues in chronicle.yml, or check that it was not moved"
    elif status == 403:
        fix = "GITHUB_TOKEN lacks access to this repository: grant read access or unset it"
    elif isinstance(status, int) and status >= 500:
        fix = ("GitHub is failing (see https://www.githubstatus.com); the next snapshot "
               "will catch up on everything updated since the last good one")
    else:
        fix = "check github.* in chronicle.yml and GITHUB_API_URL, then run the snapshot again"
    return f"GitHub answered {answer} while fetching {where}; {fix}"


# urllib3's reason when a status it retries kept coming back (ResponseError.SPECIFIC_ERROR).
_GAVE_UP = re.compile(r"too many (\d{3}) error responses")


def retry_message(err: Any, where: str, wait: float) -> str:
    """Return the message of a request that kept failing after the retries."""
    # The status urllib3 gave up on, not any "403" in the message: that names the URL,
    # whose port or query can hold those digits.
    gave_up = _GAVE_UP.search(str(err))
    if gave_up is not None and gave_up.group(1) == "403":
        return (f"secondary rate limit persisted after {RETRIES} retries while fetching {where}; "
                "GitHub throttles bursts of requests: wait an hour and run the snapshot again, "
                f"or raise github.max_rate_limit_wait_seconds (now {wait:.0f} s)")
    return (f"GitHub kept failing after {RETRIES} retries while fetching {where}; "
            "see https://www.githubstatus.com; the next snapshot will catch up on everything "
            "updated since the last good one")
