"""Failure records read off the stitched metric series: forks, gaps, loss spikes, NaN loss.

Every detector is causal (a record depends only on rows up to its own end), so the same
incident seen again on a later night keeps its id; one still open at `as_of` has end=None.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from chronicle.analysis.run_state import Finish
from chronicle.analysis.series import Fork, Series
from chronicle.config import RunConfig
from chronicle.models import FailureRecord, iso

SOURCE = "metrics"
SPIKE_RECENT_S = 300.0  # the "last 5 minutes" whose minimum must clear the bar
SPIKE_BASELINE_S = 3600.0  # the trailing hour before that window
SPIKE_MIN_JUMP = 0.05
SPIKE_SIGMAS = 6.0
SPIKE_MIN_HISTORY = 10  # finite points the trailing hour needs before a point can be flagged


def detect_failures(series: Series, config: RunConfig, as_of: datetime,
                    finish: Finish | None = None) -> list[FailureRecord]:
    """Return the failure records the metrics show as of `as_of`, sorted by start then id.
    After the run's `finish` (analysis/run_state.py) its silence is no gap."""
    # Load inputs.
    if as_of.tzinfo is None:
        raise ValueError(f"naive datetime {as_of!r}: pass an aware UTC as_of")
    now = as_of.timestamp()
    seen = series.until(float(np.nextafter(now, np.inf)))  # rows logged up to as_of
    per_hour = config.run.accelerators.count / 3600.0
    gap_s = config.failures.gap_minutes * 60.0

    # Process.
    records, spans = _fork_records(seen, per_hour, gap_s)
    until = finish.at if finish is not None and finish.at <= now else now
    records += _gap_records(seen, per_hour, gap_s, until, spans)
    loss = seen.get("loss")
    if loss is not None and len(seen):
        records += _spike_records(seen, loss)
        records += _nan_records(seen, loss)

    # Save outputs.
    return sorted(records, key=lambda r: (r.start, r.id))


def loss_spikes(timestamp: np.ndarray, loss: np.ndarray) -> list[tuple[int, int]]:
    """Return index ranges [i, j) of consecutive rows flagged by the loss-spike rule."""
    flags, _, _ = _spike_scan(timestamp, loss)
    return _runs(flags, ~np.isfinite(loss))


# ---------------------------------------------------------------------------
# Detectors.

def _fork_records(s: Series, per_hour: float,
                  gap_s: float) -> tuple[list[FailureRecord], list[tuple[float, float]]]:
    """Return one record per fork already visible, and each fork's downtime span."""
    records: list[FailureRecord] = []
    spans: list[tuple[float, float]] = []
    for fork in s.forks:
        if not np.any(s.run == fork.run):
            continue  # the child had not logged anything by as_of
        before = np.flatnonzero((s.run == fork.parent) & (s.step < fork.step))
        if before.size == 0:  # the parent kept no row: the row before the child's first
            before = np.flatnonzero(s.step < fork.step)
        end = fork.timestamp
        last = int(before[-1]) if before.size else None
        start = end if last is None else min(float(s.timestamp[last]), end)
        spans.append((start, end))
        evidence, facts = _fork_evidence(s, fork, last, end - start > gap_s)
        records.append(FailureRecord(
            id=f"fork-{fork.run}",
            kind="fork",
            start=_dt(start),
            end=_dt(end),
            what=_fork_what(fork, end - start),
            accelerator_hours_lost=per_hour * (end - start),
            evidence=evidence,
            source=SOURCE,
            detail={"run": fork.run, "parent": fork.parent, "step": int(fork.step),
                    "redone": _redone(fork), "seconds": float(end - start),
                    "evidence": facts},
        ))
    return records, spans


def _redone(fork: Fork) -> int | None:
    """Return the parent's last step when the child re-did steps from a checkpoint."""
    # Series does not (yet) carry the parent's last raw step; use it when it does.
    redone = getattr(fork, "parent_last_step", None)
    return int(redone) if redone is not None and redone >= fork.step else None


def _fork_what(fork: Fork, downtime: float) -> str:
    text = f"W&B run {fork.run} forked from {fork.parent} at step {fork.step}"
    redone = _redone(fork)
    if redone is not None:
        text += f" (resumed from checkpoint; steps {fork.step}-{redone} re-done)"
    return f"{text}; no metrics for {_span(downtime)}"


def _fork_evidence(s: Series, fork: Fork, last: int | None,
                   was_gap: bool) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """Return the fork's evidence lines and the facts each states (`detail["evidence"]`)."""
    lines = [_line("first_row", fork.run, fork.step, fork.timestamp)]
    if last is not None:
        run, step = str(s.run[last]), int(s.step[last])
        lines.insert(0, _line("last_row_kept", run, step, s.timestamp[last]))
        if was_gap:  # an earlier night may have reported this downtime as an open gap
            step = getattr(fork, "parent_last_step", None) or step
            replaced = f"gap-{run}-{step}"
            lines.append((f"replaces {replaced}", {"role": "replaces", "id": replaced}))
    return tuple(text for text, _ in lines), [fact for _, fact in lines]


def _gap_records(s: Series, per_hour: float, gap_s: float, now: float,
                 spans: list[tuple[float, float]]) -> list[FailureRecord]:
    """Return one record per silence longer than gap_s that no fork explains."""
    records: list[FailureRecord] = []
    if not len(s):
        return records
    order = np.argsort(s.timestamp, kind="stable")
    t = s.timestamp[order]
    for i in np.flatnonzero(np.diff(t) > gap_s).tolist():
        if any(a <= t[i] and t[i + 1] <= b for a, b in spans):
            continue  # this downtime is the fork's, already recorded once
        a, b = int(order[i]), int(order[i + 1])
        rows = [_row(s, a), _row(s, b)]
        records.append(FailureRecord(
            id=f"gap-{s.run[a]}-{int(s.step[a])}",
            kind="gap",
            start=_dt(t[i]),
            end=_dt(t[i + 1]),
            what=f"no metrics for {_span(t[i + 1] - t[i])} after step {int(s.step[a])}",
            accelerator_hours_lost=per_hour * (t[i + 1] - t[i]),
            evidence=_texts(rows),
            source=SOURCE,
            detail={"step": int(s.step[a]), "seconds": float(t[i + 1] - t[i]),
                    "evidence": _facts(rows)},
        ))
    if now - t[-1] > gap_s:  # silent right now: open until a later row closes it
        a = int(order[-1])
        rows = [_row(s, a)]
        records.append(FailureRecord(
            id=f"gap-{s.run[a]}-{int(s.step[a])}",
            kind="gap",
            start=_dt(t[-1]),
            end=None,
            what=(f"no metrics since step {int(s.step[a])} "
                  f"({_span(now - t[-1])} so far as of {iso(_dt(now))})"),
            accelerator_hours_lost=per_hour * (now - t[-1]),
            evidence=_texts(rows),
            source=SOURCE,
            detail={"step": int(s.step[a]), "seconds": float(now - t[-1]),
                    "as_of": iso(_dt(now)), "evidence": _facts(rows)},
        ))
    return records


def _spike_records(s: Series, loss: np.ndarray) -> list[FailureRecord]:
    """Return one record per loss spike (see `_spike_scan` for the rule)."""
    flags, mean, sigma = _spike_scan(s.timestamp, loss)
    finite = np.isfinite(loss)
    after = np.concatenate((np.cumsum(finite[::-1])[::-1][1:], [0]))  # finite rows after each
    records: list[FailureRecord] = []
    for i, j in _runs(flags, ~finite):
        # The flag at i says every point of its 5-minute window cleared the bar: the
        # spike began at the earliest of them.
        recent = s.timestamp[: i + 1] > s.timestamp[i] - SPIKE_RECENT_S
        onset = int(np.flatnonzero(finite[: i + 1] & recent)[0])
        seg = np.where(finite[onset:j], loss[onset:j], -np.inf)
        peak = onset + int(np.argmax(seg))
        rows = [_row(s, onset), _row(s, peak), _row(s, j - 1)]
        records.append(FailureRecord(
            id=f"spike-{int(s.step[i])}",
            kind="loss_spike",
            start=_dt(s.timestamp[onset]),
            end=_dt(s.timestamp[j - 1]) if after[j - 1] else None,
            what=(f"loss spike to {loss[peak]:.4g} at step {int(s.step[peak])} over a "
                  f"trailing-hour baseline of {mean[i]:.4g} (sigma {sigma[i]:.2g}); "
                  f"steps {int(s.step[onset])}-{int(s.step[j - 1])}"),
            evidence=_texts(rows),
            source=SOURCE,
            # At the precision `what` states them: the trailing-hour statistics carry
            # summation noise in their last digits (a night and a backfill differ there).
            detail={"value": float(f"{loss[peak]:.4g}"), "step": int(s.step[peak]),
                    "baseline": float(f"{mean[i]:.4g}"), "sigma": float(f"{sigma[i]:.2g}"),
                    "first": int(s.step[onset]), "last": int(s.step[j - 1]),
                    "evidence": _facts(rows)},
        ))
    return records


def _nan_records(s: Series, loss: np.ndarray) -> list[FailureRecord]:
    """Return one record per run of consecutive logged rows whose loss is NaN or inf."""
    # `bad` tells a logged NaN/inf from a row that lacks the loss (both are NaN in
    # `values`); a series built without it counts every non-finite value.
    bad = s.bad.get("loss")
    if bad is None:
        bad = ~np.isfinite(loss)
    logged = bad | np.isfinite(loss)
    later = np.concatenate((np.cumsum(logged[::-1])[::-1][1:], [0]))  # logged rows after each
    records: list[FailureRecord] = []
    for i, j in _runs(bad, ~logged):
        rows = int(np.count_nonzero(bad[i:j]))
        first, last = int(s.step[i]), int(s.step[j - 1])
        lines = [_row(s, i), _row(s, j - 1)] if j - 1 > i else [_row(s, i)]
        records.append(FailureRecord(
            id=f"nan-{first}",
            kind="nan_loss",
            start=_dt(s.timestamp[i]),
            end=_dt(s.timestamp[j - 1]) if later[j - 1] else None,
            what=f"loss was NaN or inf on {rows} logged row(s), steps {first}-{last}",
            evidence=_texts(lines),
            source=SOURCE,
            detail={"rows": rows, "first": first, "last": last, "evidence": _facts(lines)},
        ))
    return records


# ---------------------------------------------------------------------------
# Vectorised helpers.

def _spike_scan(timestamp: np.ndarray,
                loss: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (flag, trailing-hour mean, trailing-hour sigma) per row, in the order given.

    A finite point at time t is flagged when min(loss over (t-5 min, t]) exceeds
    mean + max(0.05, 6 sigma) of the loss over (t-65 min, t-5 min], given at least
    SPIKE_MIN_HISTORY points there. NaN/inf points are ignored; only earlier points (in
    time) count, so a flag never changes when later rows arrive.
    """
    n = loss.size
    flags, mean, sigma = np.zeros(n, dtype=bool), np.full(n, np.nan), np.full(n, np.nan)
    idx = np.flatnonzero(np.isfinite(loss) & np.isfinite(timestamp))
    if idx.size <= SPIKE_MIN_HISTORY:
        return flags, mean, sigma
    idx = idx[np.argsort(timestamp[idx], kind="stable")]
    t = timestamp[idx]
    shift = float(np.median(loss[idx]))  # centring keeps sum-of-squares variance accurate
    y = loss[idx] - shift
    c1 = np.concatenate(([0.0], np.cumsum(y)))
    c2 = np.concatenate(([0.0], np.cumsum(y * y)))

    recent_lo = np.searchsorted(t, t - SPIKE_RECENT_S, side="right")
    recent_hi = np.arange(1, t.size + 1)  # up to and including the point itself
    base_lo = np.searchsorted(t, t - SPIKE_RECENT_S - SPIKE_BASELINE_S, side="right")
    count = recent_lo - base_lo
    enough = count >= SPIKE_MIN_HISTORY
    k = np.maximum(count, 1)
    mu = (c1[recent_lo] - c1[base_lo]) / k
    var = np.maximum((c2[recent_lo] - c2[base_lo]) / k - mu * mu, 0.0)
    sd = np.sqrt(var)
    low = _range_min(y, recent_lo, recent_hi)

    flags[idx] = enough & (low > mu + np.maximum(SPIKE_MIN_JUMP, SPIKE_SIGMAS * sd))
    mean[idx] = np.where(enough, mu + shift, np.nan)
    sigma[idx] = np.where(enough, sd, np.nan)
    return flags, mean, sigma


def _range_min(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Return min(y[lo[k]:hi[k]]) for each k (ranges non-empty): a sparse table, O(n log n)."""
    length = hi - lo
    level = np.floor(np.log2(length)).astype(np.int64)
    table = [y]  # table[j][i] = min(y[i : i + 2**j])
    while (1 << len(table)) <= int(length.max()):
        prev, half = table[-1], 1 << (len(table) - 1)
        table.append(np.minimum(prev[:-half], prev[half:]))
    out = np.empty(lo.size)
    for j, row in enumerate(table):
        sel = level == j
        if sel.any():
            out[sel] = np.minimum(row[lo[sel]], row[hi[sel] - (1 << j)])
    return out


def _runs(flag: np.ndarray, skip: np.ndarray) -> list[tuple[int, int]]:
    """Return [i, j) ranges of consecutive flagged rows; rows in `skip` neither join nor split."""
    pos = np.flatnonzero(~skip)
    f = flag[pos].astype(np.int8)
    edges = np.diff(np.concatenate(([0], f, [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(pos[a]), int(pos[b - 1]) + 1) for a, b in zip(starts, stops, strict=True)]


# An evidence line: the English the record stores (its bytes are the record's since
# v1) and the facts it states, from which every language says it (render/record_text.py).
Line = tuple[str, dict[str, Any]]
_LINES = {
    "row": "W&B run {run} step {step} at {time}",
    "last_row_kept": "W&B run {run} last row kept: step {step} at {time}",
    "first_row": "W&B run {run} first row: step {step} at {time}",
}


def _line(role: str, run: Any, step: Any, timestamp: float) -> Line:
    fact = {"role": role, "run": str(run), "step": int(step), "time": iso(_dt(timestamp))}
    return _LINES[role].format(**fact), fact


def _row(s: Series, i: int) -> Line:
    return _line("row", s.run[i], s.step[i], s.timestamp[i])


def _texts(lines: list[Line]) -> tuple[str, ...]:
    return tuple(text for text, _ in lines)


def _facts(lines: list[Line]) -> list[dict[str, Any]]:
    return [fact for _, fact in lines]


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)


def _span(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
