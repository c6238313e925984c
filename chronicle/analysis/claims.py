"""Public claims about the run set against its own config and data.

Each claim is `consistent`, `contradicted` or `unverifiable` (the figure is not known yet),
with the figure it was compared with, the method, and the artifact + sha256 it came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.config import RunConfig
from chronicle.config.watchers import Claim

Figure = tuple[float | None, str, str | None]  # value, artifact, its sha256


def figures(config: RunConfig, cost: Mapping[str, Any], days: Sequence[Mapping[str, Any]],
            config_artifact: tuple[str, str | None],
            data_artifact: tuple[str, str | None],
            restarts: float | None = None) -> dict[str, Figure]:
    """Return figure name -> (value, artifact, sha256) for every comparable figure.

    `restarts`: the run's, as the ledger counts them (analysis/ledger.py; default: the sum
    of the sealed days'). Once the run has finished, its projected cost is its final cost:
    a claim about what the run would cost is judged against what it did cost.
    """
    c, d = config_artifact, data_artifact
    mfus = sorted(x["throughput"]["mfu_p50"] for x in days
                  if x["throughput"].get("mfu_p50") is not None)
    usd = list((cost.get("usd") or {}).values())
    projected = list((cost.get("projected_usd") or {}).values())
    if cost.get("finished"):
        projected = usd
    if restarts is None and days:
        restarts = float(sum(x.get("restarts") or 0 for x in days))
    return {
        "config.accelerators": (float(config.run.accelerators.count), *c),
        "config.token_budget": (config.run.token_budget, *c),
        "config.planned_days": (float(config.run.planned_days), *c),
        "config.sequence_length": (float(config.run.sequence_length)
                                   if config.run.sequence_length else None, *c),
        "data.tokens": (cost.get("tokens"), *d),
        "data.mfu_p50": (mfus[len(mfus) // 2] if mfus else None, *d),
        "data.accelerator_hours": (cost.get("accelerator_hours"), *d),
        "data.cost_usd": (max(usd) if usd else None, *d),
        "data.projected_cost_usd": (max(projected) if projected else None, *d),
        "data.restarts": (restarts, *d),
        "data.days": (float(len(days)) if days else None, *d),
    }


def check_claim(claim: Claim, figure: Figure) -> dict[str, Any]:
    """Return the claim's verdict against one figure, with evidence and method."""
    value, artifact, sha = figure
    method = {
        "equals": f"claimed value equals {claim.against}",
        "within": f"claimed value within {claim.tolerance:.0%} of {claim.against}",
        "at_least": f"{claim.against} is at least the claimed value",
        "at_most": f"{claim.against} is at most the claimed value",
    }[claim.how]
    if value is None:
        status = "unverifiable"
    elif claim.how == "equals":
        status = "consistent" if abs(value - claim.value) <= 1e-9 * max(1.0, abs(value)) else (
            "contradicted")
    elif claim.how == "within":
        ok = abs(claim.value - value) <= claim.tolerance * abs(value)
        status = "consistent" if ok else "contradicted"
    elif claim.how == "at_least":
        status = "consistent" if value >= claim.value else "contradicted"
    else:
        status = "consistent" if value <= claim.value else "contradicted"
    return {
        "statement": claim.statement, "value": claim.value, "unit": claim.unit,
        "who": claim.who, "where": claim.where,
        "when": claim.when.isoformat() if claim.when else None,
        "against": claim.against, "figure": value, "how": claim.how, "method": method,
        "tolerance": claim.tolerance,
        "status": status, "evidence": {"artifact": artifact, "sha256": sha},
    }


def check_claims(config: RunConfig, figs: Mapping[str, Figure]) -> list[dict[str, Any]]:
    """Return every configured claim's verdict."""
    return [check_claim(c, figs[c.against]) for c in config.watch.claims]
