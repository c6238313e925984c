"""What the ledger's events say, in any language (render stage, pure).

Each event of analysis/ledger.py is said from its `facts` (never from English text), so
a day page, its feed item, the ledger API and every run page say an event the same way in
every language. `headline` picks the one sentence a day opens with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronicle.config import RunConfig
from chronicle.render import md_text
from chronicle.render.change_text import describe, token_pair
from chronicle.render.formats import fmt_count, fmt_num, fmt_pct, fmt_plain, fmt_signed
from chronicle.render.i18n import N_, Language
from chronicle.render.metrics import check_value, show
from chronicle.render.record_text import check_reason, failure_text

# The order a day's events are told in, and which one its headline says: what a reader
# of the run would want to know first.
ORDER = ("finish", "decision", "risk_fired", "downtime", "eval_outside_band", "alert_fail",
         "loss_spike", "nan_loss", "incident", "change", "risk_passed", "alert_warn",
         "correction")
FINISHED_BY = {"steps": N_("its configured number of steps"),
               "budget": N_("its token budget"),
               "wandb": N_("W&B marks its last run finished"),
               "config": N_("chronicle.yml says so")}
FIGURE_NAMES = {"downtime_seconds": N_("time without telemetry"),
                "restarts": N_("restarts"), "tokens.day": N_("tokens this day"),
                "loss.train_last": N_("last train loss"), "data.rows": N_("logged rows")}


def rank(event: Mapping[str, Any]) -> int:
    """Return where an event stands in a day's telling (0: first)."""
    kind = str(event["kind"])
    if kind == "alert":
        kind = "alert_fail" if event["facts"]["check"].get("status") == "fail" \
            else "alert_warn"
    return ORDER.index(kind) if kind in ORDER else len(ORDER)


def told(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return a day's events in the order they are told: by rank, the largest first (the
    longest downtime, the eval furthest off), then by time."""
    return sorted(events, key=lambda e: (rank(e), -_size(e), str(e.get("start")),
                                         str(e["id"])))


def _size(e: Mapping[str, Any]) -> float:
    facts = e["facts"]
    if e["kind"] == "downtime":
        return float(facts.get("seconds") or 0.0)
    if e["kind"] == "eval_outside_band":
        return abs(float(facts.get("residual") or 0.0))
    return 0.0


def day_lines(events: Sequence[Mapping[str, Any]], lang: Language, config: RunConfig,
              day: str) -> list[str]:
    """Return what a day tells, one sentence per event, most important first; the day's
    health alerts said together in one (each is on the page's Health list too)."""
    ordered = [e for e in told(events) if e["kind"] != "correction"]
    alerts = [e for e in ordered if e["kind"] == "alert"]
    out: list[str] = []
    for e in ordered:
        if e["kind"] != "alert":
            out.append(event_text(e, lang, config, day))
        elif e is alerts[0]:
            out.append(alerts_text(alerts, lang, config))
    return out


def alerts_text(alerts: Sequence[Mapping[str, Any]], lang: Language, config: RunConfig) -> str:
    """Return one sentence naming the health checks that failed, then those that warned,
    each with its reading."""
    _ = lang.gettext
    said = []
    for status, words in (("fail", _("failed: {checks}")), ("warn", _("warned: {checks}"))):
        checks = [a["facts"]["check"] for a in alerts if a["facts"]["check"]["status"] == status]
        if checks:
            said.append(words.format(checks=_(", ").join(
                _("{check} ({value})").format(check=c["id"], value=check_value(c, config, lang))
                for c in checks)))
    return _("Health checks {said}.").format(said=_("; ").join(said))


def event_text(e: Mapping[str, Any], lang: Language, config: RunConfig,
               day: str | None = None) -> str:
    """Return one sentence saying what the event `e` (Event.to_json) was; `day`: the day
    it is told on (a span over several days says its part of that day)."""
    _ = lang.gettext
    facts, kind = e["facts"], e["kind"]
    if kind == "downtime":
        return _downtime(e, lang, day)
    if kind in ("loss_spike", "nan_loss"):
        what = failure_text(_record(e), lang)
        return (_("Loss spike: {what}.") if kind == "loss_spike"
                else _("NaN loss: {what}.")).format(what=what)
    if kind == "incident":
        return _("Incident reported: {what} ({when}).").format(what=facts["what"],
                                                              when=_span(e, lang, day))
    if kind == "alert":
        c = facts["check"]
        status = lang.term(c["status"], "health status")
        return _("Health check {check}: {status}, {value} against {rule}: {reason}.").format(
            check=c["id"], status=status, value=check_value(c, config, lang), rule=c["rule"],
            reason=check_reason(c, lang))
    if kind == "eval_outside_band":
        above = _("above") if facts["above"] else _("below")
        text = _("An eval fell {side} the prediction's band: {actual} at step {step} "
                 "({share} of the budget) against {predicted} [{low}, {high}], "
                 "{residual}").format(
            side=above, actual=fmt_num(facts["actual"], 4), step=fmt_count(facts["step"]),
            share=fmt_pct(facts["fraction"]), predicted=fmt_num(facts["predicted"], 4),
            low=fmt_num(facts["low"], 4), high=fmt_num(facts["high"], 4),
            residual=fmt_signed(facts["residual"], 4))
        if e.get("links"):
            text += _(", minutes after a loss spike")
        return text + _(".")
    if kind == "risk_fired":
        return _("Risk point “{title}” fired: {value} against {threshold} ({rule}).").format(
            title=lang.said(facts.get("title") or facts["risk"]),
            value=risk_value(facts, config, lang), threshold=_threshold(facts, config, lang),
            rule=facts.get("rule"))
    if kind == "risk_passed":
        return _("Risk point “{title}” passed without firing.").format(
            title=lang.said(facts.get("title") or facts["risk"]))
    if kind == "change":
        return describe(facts["change"], lang)
    if kind == "decision":
        return decision_text(facts, lang)
    if kind == "finish":
        return _("The run finished at {time}, step {step} ({reason}), on day {day} of the "
                 "{planned} planned.").format(
            time=lang.time(e["start"]), step=fmt_count(facts["step"]),
            reason=_(FINISHED_BY.get(str(facts["by"]), facts["by"])),
            day=fmt_count(facts["day"]), planned=fmt_count(facts["planned_days"]))
    if kind == "correction":
        return correction_text(facts, lang)
    return str(e["id"])


def _record(e: Mapping[str, Any]) -> dict[str, Any]:
    """Return a failure record's JSON as failure_text reads it, from an event's facts."""
    facts = e["facts"]
    return {"what": facts.get("what"), "detail": facts.get("detail") or {},
            "kind": facts.get("cause") or facts.get("reported_kind") or e["kind"]}


def _span(e: Mapping[str, Any], lang: Language, day: str | None = None) -> str:
    """Return when an event was: a time, a span or "since" a time; on the page of `day`,
    its times on that day as a clock alone (13:45–14:17 UTC)."""
    _ = lang.gettext
    start, end = str(e["start"]), e.get("end")
    within = day is not None and start[:10] == day and (end is None or str(end)[:10] == day)
    if end is None:
        when = f"{start[11:16]} UTC" if within else lang.time(start)
        return _("since {start}").format(start=when) if e.get("open") else when
    if within:
        return f"{start[11:16]}–{str(end)[11:16]} UTC"
    return _("{start} to {end}").format(start=lang.time(start), end=lang.time(end))


def _downtime(e: Mapping[str, Any], lang: Language, day: str | None) -> str:
    _ = lang.gettext
    facts = e["facts"]
    cause = facts["cause"]
    detail = facts.get("detail") or {}
    total = lang.duration(facts["seconds"])
    when = _span(e, lang, day)
    if cause == "fork":
        redone = detail.get("redone")
        text = (_("W&B run {run} took over from {parent} at step {step}, re-doing steps "
                  "{step}–{redone}: no telemetry for {duration} ({when})") if redone else
                _("W&B run {run} took over from {parent} at step {step}: no telemetry for "
                  "{duration} ({when})")).format(
            run=detail.get("run"), parent=detail.get("parent"),
            step=fmt_count(detail.get("step")), redone=fmt_count(redone), duration=total,
            when=when)
    elif cause == "gap" and e.get("open"):
        text = _("No telemetry since step {step} ({when}; {duration} so far)").format(
            step=fmt_count(detail.get("step")), when=when, duration=total)
    elif cause == "gap":
        text = _("No telemetry for {duration} after step {step} ({when})").format(
            duration=total, step=fmt_count(detail.get("step")), when=when)
    else:
        text = _("Restart recorded: {what} ({when})").format(what=facts.get("what"), when=when)
    part = (e.get("per_day") or {}).get(day or "", {}).get("downtime_seconds")
    if day is not None and len(e.get("days") or ()) > 1 and part is not None:
        text += _("; {part} of it this day").format(part=lang.duration(part))
    return text + _(".")


def risk_value(facts: Mapping[str, Any], config: RunConfig, lang: Language) -> str:
    """Return a risk point's reading with its unit (its metric's, or ×N for a rebound)."""
    value = facts.get("value")
    rule = str(facts.get("rule") or "")
    if rule.startswith("rebound"):
        return lang.gettext("{ratio} times its baseline").format(ratio=fmt_num(value, 2))
    return _reading(rule, value, facts, config, lang)


def _threshold(facts: Mapping[str, Any], config: RunConfig, lang: Language) -> str:
    rule = str(facts.get("rule") or "")
    if rule.startswith("rebound"):
        return lang.gettext("{ratio} times").format(ratio=fmt_plain(facts.get("threshold")))
    return _reading(rule, facts.get("threshold"), facts, config, lang)


def _reading(rule: str, value: Any, facts: Mapping[str, Any], config: RunConfig,
             lang: Language) -> str:
    stat = rule.split(" ", 1)[0]
    if stat in ("count", "nan_count"):
        return fmt_count(value)
    if stat in ("band_excess", "residual", "increase"):
        return fmt_plain(value)
    metric = (facts.get("metric") or [""])[0]
    canonical = next((k for k, key in config.wandb.metrics.items() if key == metric), metric)
    return show(canonical, value, config, lang)


def decision_text(facts: Mapping[str, Any], lang: Language) -> str:
    """Return what was decided at a risk point, and how (its change, its pull request)."""
    _ = lang.gettext
    budget = next((c for c in facts.get("changes") or () if c["kind"] == "budget"), None)
    if budget is not None:
        before, after = token_pair(budget["before"], budget["after"], lang)
        what = _("the token budget went from {before} to {after}").format(before=before,
                                                                        after=after)
    else:
        what = _("the run's configuration changed")
    status = (_("fired on {date}") if facts.get("risk_status") == "risk_fired"
              else _("passed on {date}")).format(date=lang.date(facts["risk_day"]))
    text = _("Decision at the risk point “{title}” ({status}): {what}").format(
        title=lang.said(facts.get("title") or facts["risk"]), status=status, what=what)
    pull = facts.get("pull")
    if pull:
        text += _(", by pull request {key} ({title})").format(key=pull.get("key"),
                                                              title=pull.get("after"))
    return text + _(".")


def grouped_corrections(corrections: Sequence[Mapping[str, Any]], lang: Language
                        ) -> list[dict[str, Any]]:
    """Return corrections said together where they share a day and a cause: {day, ids,
    text} (five figures a fork moved are one sentence, not five)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for c in corrections:
        groups.setdefault((str(c["day"]), correction_why(c, lang)), []).append(c)
    out = []
    for (day, why), items in groups.items():
        moved = [(figure_name(str(c["figure"]), lang),
                  figure_value(str(c["figure"]), c.get("previous"), lang),
                  figure_value(str(c["figure"]), c.get("corrected"), lang)) for c in items]
        out.append({"day": day, "ids": [str(c["id"]).removeprefix("correction:")
                                        for c in items],
                    "announced_in": items[0].get("announced_in"),
                    "text": moved_text(day, why, moved, lang)})
    return out


def moved_text(day: str, why: str, moved: Sequence[tuple[str, str, str]],
               lang: Language) -> str:
    """Return one sentence for the figures one finding moved on a sealed day: `moved` is
    (figure, as sealed, now) each, said in `lang`."""
    return lang.gettext("{day}, corrected ({why}): {moved}.").format(
        day=lang.date(day), why=why, moved=lang.gettext("; ").join(
            lang.gettext("{figure} {before} → {after}").format(
                figure=figure, before=before, after=after) for figure, before, after in moved))


def correction_text(facts: Mapping[str, Any], lang: Language) -> str:
    """Return what a correction changes on a sealed day, and why."""
    figure = str(facts.get("figure"))
    return lang.gettext("{figure} of {day}: {before} as sealed, {after} now ({why}).").format(
        figure=figure_name(figure, lang), day=lang.date(facts["day"]),
        before=figure_value(figure, facts.get("previous"), lang),
        after=figure_value(figure, facts.get("corrected"), lang),
        why=correction_why(facts, lang))


def figure_name(figure: str, lang: Language) -> str:
    """Return a corrected figure's name in words (its path when it has none)."""
    return lang.gettext(FIGURE_NAMES[figure]) if figure in FIGURE_NAMES else figure


def correction_why(facts: Mapping[str, Any], lang: Language) -> str:
    """Return why a figure of a sealed day was corrected."""
    if facts.get("cause") == "found_later":
        return lang.gettext("a fork found after the day was sealed rewound it")
    rows = facts.get("late_rows")
    if isinstance(rows, int):
        return lang.ngettext("{rows} metric row of this day arrived after it was sealed",
                             "{rows} metric rows of this day arrived after it was sealed",
                             rows).format(rows=rows)
    return str(facts.get("reason") or "")


def figure_value(figure: str, value: Any, lang: Language) -> str:
    """Return a corrected figure's value the way the site writes that figure."""
    if value is None:
        return lang.gettext("missing")
    if figure == "downtime_seconds":
        return lang.duration(value)
    if figure in ("restarts", "data.rows"):
        return fmt_count(value)
    if figure == "tokens.day":
        return lang.si(value)
    return fmt_num(value)


def headline(lines: Sequence[str], day: Mapping[str, Any], lang: Language) -> str:
    """Return the one sentence a day opens with: its first line (day_lines), and how many
    more follow."""
    _ = lang.gettext
    if not lines:
        if (day.get("data") or {}).get("rows"):
            return _("A quiet day: nothing the ledger counts happened.")
        return _("Nothing was logged this day.")
    if len(lines) == 1:
        return lines[0]
    return lines[0] + lang.sep + lang.ngettext("{n} more below.", "{n} more below.",
                                               len(lines) - 1).format(n=len(lines) - 1)


def correction_rows(events: Sequence[Mapping[str, Any]], lang: Language
                    ) -> list[dict[str, Any]]:
    """Return the corrections of the ledger (Event.to_json of kind correction), newest
    found first, as the Corrections page and feed show them: found, day, figure, the
    published and corrected values, why, the entry that announced it, its id."""
    out = []
    for e in sorted(events, key=lambda e: (str(e["start"]), str(e["id"])), reverse=True):
        f = e["facts"]
        figure = str(f.get("figure"))
        out.append({"id": str(e["id"]).removeprefix("correction:"), "found_at": f.get(
            "found_at"), "day": f["day"], "figure": figure,
            "previous": figure_value(figure, f.get("previous"), lang),
            "corrected": figure_value(figure, f.get("corrected"), lang),
            "name": figure_name(figure, lang), "why": correction_why(f, lang),
            "text": correction_text(f, lang), "announced_in": f.get("announced_in"),
            "found_by": f.get("found_by"), "cause": f.get("cause")})
    return out


def added_later(day: Mapping[str, Any], events: Sequence[Mapping[str, Any]],
                corrections: Sequence[Mapping[str, Any]], lang: Language, config: RunConfig,
                root: str = "../") -> str:  # corrections: each its facts and its id
    """Return what a sealed day page gets from the ledger when the site is built (the
    sealed text above it never changes): what happened that day, for a day sealed before
    its page told it (`events`: the ledger's on that day), and the corrections of the day
    found since (each linked to the Corrections page and the entry announcing it); ''
    when there is neither. `root` leads from the page to its edition's root."""
    _ = lang.gettext
    told_before = "ledger" in day
    if told_before and not corrections:
        return ""
    parts = ["## " + _("Added from the ledger") + " { data-search-exclude }", "",
             _("Added when the site is built, from the run's ledger ({link}); the sealed "
               "page above is unchanged.").format(link=f"[api/ledger.json]({root}api/"
                                                       "ledger.json)" if lang.english
                                                   else "api/ledger.json"), ""]
    if not told_before:
        lines = day_lines(events, lang, config, str(day["date"]))
        parts += [_("What the ledger counts on this day:"), ""]
        parts += [f"- {md_text(line)}" for line in lines] or [
            "- " + md_text(headline([], day, lang))]
        parts.append("")
    if corrections:
        parts += [_("Corrected since it was sealed:"), ""]
        page = _("Corrections")
        for c in grouped_corrections(corrections, lang):
            where = _("see {link}").format(link=f"[{page}]({root}corrections.md#{c['ids'][0]})")
            if c.get("announced_in"):
                where += _(", announced in the entry of {entry}").format(
                    entry=f"[{lang.date(c['announced_in'])}]({c['announced_in']}.md)")
            parts.append(f"- {md_text(c['text'])}{lang.sep}({where})")
        parts.append("")
    return "\n".join(parts)
