"""The run's vocabulary: statuses, kinds and states that the analysis writes as English
keywords (render stage, pure).

A keyword is data (`"gap"`, `"triggered"`, `"open"`): the day JSON and the API keep it as
is; a page shows its word for it (`Language.term`, render/i18n.py). One word can mean two
things ("open" issue, "open" failure), so each keyword is a message with its context
(gettext's pgettext). This module lists them; it translates nothing itself.
"""

from __future__ import annotations


def pgettext(context: str, message: str) -> tuple[str, str]:
    """Mark `message` in `context` for the catalog (extracted by `make i18n`)."""
    return context, message


VOCABULARY = (
    pgettext("issue state", "open"), pgettext("issue state", "closed"),
    pgettext("failure end", "open"),
    pgettext("failure kind", "gap"), pgettext("failure kind", "fork"),
    pgettext("failure kind", "loss_spike"), pgettext("failure kind", "nan_loss"),
    pgettext("failure kind", "issue"), pgettext("failure kind", "manual"),
    pgettext("failure kind", "restart"),
    pgettext("health status", "pass"), pgettext("health status", "warn"),
    pgettext("health status", "fail"), pgettext("health status", "no-data"),
    pgettext("severity", "warn"), pgettext("severity", "fail"),
    pgettext("risk status", "upcoming"), pgettext("risk status", "watching"),
    pgettext("risk status", "triggered"), pgettext("risk status", "passed"),
    pgettext("claim verdict", "consistent"), pgettext("claim verdict", "contradicted"),
    pgettext("claim verdict", "unverifiable"),
    # Language.plural: a count and its noun, measure word included (3 次重启)
    pgettext("counted", "failure"), pgettext("counted", "restart"),
    pgettext("counted", "day"), pgettext("counted", "other risk point"),
    pgettext("counted", "logged loss value"), pgettext("counted", "failure record"),
    pgettext("counted", "issue thread"),
    pgettext("prediction sign", "above"), pgettext("prediction sign", "below"),
    pgettext("prediction sign", "on"),
)
KNOWN = frozenset(VOCABULARY)
