"""The run's vocabulary in the reader's language: statuses, kinds and states that the
analysis writes as English keywords (render stage, pure).

A keyword is data (`"gap"`, `"triggered"`, `"open"`): the day JSON and the API keep it as
is; a page shows its word for it. One word can mean two things ("open" issue, "open"
failure), so each keyword is looked up with its context (gettext's pgettext).
"""

from __future__ import annotations

import functools
from typing import Any

from chronicle.render.i18n import pgettext, translations


@functools.lru_cache(maxsize=8)
def _terms(catalog: Any) -> dict[str, dict[str, str]]:
    """Return every keyword's word in the language of `catalog` (the current one)."""
    return {
        "issue state": {"open": pgettext("issue state", "open"),
                        "closed": pgettext("issue state", "closed")},
        "failure end": {"open": pgettext("failure end", "open")},
        "failure kind": {
            "gap": pgettext("failure kind", "gap"),
            "fork": pgettext("failure kind", "fork"),
            "loss_spike": pgettext("failure kind", "loss_spike"),
            "nan_loss": pgettext("failure kind", "nan_loss"),
            "issue": pgettext("failure kind", "issue"),
            "manual": pgettext("failure kind", "manual"),
            "restart": pgettext("failure kind", "restart"),
        },
        "health status": {
            "pass": pgettext("health status", "pass"),
            "warn": pgettext("health status", "warn"),
            "fail": pgettext("health status", "fail"),
            "no-data": pgettext("health status", "no-data"),
        },
        "severity": {"warn": pgettext("severity", "warn"), "fail": pgettext("severity", "fail")},
        "risk status": {
            "upcoming": pgettext("risk status", "upcoming"),
            "watching": pgettext("risk status", "watching"),
            "triggered": pgettext("risk status", "triggered"),
            "passed": pgettext("risk status", "passed"),
        },
        "claim verdict": {
            "consistent": pgettext("claim verdict", "consistent"),
            "contradicted": pgettext("claim verdict", "contradicted"),
            "unverifiable": pgettext("claim verdict", "unverifiable"),
        },
        # plural(): a count and its noun, measure word included (3 次重启)
        "counted": {
            "failure": pgettext("counted", "failure"),
            "restart": pgettext("counted", "restart"),
            "day": pgettext("counted", "day"),
            "other risk point": pgettext("counted", "other risk point"),
            "logged loss value": pgettext("counted", "logged loss value"),
            "failure record": pgettext("counted", "failure record"),
            "issue thread": pgettext("counted", "issue thread"),
        },
        "prediction sign": {
            "above": pgettext("prediction sign", "above"),
            "below": pgettext("prediction sign", "below"),
            "on": pgettext("prediction sign", "on"),
        },
    }


def term(keyword: object, context: str) -> str:
    """Return the word for `keyword` in `context` ("gap", "failure kind" -> 缺口); an
    unknown keyword (a hand-written failure kind) is shown as written."""
    text = str(keyword)
    return _terms(translations()).get(context, {}).get(text, text)
