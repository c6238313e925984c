"""Reading W&B run configs (analysis stage, pure): canonical values through
`wandb.config_keys`, the implied token budget, and the differences between two configs.

A path a config lacks is unknown (None), never 0. Values that only name the run itself
(its id in a checkpoint path, `trainer.id`) are not differences: every forked run has
its own.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chronicle.config import RunConfig

# A node whose children differ in more places than this is reported once, as a whole.
MAX_CHILDREN = 12
# Values longer than this (as JSON) are shown as a summary with their sha256.
MAX_VALUE_CHARS = 200
_MISSING = object()


def lookup(config: Mapping[str, Any], path: str) -> Any:
    """Return the value at a dotted `path` of a (W&B-unwrapped) config, or None if absent."""
    node: Any = config
    for part in path.split("."):
        if isinstance(node, Mapping) and "value" in node and set(node) <= {"value", "desc"}:
            node = node["value"]  # a config stored still wrapped as {"value": ...}
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if isinstance(node, Mapping) and "value" in node and set(node) <= {"value", "desc"}:
        node = node["value"]
    return node


def as_count(value: Any) -> int | None:
    """Return a positive whole number (4096, 4096.0, "4096"), or None: unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0 \
            and float(value).is_integer():
        return int(value)
    return None


def canonical(config: Mapping[str, Any], name: str, settings: RunConfig) -> int | None:
    """Return the canonical config value `name` (sequence_length, train_steps,
    batch_size) of a run config, or None when its path is absent or not a count."""
    return as_count(lookup(config, settings.wandb.config_keys[name]))


def sequence_length(config: Mapping[str, Any], settings: RunConfig) -> int | None:
    """Return a run's sequence length: its config, else `run.sequence_length`, else None."""
    return canonical(config, "sequence_length", settings) or settings.run.sequence_length


@dataclass(frozen=True)
class Segment:
    """A stretch of the lineage trained under one run's config: from `start` on."""

    run: str
    start: int  # its first step
    config: Mapping[str, Any]


def implied_budget(segments: Sequence[Segment], settings: RunConfig) -> int | None:
    """Return the token budget the lineage's configs imply, or None if any term is unknown.

    Steps already trained count at the batch size and sequence length they were trained
    with: each segment up to the next one's start, and the last one up to its own
    `train_steps`.
    """
    total = 0
    for i, seg in enumerate(segments):
        batch = canonical(seg.config, "batch_size", settings)
        seq = sequence_length(seg.config, settings)
        if i + 1 < len(segments):
            end: int | None = segments[i + 1].start
        else:
            end = canonical(seg.config, "train_steps", settings)
        if batch is None or seq is None or end is None:
            return None
        total += max(0, end - seg.start) * batch * seq
    return total


@dataclass(frozen=True)
class Difference:
    """One config path whose value differs; None means absent (or null) on that side."""

    path: str
    before: Any
    after: Any


def differences(before: Mapping[str, Any], after: Mapping[str, Any],
                names: tuple[str, str] = ("", "")) -> list[Difference]:
    """Return the differences between two configs, dotted paths in order.

    `names` are the two runs' ids: a value that differs only by naming its own run is no
    difference. Nested mappings are compared key by key, except that a mapping whose
    keys differ in more than MAX_CHILDREN places is one difference.
    """
    out: list[Difference] = []
    _diff(before, after, "", names, out)
    return out


def _diff(a: Any, b: Any, path: str, names: tuple[str, str], out: list[Difference]) -> None:
    if a == b or _same_but_names(a, b, names):
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = list(dict.fromkeys([*a, *b]))
        changed = [k for k in keys if not _equal(a.get(k, _MISSING), b.get(k, _MISSING), names)]
        if len(changed) <= MAX_CHILDREN or not path:
            for k in changed:
                _diff(a.get(k), b.get(k), f"{path}.{k}" if path else str(k), names, out)
            return
    out.append(Difference(path, shown(a), shown(b)))


def _equal(a: Any, b: Any, names: tuple[str, str]) -> bool:
    return a == b or (a is not _MISSING and b is not _MISSING and _same_but_names(a, b, names))


def _same_but_names(a: Any, b: Any, names: tuple[str, str]) -> bool:
    old, new = names
    if not old or not new or old == new:
        return False
    text_a = json.dumps(a, sort_keys=True, default=str)
    text_b = json.dumps(b, sort_keys=True, default=str)
    return old in text_a and text_a.replace(old, "\0") == text_b.replace(new, "\0")


def shown(value: Any) -> Any:
    """Return `value`, or a summary with its sha256 when its JSON is long."""
    text = json.dumps(value, sort_keys=True, default=str)
    if len(text) <= MAX_VALUE_CHARS:
        return value
    kind = ("a mapping of" if isinstance(value, Mapping) else "a list of"
            if isinstance(value, list) else "a value of")
    size = f"{len(value)} entries" if isinstance(value, Mapping | list) else f"{len(text)} chars"
    return {"summary": f"{kind} {size}", "sha256": hashlib.sha256(text.encode()).hexdigest()}
