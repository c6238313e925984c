"""A ledger (analysis/ledger.py) of failure records alone, for tests of a page given one."""

from __future__ import annotations

from collections.abc import Sequence

from chronicle.analysis.ledger import Ledger, LedgerInputs, build_ledger
from chronicle.analysis.series import build_series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.store import rows_to_table
from tests.support.config import make_config


def ledger_of(failures: Sequence[FailureRecord], config: RunConfig | None = None) -> Ledger:
    """Return the ledger of `failures` with no metric row and no sealed day."""
    config = config or make_config()
    series = build_series(rows_to_table([]), [], config)
    return build_ledger(LedgerInputs(config, [], series, list(failures)))
