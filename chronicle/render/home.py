"""The home page: the run's dashboard (render stage, pure).

Above the fold: day N of planned, tokens against the budget, and the three signals
readers watch, each a small chart, one sentence with its verdict and a link to its page.
Below: the latest figures, open incidents, the stale banner, "data as of" and the newest
entries, all as of the newest data in the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from chronicle.analysis.day_model import DaySummary
from chronicle.analysis.ledger import Ledger
from chronicle.analysis.run_state import FINISHED, RUNNING, STALLED, RunState
from chronicle.analysis.series import Series, day_of_run
from chronicle.config import RunConfig
from chronicle.models import Archived, FailureRecord, RunRecord
from chronicle.render import render
from chronicle.render.day import one_line
from chronicle.render.i18n import Language, site_title
from chronicle.render.ledger_text import day_lines, grouped_corrections
from chronicle.render.record_text import day_title, failure_text
from chronicle.render.signal_charts import signal_panels

ETA_WINDOW_DAYS = 7


@dataclass(frozen=True)
class HomeInputs:
    """What the home page is built from (one build's view of the store)."""

    config: RunConfig
    days: Sequence[DaySummary]
    series: Series
    failures: Sequence[FailureRecord]
    stale: Sequence[Mapping[str, Any]]
    latest: Archived | None
    history: Sequence[Mapping[str, Any]]  # the watchers' verdicts per sealed day
    runs: Sequence[RunRecord] = ()
    waiting: Sequence[Mapping[str, Any]] = ()  # closed days the newest snapshot left unsealed
    head_sha256: str | None = None  # the newest manifest's sha256: the chain head
    state: RunState | None = None  # running, stalled or finished (analysis/run_state.py)
    # Every other section of the site (title in the page's language, page path): on a
    # laptop the home page hides the navigation, so it links each section itself.
    sections: Sequence[tuple[str, str]] = ()
    ledger: Ledger | None = None  # every event of the run (analysis/ledger.py)


def _last(series: Series, name: str, before: float = np.inf) -> float | None:
    xy = series.finite(name)
    if xy is None:
        return None
    idx = np.flatnonzero(xy[0] <= before)
    return float(xy[1][idx[-1]]) if idx.size else None


def _reached_on(series: Series, budget: float) -> str | None:
    """Return the UTC date the logged tokens first reached `budget`, if they did."""
    xy = series.finite("total_tokens")
    if xy is None:
        return None
    hit = np.flatnonzero(xy[1] >= budget)
    if not hit.size:
        return None
    return datetime.fromtimestamp(float(xy[0][hit].min()), tz=UTC).date().isoformat()


def budget_now(i: HomeInputs) -> tuple[float, Mapping[str, Any] | None]:
    """Return the token budget the run is held to: the configured one, or the one its
    newest budget change set (with that change's event: a deliberate cut is no shortfall)."""
    changes = [e for e in (i.ledger.of_kind("change") if i.ledger else ())
               if e.facts["change"]["kind"] == "budget"
               and isinstance(e.facts["change"].get("after"), int | float)]
    if not changes:
        return i.config.run.token_budget, None
    newest = changes[-1]
    decision = next((d for d in i.ledger.of_kind("decision") if newest.id in d.links), None) \
        if i.ledger else None
    return float(newest.facts["change"]["after"]), {
        "before": newest.facts["change"]["before"], "date": newest.days[0],
        "decided_at": decision.facts.get("title") if decision else None}


def progress(i: HomeInputs, now: datetime | None, tokens: float | None) -> dict[str, Any]:
    """Return the progress line's facts: percent, reached date or ETA, finished date."""
    budget, _change = budget_now(i)
    pct = round(min(100.0, max(0.0, 100.0 * (tokens or 0.0) / budget)), 1)
    window = [d["tokens"]["day"] for d in i.days[-ETA_WINDOW_DAYS:] if d["tokens"]["day"]]
    rate = sum(window) / len(window) if window else None
    reached = _reached_on(i.series, budget)
    if reached is None:
        pct = min(pct, 99.9)  # 99.96% is not "100.0%" of a budget not yet reached
    eta = None
    if reached is None and rate and tokens is not None and now is not None:
        eta = (now + timedelta(days=(budget - tokens) / rate)).strftime("%Y-%m-%d")
    finish = i.state.finish if i.state is not None else None
    finished = _date(finish.at) if finish is not None else None
    if finished is not None:
        eta = None
    return {"progress_pct": pct, "eta": eta, "eta_days": len(window), "eta_rate": rate,
            "reached": reached, "finished": finished, "budget": budget,
            "budget_change": _change,
            "finished_day": day_of_run(i.config, date.fromisoformat(finished))
            if finished else None}


def _date(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).date().isoformat()


def _time(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts, tz=UTC) if ts is not None else None


def render_home(i: HomeInputs, out: dict[str, str | bytes], lang: Language) -> str:
    """Return the home page in `lang` (and add its panel charts to `out`), as of the newest
    data."""
    series, days = i.series, i.days
    last_t = float(series.timestamp.max()) if len(series) else None
    as_of = datetime.fromtimestamp(last_t, tz=UTC) if last_t is not None else None
    now = as_of or (i.latest.taken_at if i.latest else None)
    newest = days[-1] if days else None
    tokens = _last(series, "total_tokens")
    if tokens is None and newest:
        tokens = newest["tokens"]["cumulative"]
    # The figures of the table are the newest sealed day's, as its page says them: each
    # figure is computed once, when the day is sealed (a 24 h window here disagreed).
    figures = next((d for d in reversed(days) if (d.get("data") or {}).get("rows")), newest)
    with_goodput = [d for d in days if d["throughput"].get("goodput") is not None]
    state = i.state or RunState(RUNNING, None, None)
    # After the finish the run's silence is the end, not an incident (nothing is open).
    open_failures = [] if state.state == FINISHED else [
        {"what": failure_text(f, lang), "start": f.start} for f in i.failures if f.end is None]
    totals = i.ledger.totals() if i.ledger else None
    return render(
        "home.md.j2", lang, title=site_title(i.config, lang), run_name=i.config.run.name,
        totals=totals, config=i.config,
        sections=list(i.sections), has_data=bool(len(series) or days),
        run_start=i.config.run.start, run_example=i.config.run.example,
        stale=list(i.stale), waiting=list(i.waiting), head_sha256=i.head_sha256,
        day_now=day_of_run(i.config, now.date()) if now else 0,
        planned_days=i.config.run.planned_days,
        phase=newest.get("phase") if newest else None, tokens_done=tokens,
        token_budget=i.config.run.token_budget, **progress(i, now, tokens),
        panels=signal_panels(i.config, series, days, i.history, i.failures, out, lang,
                             events=[e.to_json() for e in i.ledger.events] if i.ledger else ()),
        figures_day=figures["date"] if figures else None,
        loss_last=(figures.get("loss") or {}).get("train_last") if figures else None,
        loss_change=(figures.get("loss") or {}).get("train_change") if figures else None,
        mfu_p50=(figures.get("throughput") or {}).get("mfu_p50") if figures else None,
        goodput=with_goodput[-1]["throughput"]["goodput"] if with_goodput else None,
        goodput_day=with_goodput[-1]["date"] if with_goodput else None,
        drop_p50=(figures.get("moe") or {}).get("drop_fraction_p50") if figures else None,
        drop_max=(figures.get("moe") or {}).get("drop_fraction_max") if figures else None,
        open_failures=open_failures, run_state=state.state,
        stalled_since=_time(state.since) if state.state == STALLED else None,
        last_step=state.step,
        data_as_of=as_of, snapshot=i.latest.id if i.latest else None,
        snapshot_at=i.latest.taken_at if i.latest else None,
        recent=[(d, day_title(d, lang), _latest(d, i, lang)) for d in reversed(_real(days)[-7:])],
        since=_since(i, lang))


SINCE_DAYS = 14  # the newest sealed days the "since you last read" list may show


def _since(i: HomeInputs, lang: Language) -> list[dict[str, Any]]:
    """Return what the ledger published on the newest days, newest first, each dated by
    when it was published (its day's sealing; a correction's finding): the home page
    shows a reader those published since their last visit (chronicle.js)."""
    if i.ledger is None:
        return []
    days = _real(i.days)[-SINCE_DAYS:]
    out = []
    for d in days:
        events = d.get("ledger")
        if events is None:
            events = [e.to_json() for e in i.ledger.on(d["date"]) if e.kind != "correction"]
        lines = day_lines(events, lang, i.config, d["date"])
        out.append({"published": d["sealed_at"], "day": d["date"],
                    "title": day_title(d, lang),
                    "text": lines[0] if lines else one_line(d, lang),
                    "more": len(lines) - 1 if lines else 0})
    first = days[0]["sealed_at"] if days else None
    found: dict[str, list[dict[str, Any]]] = {}
    for e in i.ledger.of_kind("correction"):
        at = e.facts.get("found_at")
        if first is not None and isinstance(at, str) and at >= first:
            found.setdefault(at, []).append({**e.facts, "id": e.id})
    for at, corrections in found.items():
        # the figures one finding moved on one day are one item, as on the day's entry
        out += [{"published": at, "day": None, "title": None, "anchor": c["ids"][0],
                 "text": c["text"], "more": 0}
                for c in grouped_corrections(corrections, lang)]
    return sorted(out, key=lambda x: x["published"], reverse=True)


def _real(days: Sequence[DaySummary]) -> list[DaySummary]:
    """Return the days the run ran: not the empty days a finished run sealed before a
    finished run stopped sealing days (they pushed the last real ones off the page)."""
    def ran(day: Mapping[str, Any]) -> bool:
        state = day.get("run_state") or {}
        return bool((day.get("data") or {}).get("rows")) or state.get("state") != FINISHED

    return [d for d in days if ran(d)]


def _latest(day: DaySummary, i: HomeInputs, lang: Language) -> str:
    """Return what the home page says of a recent day: the first thing its ledger tells
    (the day's own, as sealed; the build's ledger for a day sealed before), and its digest."""
    events = day.get("ledger")
    if events is None and i.ledger is not None:
        events = [e.to_json() for e in i.ledger.on(day["date"]) if e.kind != "correction"]
    lines = day_lines(events or [], lang, i.config, day["date"])
    return lang.join_sentences(lines[0] if lines else "", one_line(day, lang) + lang.gettext("."))
