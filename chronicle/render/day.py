"""A day's figures -> its sealed files: Markdown page, JSON, chart specs and SVGs.

Called once, when the day is sealed; the output is write-once, so everything on the page
must be true at sealing time (no link to a next day that does not exist yet).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.models import parse_time
from chronicle.render import front_matter, render
from chronicle.render.change_text import what_changed
from chronicle.render.embed import chart_alt, chart_embed, chart_title
from chronicle.render.formats import (
    MISSING,
    finite,
    fmt_count,
    fmt_num,
    fmt_pct,
    fmt_points,
    fmt_signed,
)
from chronicle.render.i18n import ENGLISH, Language
from chronicle.render.ledger_text import day_lines, grouped_corrections, headline
from chronicle.render.metrics import check_value
from chronicle.render.prose import residual_line, write_summary
from chronicle.render.record_text import day_title
from chronicle.render.robust import link_version, outbound_link
from chronicle.render.sanitize import comment_block, plain_text

CHART_ORDER = ("loss", "throughput", "moe", "grad_norm")


def _change(now: Any, before: Any, digits: int, pct: bool = False,
            lang: Language | None = None) -> str:
    if not finite(now) or not finite(before):
        return MISSING
    delta = float(now) - float(before)
    if pct:
        return fmt_points(delta, 1, zh=lang is not None and lang.zh)
    return fmt_signed(delta, digits)


def _times(value: Any, factor: float) -> Any:
    return float(value) * factor if finite(value) else value


def key_figures(day: DaySummary, lang: Language) -> list[tuple[str, str, str, str]]:
    """Return rows (figure, this day, previous day, change) of the key-figures table."""
    _, fmt_si = lang.gettext, lang.si
    prev: Mapping[str, Any] = day.get("previous") or {}
    loss, tok, thr = day["loss"], day["tokens"], day["throughput"]
    moe, gn = day["moe"], day["grad_norm"]
    # MFU is logged in percent (21.2) or as a fraction (0.212); the table says it as a
    # share either way (21.2%), and its change in percentage points, like goodput's.
    per = 0.01 if thr.get("mfu_unit", "percent") == "percent" else 1.0
    eval_at = _(" (step {step})").format(step=fmt_count(loss["eval_step"])) \
        if loss.get("eval_step") is not None else ""
    tok_s = _(" tok/s")
    rows = [
        (_("Train loss, last"), fmt_num(loss["train_last"]),
         fmt_num(prev.get("loss_train_last")),
         _change(loss["train_last"], prev.get("loss_train_last"), 3)),
        (_("Eval loss, latest") + eval_at, fmt_num(loss["eval_last"]), "", ""),
        (_("Tokens this day"), fmt_si(tok["day"]), fmt_si(prev.get("tokens_day")),
         _si_change(tok["day"], prev.get("tokens_day"), lang)),
        (_("Tokens so far"), _("{done} of {budget} ({share})").format(
            done=fmt_si(tok["cumulative"]), budget=fmt_si(tok["budget"]),
            share=fmt_pct(tok["budget_fraction"])), "", ""),
        (_("Compute-step throughput p50"), fmt_si(thr["compute_tokens_per_second_p50"], tok_s),
         "", ""),
        (_("Sustained throughput"), fmt_si(thr["sustained_tokens_per_second"], tok_s), "", ""),
        (_("Goodput (sustained ÷ compute)"), fmt_pct(thr["goodput"]),
         fmt_pct(prev.get("goodput")), _change(thr["goodput"], prev.get("goodput"), 1, pct=True,
                                                    lang=lang)),
        (_("MFU p50"), fmt_pct(_times(thr["mfu_p50"], per)),
         fmt_pct(_times(prev.get("mfu_p50"), per)),
         _change(_times(thr["mfu_p50"], per), _times(prev.get("mfu_p50"), per), 1, pct=True,
                 lang=lang)),
        (_("MoE drop fraction, max"), fmt_pct(moe["drop_fraction_max"], 2),
         fmt_pct(prev.get("drop_fraction_max"), 2),
         _change(moe["drop_fraction_max"], prev.get("drop_fraction_max"), 2,
                 pct=True, lang=lang)),
        (_("Gradient norm, max"), fmt_num(gn["max"]), fmt_num(prev.get("grad_norm_max")),
         _change(gn["max"], prev.get("grad_norm_max"), 3)),
        (_("Time without telemetry"), lang.duration(day["downtime_seconds"]),
         lang.duration(prev.get("downtime_seconds")), ""),
        (_("Restarts"), fmt_count(day.get("restarts")), "", ""),
        (_("Accelerator-hours"), lang.hours(day["accelerator_hours"]), "", ""),
    ]
    for scenario, usd in sorted((day.get("cost") or {}).get("usd", {}).items()):
        rows.append((_("Cost at {scenario} prices").format(scenario=scenario), lang.usd(usd),
                     "", ""))
    return rows




def _si_change(now: Any, before: Any, lang: Language) -> str:
    if not finite(now) or not finite(before):
        return MISSING
    return lang.si_signed(float(now) - float(before))


def one_line(day: DaySummary, lang: Language) -> str:
    """Return the one-line digest of a day used by the archive and the home page."""
    _ = lang.gettext
    loss, thr = day["loss"], day["throughput"]
    parts = []
    if loss.get("train_last") is not None:
        change = loss.get("train_change")
        parts.append(_("loss {loss}").format(loss=fmt_num(loss["train_last"]))
                     + (_(" ({change})").format(change=fmt_signed(change))
                        if change is not None else ""))
    if day["tokens"].get("day") is not None:
        parts.append(_("{tokens} tokens").format(tokens=lang.si(day["tokens"]["day"])))
    if thr.get("mfu_p50") is not None:
        unit = thr.get("mfu_unit", "percent")
        parts.append("MFU " + (fmt_num(thr["mfu_p50"], 1, "%") if unit == "percent"
                               else fmt_pct(thr["mfu_p50"])))
    if day["moe"].get("drop_fraction_max") is not None:
        parts.append(_("drop ≤ {share}").format(share=fmt_pct(day["moe"]["drop_fraction_max"])))
    if day.get("failures"):
        parts.append(lang.plural(len(day["failures"]), "failure"))
    if day.get("restarts"):
        parts.append(lang.plural(day["restarts"], "restart"))
    state = day.get("run_state")
    if not parts and state is not None and state["state"] == "finished":
        return _("the run had finished")
    return " · ".join(parts) if parts else _("no metrics logged")


def _threads(day: DaySummary, lang: Language) -> list[dict[str, Any]]:
    out = []
    for t in day.get("threads_updated") or []:
        comments: list[dict[str, Any]] = []
        for new in t.get("new_comments") or []:
            comments.append({"updated_at": None, **new, "edited": bool(new.get("edited")),
                             "block": comment_block(new["body"], lang),
                             "previous_block": None})
        for edited in t.get("edited_comments") or []:
            before = edited.get("previous_body")
            comments.append({**edited, "edited": True,
                             "block": comment_block(edited["body"], lang),
                             "previous_block": comment_block(before, lang) if before else None})
        comments.sort(key=lambda c: (c.get("updated_at") or c["created_at"], c["id"]))
        out.append({"opened": False, "labels": [], "url": "", **t, "comments": comments})
    return out


def provenance_rows(day: Mapping[str, Any], record: str = "",
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the provenance table of a day page: figure rows, and the files they cite by
    number (`record`: from a translated page to the English record's root)."""
    figures = ((day.get("provenance") or {}).get("figures")) or {}
    files: dict[str, dict[str, Any]] = {}
    rows = []
    for path, entry in sorted(figures.items()):
        refs = []
        for a in entry.get("artifacts") or []:
            rel = str(a["path"])
            if rel not in files:
                # Links relative to days/<date>.md; chronicle.yml is not published.
                if record:  # the record's files, from a translated page
                    link = record + rel if rel.startswith(("data/", "days/")) else ""
                else:
                    link = ("../" + rel if rel.startswith("data/")
                            else rel[len("days/"):] if rel.startswith("days/") else "")
                files[rel] = {"n": len(files) + 1, "name": rel, "link": link,
                              "sha256": str(a["sha256"]), "size": a.get("size")}
            refs.append(str(files[rel]["n"]))
        rows.append({"figure": path, "kind": entry["kind"],
                     "method": entry.get("method") or entry.get("read_by") or "",
                     "inputs": ", ".join(entry.get("inputs") or []), "refs": ", ".join(refs)})
    return rows, list(files.values())


def render_day_markdown(day: DaySummary, charts: Mapping[str, Mapping[str, Any]],
                        config: RunConfig, lang: Language, pngs: Collection[str] = (),
                        record: str = "", note: str = "",
                        mementos: Mapping[str, str] | None = None,
                        extra_meta: Mapping[str, Any] | None = None) -> str:
    """Return the Markdown page of one day in `lang` (`pngs`: charts that also have a PNG):
    the sealed record in English, or its sealed edition in another language.

    `record` leads from an edition's page to the English record's root, where the
    published data files are ("" for the record itself); `note` goes under the title
    (what an edition says of itself); `extra_meta` joins its front matter. Every link out
    of the chronicle carries Robust Links attributes (render/robust.py), with
    `data-versionurl` for a URL that `mementos` (URL -> memento URL) names.
    """
    date = day["date"]
    names = [n for n in CHART_ORDER if n in charts] + sorted(set(charts) - set(CHART_ORDER))
    embeds = [(chart_title(charts[n], n),
               chart_embed(f"{date}/{n}.vl.json", f"{date}/{n}.svg", chart_alt(charts[n], n)))
              for n in names]
    summary = day["summary"] if lang.english else write_summary(day, lang)
    meta: dict[str, Any] = {
        "date": parse_time(day["sealed_at"]),
        "title": day_title(day, lang),
        "description": plain_text(summary, 1000),
    }
    if names:
        # The feeds' image: a PNG where there is one (many feed readers show no SVG).
        lead = "loss" if "loss" in charts else names[0]
        meta["image"] = f"days/{date}/{lead}.{'png' if lead in pngs else 'svg'}"
    meta.update(extra_meta or {})
    prov_rows, prov_files = provenance_rows(day, record)
    version = link_version(day, mementos)
    body = render(
        "day.md.j2", lang, day=day, title=meta["title"], summary=summary, embeds=embeds,
        record=record, note=note,
        figures=key_figures(day, lang), threads=_threads(day, lang),
        failures=day.get("failures") or [],
        downloads=[f"{date}/{n}.vl.json" for n in names],
        config=config, parse_time=parse_time, provenance=prov_rows,
        provenance_files=prov_files,
        corrections=day_corrections(day, lang),
        happened=happened(day, config, lang),
        health=_health(day, config, lang), residual=residual_line(day.get("prediction"), lang),
        changes=what_changed(day, lang),
        outbound=lambda label, url: outbound_link(label, url, version),
    )
    return front_matter(meta) + body


def happened(day: Mapping[str, Any], config: RunConfig, lang: Language,
             events: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any] | None:
    """Return what a day opens with: its headline and the sentences of its other events
    (`events`: the ledger's, for a day sealed before its JSON recorded them; None: the
    day's own `ledger`). None when there is neither."""
    told_events = day.get("ledger") if events is None else events
    if told_events is None:
        return None
    lines = day_lines(told_events, lang, config, str(day["date"]))
    return {"headline": headline(lines, day, lang), "more": lines[1:]}


def day_corrections(day: Mapping[str, Any], lang: Language) -> list[dict[str, Any]]:
    """Return the corrections a day's entry announces: late rows (the manifests') and
    what the ledger found later, each {day, id, text}."""
    found = [*(day.get("corrections") or []),
             *({**e["facts"], "id": e["id"]} for e in day.get("ledger") or ()
               if e["kind"] == "correction")]
    return grouped_corrections(found, lang)


def _health(day: DaySummary, config: RunConfig, lang: Language) -> dict[str, Any] | None:
    """Return the day's health verdict and its failed / warning checks (None if not run)."""
    health = day.get("health")
    if not health:
        return None
    bad = [{**c, "value_text": check_value(c, config, lang)} for c in health["checks"]
           if c["status"] in ("fail", "warn")]
    bad.sort(key=lambda c: (c["status"] != "fail", c["id"]))
    return {"status": health["status"], "counts": health["counts"], "bad": bad}


def render_day_files(day: DaySummary, charts: dict[str, dict[str, Any]],
                     svgs: dict[str, str], config: RunConfig,
                     pngs: Mapping[str, bytes] | None = None) -> dict[str, bytes]:
    """Return a sealed day's files, keyed by path relative to docs/."""
    date = day["date"]
    pngs = pngs or {}
    files: dict[str, bytes] = {
        f"days/{date}.md": render_day_markdown(day, charts, config, ENGLISH,
                                               set(pngs)).encode(),
        f"days/{date}.json": _json_bytes(day),
    }
    files.update(chart_files(f"days/{date}", charts, svgs, pngs))
    return files


def chart_files(folder: str, charts: Mapping[str, Mapping[str, Any]],
                svgs: Mapping[str, str], pngs: Mapping[str, bytes]) -> dict[str, bytes]:
    """Return a sealed page's chart files in `folder` (relative to docs/): each chart's
    Vega-Lite spec, its static SVG, and its PNG where it has one (the feeds' image)."""
    missing = set(charts) ^ set(svgs)
    if missing or set(pngs) - set(charts):
        raise ValueError(f"{folder}: charts, svgs and pngs must name the same charts, "
                         f"differ in {sorted(missing | (set(pngs) - set(charts)))}")
    files: dict[str, bytes] = {}
    for name in sorted(charts):
        files[f"{folder}/{name}.vl.json"] = _json_bytes(charts[name], indent=None)
        files[f"{folder}/{name}.svg"] = svgs[name].encode()
        if name in pngs:
            files[f"{folder}/{name}.png"] = pngs[name]
    return files


def _json_bytes(obj: Any, indent: int | None = 1) -> bytes:
    text = json.dumps(obj, indent=indent, sort_keys=True, ensure_ascii=False, allow_nan=False,
                      separators=None if indent else (",", ":"))
    return (text + "\n").encode()
