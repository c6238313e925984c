"""The Archive, Failures and About pages (render stage, pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date

from chronicle.analysis.day_model import DaySummary
from chronicle.config import RunConfig
from chronicle.models import FailureRecord
from chronicle.render import render
from chronicle.render.day import one_line
from chronicle.render.i18n import Language


def archive_page(days: Sequence[DaySummary], lang: Language) -> str:
    """Return the Archive page: every sealed day, newest first, by month."""
    groups: dict[str, list[tuple[DaySummary, str]]] = defaultdict(list)
    for d in reversed(days):
        groups[lang.month(date.fromisoformat(d["date"]))].append((d, one_line(d, lang)))
    return render("archive.md.j2", lang, months=list(groups.items()))


def failures_page(failures: Sequence[FailureRecord], snapshot: str | None,
                  lang: Language) -> str:
    """Return the Failures page: every record, with totals by kind."""
    kinds: dict[str, list[FailureRecord]] = defaultdict(list)
    for f in failures:
        kinds[f.kind].append(f)
    by_kind = [(k, len(v), sum(f.duration_seconds or 0.0 for f in v),
                sum(f.accelerator_hours_lost or 0.0 for f in v)) for k, v in sorted(kinds.items())]
    return render(
        "failures.md.j2", lang, failures=[f.to_json() for f in failures], snapshot=snapshot,
        open_count=sum(1 for f in failures if f.end is None),
        total_seconds=sum(f.duration_seconds or 0.0 for f in failures),
        total_hours=sum(f.accelerator_hours_lost or 0.0 for f in failures),
        unknown_hours=sum(1 for f in failures if f.accelerator_hours_lost is None),
        by_kind=by_kind)


def about_page(config: RunConfig, lang: Language) -> str:
    """Return the About page: sources, method, verification and citing."""
    return render(
        "about.md.j2", lang, title=config.site.title, run_name=config.run.name,
        entity=config.wandb.entity, project=config.wandb.project, runs=config.wandb.runs,
        repo=config.github.repo, issues=config.github.issues, labels=config.github.labels,
        failure_labels=config.github.failure_labels, license=config.site.license,
        accelerators=f"{config.run.accelerators.count} × {config.run.accelerators.kind}",
        prices=sorted(config.run.prices_usd_per_accelerator_hour.items()),
        site_url=config.site.url)
