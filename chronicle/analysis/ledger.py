"""One ledger of what happened in the run: every event computed once (analysis stage, pure).

Pages used to derive their own views of downtime, restarts, alerts and risks, and the
views drifted apart. Here each event of the run is computed once from the verified store
(the stitched series, the failure records, the sealed days' verdicts, the changes) and
every page is a view over the list:

- downtime: a gap in the telemetry, a fork that rewound the run, a restart someone
  recorded; each counts one restart on the day it started, and its seconds and lost
  accelerator-hours on each day it touches (split at UTC midnight, never counted twice
  where two records overlap, never after the run's finish);
- loss spikes and NaN losses; incidents people reported (issues, failures.yml), linked to
  the downtime they overlap but never added to it (they describe it);
- alerts: each health check that warned or failed on a sealed day, and every eval outside
  the prediction's band (not only a day's last one);
- risk points that fired or passed; changes of the run; decisions (a change of the budget
  or the configuration that follows a risk point or its review, linked to it and to the
  pull requests merged between them); the run's finish;
- corrections: late rows the manifests recorded, and what a sealed day says that the
  ledger now counts otherwise (a fork found after the day was sealed).

Per-day figures add up to the run's totals by construction: a total is the sum of its
days. Sentences are the render stage's (render/ledger_text.py), said from each event's
`facts` in any language.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from chronicle.analysis.corrections import TRACKED, differs
from chronicle.analysis.day_model import figure_at
from chronicle.analysis.prediction import eval_points
from chronicle.analysis.records import ChangeRecord
from chronicle.analysis.run_state import Finish
from chronicle.analysis.series import Series, day_bounds
from chronicle.config import RunConfig
from chronicle.models import RESTART_KINDS, FailureRecord, iso

LEDGER_SCHEMA = "chronicle-ledger/1"
KINDS = ("downtime", "loss_spike", "nan_loss", "incident", "alert", "eval_outside_band",
         "risk_fired", "risk_passed", "change", "decision", "finish", "correction")
# What a day's events move: summed per day, and the day sums summed for the run.
FIGURES = ("downtime_seconds", "accelerator_hours_lost", "restarts")
# A change this long after a risk point fired (or its window closed) is its decision.
DECISION_DAYS = 3.0
DECIDING = ("budget", "config", "sequence_length")  # kinds of change a decision can be
SPIKE_BEFORE_EVAL_S = 3600.0  # a loss spike this close before an eval is linked to it
_DAY_S = 86_400.0


@dataclass(frozen=True)
class Event:
    """One thing that happened: when, on which days, what it moved, what it rests on.

    `facts` are the figures its sentence is said from in every language; `per_day` the
    figures it moves on each day it touches (FIGURES); `links` the ids of related events
    (a decision's risk and change, an incident's downtime, a correction's cause).
    """

    id: str
    kind: str
    start: float  # epoch seconds, UTC
    end: float | None  # None: a point in time, or still open (`open`)
    days: tuple[str, ...]  # every UTC day it touches, oldest first
    facts: Mapping[str, Any] = field(default_factory=dict)
    per_day: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    evidence: tuple[Mapping[str, Any], ...] = ()
    links: tuple[str, ...] = ()
    open: bool = False

    @property
    def figures(self) -> dict[str, float]:
        """What the event moves over the run: the sum of its days."""
        return {k: sum(float(d.get(k, 0.0)) for d in self.per_day.values()) for k in FIGURES
                if any(k in d for d in self.per_day.values())}

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "start": _iso(self.start),
                "end": _iso(self.end), "open": self.open, "days": list(self.days),
                "figures": self.figures,
                "per_day": {d: dict(v) for d, v in self.per_day.items()},
                "facts": dict(self.facts), "evidence": [dict(e) for e in self.evidence],
                "links": list(self.links)}


@dataclass(frozen=True)
class Ledger:
    """Every event of the run, in order, and the sealed days they are counted on."""

    events: tuple[Event, ...]
    days: tuple[str, ...]  # the sealed days, oldest first

    def on(self, day: str) -> list[Event]:
        """Return the events that touch `day` (a correction: the day it corrects)."""
        return [e for e in self.events if day in e.days]

    def of_kind(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    def corrected(self, day: str, figure: str) -> Any | None:
        """Return a sealed day's figure as the newest correction of it says (None: not
        corrected); a page that derives from the figure (sustained throughput from the
        day's tokens) then agrees with the corrected downtime beside it."""
        found = [e for e in self.of_kind("correction")
                 if e.facts.get("day") == day and e.facts.get("figure") == figure]
        return found[-1].facts.get("corrected") if found else None

    def per_day(self) -> dict[str, dict[str, float]]:
        """Return each sealed day's figures (FIGURES), summed over the events of the day;
        every sealed day is there, with zeros when nothing happened."""
        return _per_day(self.events, self.days)

    def totals(self) -> dict[str, float]:
        """Return the run's figures: the sum of its days' (never computed another way)."""
        days = self.per_day().values()
        return {k: sum(d[k] for d in days) for k in FIGURES}

    def to_json(self, as_of: str | None = None) -> dict[str, Any]:
        """Return the ledger as api/ledger.json publishes it: restarts are counts, so
        integers there (43, not 43.0); the other figures stay as computed."""
        def counted(figures: dict[str, float]) -> dict[str, Any]:
            return {k: int(v) if k == "restarts" else v for k, v in figures.items()}

        return {"schema": LEDGER_SCHEMA, "as_of": as_of, "days": list(self.days),
                "totals": counted(self.totals()),
                "per_day": {day: counted(f) for day, f in self.per_day().items()},
                "events": [e.to_json() for e in self.events]}


@dataclass(frozen=True)
class LedgerInputs:
    """What the ledger is computed from: one view of the verified store."""

    config: RunConfig
    days: Sequence[Mapping[str, Any]]  # sealed day JSON, oldest first: the days told
    series: Series
    failures: Sequence[FailureRecord]
    changes: Sequence[ChangeRecord] = ()
    finish: Finish | None = None
    as_of: float | None = None  # when the view was taken: open intervals end here
    corrections: Sequence[Mapping[str, Any]] = ()  # late rows, as the manifests recorded
    # When each failure record was first stored (id -> (snapshot id, epoch s)), and the
    # snapshot that sealed each day: a record first stored after its day was sealed is
    # a correction of that day.
    first_seen: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    sealers: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    # A sealed day's figures computed again from the stitched series (for days a fork
    # rewound after they were sealed); None: not available, no such correction is made.
    refigure: Callable[[str], Mapping[str, Any]] | None = None
    # Every sealed day's JSON a correction compares with (default: `days`): a night
    # sealing one day tells that day, and corrects any earlier one.
    sealed: Mapping[str, Mapping[str, Any]] | None = None


def build_ledger(i: LedgerInputs) -> Ledger:
    """Return the ledger of `i`: every event, oldest first (by start, then kind, then id)."""
    # Process.
    days = tuple(str(d["date"]) for d in i.days)
    events = _downtime(i)
    events += _records(i, events)
    events += _alerts(i)
    events += _evals(i, events)
    risks = _risks(i)
    changes = _changes(i)
    events += risks + changes + _decisions(risks, changes)
    events += _finish(i)
    ordered = sorted(events, key=lambda e: (e.start, KINDS.index(e.kind), e.id))
    corrections = _corrections(i, Ledger(tuple(ordered), days))

    # Save outputs.
    return Ledger(tuple(ordered + corrections), days)


# ---------------------------------------------------------------------------
# Downtime: gaps, forks and recorded restarts, each second counted once.

def _downtime(i: LedgerInputs) -> list[Event]:
    per_hour = i.config.run.accelerators.count / 3600.0
    gap_s = i.config.failures.gap_minutes * 60.0
    end_of = _end_of(i)
    covered: list[tuple[float, float]] = []
    out: list[Event] = []
    for f in sorted((f for f in i.failures if f.kind in RESTART_KINDS),
                    key=lambda f: (f.start, f.id)):
        start, end = f.start.timestamp(), end_of(f)
        # A fork whose child took over within the gap threshold lost no telemetry (the
        # days' own figures count no gap that short); it is a restart all the same.
        silent = end - start > gap_s or f.kind != "fork"
        new = _uncovered(start, end, covered) if silent else []
        covered = _merge([*covered, (start, end)]) if silent else covered
        per_day: dict[str, dict[str, float]] = {
            day: {"downtime_seconds": seconds, "accelerator_hours_lost": seconds * per_hour,
                  "restarts": 0.0} for day, seconds in _split(new)}
        first = per_day.setdefault(_day(start), {"downtime_seconds": 0.0,
                                                 "accelerator_hours_lost": 0.0})
        first["restarts"] = 1.0  # counted once, on the day it started
        out.append(Event(
            f"downtime:{f.id}", "downtime", start, end if f.end is not None else None,
            _days(start, end), facts={"cause": f.kind, "record": f.id, "seconds": end - start,
                                      "what": f.what, "detail": dict(f.detail),
                                      "source": f.source},
            per_day=per_day, evidence=_evidence(f), open=f.end is None))
    return out


def _end_of(i: LedgerInputs) -> Callable[[FailureRecord], float]:
    """Return when a record's downtime ends: its end, or (still open) the view's time; never
    after the run's finish, whose silence is no downtime."""
    def end(f: FailureRecord) -> float:
        start = f.start.timestamp()
        t = f.end.timestamp() if f.end is not None else (i.as_of or start)
        if i.finish is not None and f.kind != "fork":
            t = min(t, max(start, i.finish.at))
        return max(t, start)
    return end


def _uncovered(a: float, b: float, covered: Sequence[tuple[float, float]]
               ) -> list[tuple[float, float]]:
    """Return the parts of [a, b) that no interval of `covered` (merged, sorted) holds."""
    out, at = [], a
    for lo, hi in covered:
        if hi <= at or lo >= b:
            continue
        if lo > at:
            out.append((at, lo))
        at = max(at, hi)
    if at < b:
        out.append((at, b))
    return out


def _merge(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _split(spans: Iterable[tuple[float, float]]) -> list[tuple[str, float]]:
    """Return the seconds of `spans` on each UTC day they touch, oldest first."""
    out: dict[str, float] = {}
    for a, b in spans:
        t = a
        while t < b:
            day_end = (np.floor(t / _DAY_S) + 1) * _DAY_S
            stop = min(b, float(day_end))
            out[_day(t)] = out.get(_day(t), 0.0) + (stop - t)
            t = stop
    return sorted(out.items())


# ---------------------------------------------------------------------------
# What the records and the sealed days say.

def _records(i: LedgerInputs, downtime: Sequence[Event]) -> list[Event]:
    """Loss spikes and NaN losses the metrics show, and incidents people reported (each
    linked to the downtime it overlaps, never added to it)."""
    out: list[Event] = []
    for f in i.failures:
        if f.kind in RESTART_KINDS:
            continue
        start = f.start.timestamp()
        end = f.end.timestamp() if f.end is not None else None
        kind = f.kind if f.kind in ("loss_spike", "nan_loss") else "incident"
        links = tuple(d.id for d in downtime if _overlap(start, end or start, d)) \
            if kind == "incident" else ()
        facts = {"record": f.id, "what": f.what, "detail": dict(f.detail),
                 "source": f.source, "reported_kind": f.kind,
                 "accelerator_hours_reported": f.accelerator_hours_lost}
        out.append(Event(f"{kind}:{f.id}", kind, start, end, _days(start, end or start),
                         facts=facts, evidence=_evidence(f), links=links,
                         open=f.end is None and kind == "incident"))
    return out


def _overlap(a: float, b: float, e: Event) -> bool:
    return a <= (e.end if e.end is not None else e.start) and e.start <= b


def _evidence(f: FailureRecord) -> tuple[Mapping[str, Any], ...]:
    """Return a record's evidence lines, each once (a spike's onset is often its peak)."""
    facts = f.detail.get("evidence") if isinstance(f.detail.get("evidence"), list) else None
    out: list[Mapping[str, Any]] = []
    for n, line in enumerate(f.evidence):
        item: dict[str, Any] = {"text": line}
        if facts is not None and len(facts) == len(f.evidence) and isinstance(facts[n], dict):
            item["fact"] = dict(facts[n])
        if item not in out:
            out.append(item)
    return tuple(out)


def _alerts(i: LedgerInputs) -> list[Event]:
    """Each health check that warned or failed on a sealed day, as that day sealed it."""
    out: list[Event] = []
    for d in i.days:
        health = d.get("health") or {}
        start = day_bounds(date.fromisoformat(str(d["date"])))[0]
        for c in health.get("checks") or ():
            if c.get("status") not in ("warn", "fail"):
                continue
            at = _time(c.get("when")) or start
            out.append(Event(f"alert:{d['date']}:{c['id']}", "alert", at, None,
                             (str(d["date"]),), facts={"check": dict(c)}))
    return out


def _evals(i: LedgerInputs, known: Sequence[Event]) -> list[Event]:
    """Every eval outside the prediction's band (a day's record keeps only its last one),
    linked to a loss spike just before it."""
    pred = i.config.watch.prediction
    if pred is None or not len(i.series):
        return []
    pts = eval_points(i.series, i.config, pred, np.inf if i.as_of is None else i.as_of)
    spikes = [e for e in known if e.kind == "loss_spike"] or []
    out: list[Event] = []
    for n in range(pts["step"].size):
        lo, hi, actual = pts["low"][n], pts["high"][n], pts["actual"][n]
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= actual <= hi:
            continue
        t = float(pts["time"][n])
        step = int(pts["step"][n])
        links = tuple(s.id for s in spikes if t - SPIKE_BEFORE_EVAL_S <= s.start <= t)
        out.append(Event(f"eval:{step}", "eval_outside_band", t, None, (_day(t),), facts={
            "step": step, "fraction": _num(pts["fraction"][n]), "actual": float(actual),
            "predicted": _num(pts["predicted"][n]), "low": float(lo), "high": float(hi),
            "residual": _num(pts["residual"][n]), "above": bool(actual > hi),
            "metric": pred.metric}, links=links))
    return out


def _risks(i: LedgerInputs) -> list[Event]:
    """Each risk point that fired or passed, on the day its status turned."""
    out: list[Event] = []
    last: dict[str, str] = {}
    for d in i.days:
        day = str(d["date"])
        for r in d.get("risks") or ():
            status, before = r.get("status"), last.get(r["id"])
            last[r["id"]] = status
            if status == before or status not in ("triggered", "passed"):
                continue
            kind = "risk_fired" if status == "triggered" else "risk_passed"
            told = str((r.get("evidence") or {}).get("date") or day) \
                if kind == "risk_fired" else day
            start = day_bounds(date.fromisoformat(told))[0]
            out.append(Event(f"{kind}:{r['id']}", kind, start, None, (told,), facts={
                "risk": r["id"], "title": r.get("title"), "rule": r.get("rule"),
                "metric": list(r.get("metric") or ()), "watch": list(r.get("watch") or ()),
                "reason": r.get("reason"), "value": (r.get("evidence") or {}).get("value"),
                "threshold": (r.get("evidence") or {}).get("threshold"),
                "fraction": r.get("fraction"), "baseline": r.get("baseline"),
                "after": r.get("after"), "change": r.get("change"),
                "window_minutes": next((x.window_minutes for x in i.config.watch.risks
                                        if x.id == r["id"]), None)}))
    return out


def _changes(i: LedgerInputs) -> list[Event]:
    out: list[Event] = []
    for c in i.changes:
        t = _time(c.get("time"))
        if t is None:
            continue
        out.append(Event(f"change:{c['id']}", "change", t, None, (_day(t),),
                         facts={"change": dict(c)},
                         evidence=tuple(dict(e) for e in c.get("evidence") or ())))
    return out


def _decisions(risks: Sequence[Event], changes: Sequence[Event]) -> list[Event]:
    """A change of the token budget within DECISION_DAYS after a risk point fired (or
    passed: its review) is what was decided there, with every change of the same deploy
    (within the hour); the first pull request merged after the risk point, before the
    change, is how it was decided. One decision per risk point."""
    out: list[Event] = []
    taken: set[str] = set()
    horizon = (DECISION_DAYS + 1) * _DAY_S  # the risk's event starts at its day's midnight
    for r in sorted(risks, key=lambda e: (e.kind != "risk_fired", e.start)):
        point = r.facts["risk"]
        if point in {e.facts.get("risk") for e in out}:
            continue
        follow = [c for c in changes if c.facts["change"]["kind"] == "budget"
                  and c.id not in taken and r.start <= c.start <= r.start + horizon]
        if not follow:
            continue
        first = follow[0].start
        chosen = [c for c in changes if c.facts["change"]["kind"] in DECIDING
                  and 0.0 <= c.start - first < 3600.0]
        pull = next((c for c in changes if c.facts["change"]["kind"] == "pull_request"
                     and r.start <= c.start <= first), None)
        taken.update(c.id for c in chosen)
        out.append(Event(f"decision:{point}", "decision", first, None, (_day(first),),
                         facts={"risk": point, "title": r.facts.get("title"),
                                "risk_status": r.kind, "risk_day": r.days[0],
                                "changes": [c.facts["change"] for c in chosen],
                                "pull": pull.facts["change"] if pull else None},
                         links=(r.id, *(c.id for c in chosen), *((pull.id,) if pull else ()))))
    return out


def _finish(i: LedgerInputs) -> list[Event]:
    f = i.finish
    if f is None:
        return []
    day = _day(f.at)
    number = (date.fromisoformat(day) - i.config.run.start).days + 1
    return [Event("finish", "finish", f.at, None, (day,), facts={
        "step": f.step, "by": f.by, "target": f.target, "day": number,
        "planned_days": i.config.run.planned_days})]


# ---------------------------------------------------------------------------
# Corrections: what a sealed day says that the ledger now counts otherwise.

def _corrections(i: LedgerInputs, ledger: Ledger) -> list[Event]:
    out = [_late_rows(i, c) for c in i.corrections if isinstance(c, Mapping) and c.get("day")]
    latest = {(c.facts["day"], c.facts["figure"]): c.facts["corrected"] for c in out}
    by_day = i.sealed if i.sealed is not None else {str(d["date"]): d for d in i.days}
    counted = _per_day(ledger.events, by_day)
    causes = _found_later(i, ledger)
    for day, sealed in by_day.items():
        found = causes.get(day)
        if not found:
            continue
        moved: dict[str, tuple[Any, Any]] = {}
        for figure in ("downtime_seconds", "restarts"):
            before = latest.get((day, figure), figure_at(sealed, figure))
            now = counted.get(day, {}).get(figure, 0.0)
            now = int(now) if figure == "restarts" else now
            if before is None or _moved(figure, before, now):
                moved[figure] = (before, now)
        if i.refigure is not None and any(e.facts.get("cause") == "fork" for e in found[2]):
            again = i.refigure(day)
            for figure in TRACKED:
                if figure == "downtime_seconds":
                    continue
                before = latest.get((day, figure), figure_at(sealed, figure))
                if differs(before, figure_at(again, figure), figure):
                    moved[figure] = (before, figure_at(again, figure))
        snapshot, at, events = found
        for figure, (before, now) in sorted(moved.items()):
            out.append(Event(
                f"correction:{day}/{figure}/{snapshot}", "correction", at, None, (day,),
                facts={"day": day, "figure": figure, "sealed": figure_at(sealed, figure),
                       "previous": before, "corrected": now, "found_by": snapshot,
                       "found_at": _iso(at), "sealed_by": sealed.get("sealed_by"),
                       "cause": "found_later", "events": [e.id for e in events],
                       "announced_in": _announced(i, at, day)},
                links=tuple(e.id for e in events)))
    return sorted(out, key=lambda e: (e.start, e.id))


def _late_rows(i: LedgerInputs, c: Mapping[str, Any]) -> Event:
    at = _time(c.get("found_at")) or 0.0
    return Event(f"correction:{c['id']}", "correction", at, None, (str(c["day"]),),
                 facts={**dict(c), "cause": "late_rows",
                        "announced_in": _announced(i, at, str(c["day"]))})


def _moved(figure: str, before: Any, now: float) -> bool:
    if figure == "restarts":
        return int(before or 0) != int(now)
    return abs(float(before or 0.0) - float(now)) > TRACKED["downtime_seconds"][0]


def _found_later(i: LedgerInputs, ledger: Ledger) -> dict[str, tuple[str, float, list[Event]]]:
    """Return, per sealed day, the downtime events touching it whose record was first
    stored after the day was sealed: (the snapshot that stored the last of them, when,
    the events)."""
    out: dict[str, tuple[str, float, list[Event]]] = {}
    for e in ledger.of_kind("downtime"):
        seen = i.first_seen.get(str(e.facts["record"]))
        if seen is None:
            continue
        for day in e.days:
            sealer = i.sealers.get(day)
            if sealer is None or seen[1] <= sealer[1]:
                continue
            snapshot, at, events = out.get(day, (seen[0], seen[1], []))
            if seen[1] > at:
                snapshot, at = seen
            out[day] = (snapshot, at, [*events, e])
    return out


def _announced(i: LedgerInputs, at: float, day: str) -> str | None:
    """Return the first day sealed after `at` (and after `day`): the entry that tells the
    correction (None: not sealed yet)."""
    later = sorted((taken, d) for d, (_, taken) in i.sealers.items() if taken >= at and d > day)
    return later[0][1] if later else None


# ---------------------------------------------------------------------------
# Helpers.

def _per_day(events: Iterable[Event], days: Iterable[str]) -> dict[str, dict[str, float]]:
    out = {d: dict.fromkeys(FIGURES, 0.0) for d in days}
    for e in events:
        for day, moved in e.per_day.items():
            if day in out:
                for k, v in moved.items():
                    out[day][k] += float(v)
    return out


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).date().isoformat()


def _days(start: float, end: float) -> tuple[str, ...]:
    """Return every UTC day [start, end] touches (its last second included: an interval
    ending at midnight does not touch the next day)."""
    first = datetime.fromtimestamp(start, tz=UTC).date()
    last = datetime.fromtimestamp(max(start, end - 1e-6) if end > start else start,
                                  tz=UTC).date()
    return tuple((first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1))


def _time(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _iso(t: float | None) -> str | None:
    return iso(datetime.fromtimestamp(t, tz=UTC)) if t is not None else None


def _num(value: Any) -> float | None:
    v = float(value)
    return v if np.isfinite(v) else None
