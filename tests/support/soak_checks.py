"""What the soak (tests/support/soak.py) checks, night by night and at the end."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from click.testing import CliRunner

from chronicle.cli import main
from chronicle.store import Store, sha256_file

# Figures computed from W&B's rows only: a late seal must equal the clean run's always.
WANDB_FIGURES = ("data", "steps", "tokens", "phase", "loss", "throughput", "moe", "grad_norm",
                 "learning_rate", "downtime_seconds", "runs", "forks", "accelerator_hours",
                 "cost", "cumulative", "prediction")
# Fields that name the sealing (which snapshot, when, from which stored files): they
# differ between a timely and a late seal by construction. Corrections are announced by
# whichever entry is sealed first after they are found.
SEALING = ("sealed_by", "sealed_at", "backfilled", "provenance", "corrections")


class Ledger:
    """Every store file seen so far and its sha256: none may change afterwards."""

    def __init__(self, root: Path) -> None:
        self.docs = root / "docs"
        self.seen: dict[str, str] = {}

    def changed(self) -> list[str]:
        """Record the store's files; return those whose bytes changed or that vanished."""
        now = {str(p.relative_to(self.docs)): sha256_file(p)
               for sub in ("data", "days") for p in (self.docs / sub).rglob("*") if p.is_file()}
        gone = [p for p, sha in self.seen.items() if now.get(p) != sha]
        self.seen.update(now)
        return gone


def check_night(root: Path, ledger: Ledger, night: int) -> int:
    """Verify the store, its sealed bytes, its rows and its days; return bytes changed."""
    verify = CliRunner().invoke(main, ["verify", "--dir", str(root)])
    assert verify.exit_code == 0, f"night {night}: verify failed:\n{verify.output}"
    changed = ledger.changed()
    assert not changed, f"night {night}: stored bytes changed: {changed[:5]}"
    store = Store(root / "docs")
    keys: Counter[tuple[str, int]] = Counter()
    for snap in store.snapshots():
        if "metrics.parquet" in snap.files:
            table = pq.read_table(snap.path / "metrics.parquet", columns=["run", "step"])
            keys.update(zip(table.column("run").to_pylist(), table.column("step").to_pylist(),
                            strict=True))
    twice = [k for k, n in keys.items() if n > 1]
    assert not twice, f"night {night}: (run, step) stored twice: {twice[:5]}"
    days = Counter(day for snap in store.snapshots() for day in snap.sealed)
    assert all(n == 1 for n in days.values()), f"night {night}: a day sealed twice: {days}"
    return len(changed)


def _github_failed_first(store: Store, day: str) -> bool:
    """Whether GitHub failed in the first snapshot taken after `day` ended."""
    closed = date.fromisoformat(day) + timedelta(days=1)
    first = next(s for s in store.snapshots() if s.taken_at.date() >= closed)
    status = first.sources.get("github")
    return status is not None and not status.ok


def _figures(doc: dict[str, Any], keys: tuple[str, ...] | None) -> dict[str, Any]:
    if keys is not None:
        return {k: doc.get(k) for k in keys}
    return {k: v for k, v in doc.items() if k not in SEALING}


def compare_days(subject: Path, reference: Path) -> int:
    """Every day the clean run sealed is sealed once in the subject, with its figures.

    A day whose first snapshot after it found GitHub down is sealed from GitHub's next
    answer, which shows each thread as it is then (GitHub serves a comment's present text
    and an issue's present state only): its W&B figures must match; the rest may not.
    Otherwise every figure and every chart must match byte for byte.
    """
    ours, theirs = Store(subject / "docs"), Store(reference / "docs")
    days = sorted(d.isoformat() for d in theirs.sealed_days())
    assert sorted(d.isoformat() for d in ours.sealed_days()) == days, "sealed days differ"
    for day in days:
        a = json.loads((ours.days / f"{day}.json").read_bytes())
        b = json.loads((theirs.days / f"{day}.json").read_bytes())
        assert "missing_sources" not in a, f"{day} was sealed without a source"
        partial = _github_failed_first(ours, day)
        keys = WANDB_FIGURES if partial else None
        assert _figures(a, keys) == _figures(b, keys), f"{day}: figures differ from the clean run"
        if not partial:
            for chart in sorted((theirs.days / day).iterdir()):
                assert (ours.days / day / chart.name).read_bytes() == chart.read_bytes(), chart
    return len(days)
