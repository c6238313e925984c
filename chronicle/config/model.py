"""Config stage: the sections of chronicle.yml, each key declared once on its dataclass.

A field's `option(...)` is the key's only declaration: its check, default and doc. The
documentation's configuration reference (documentation/pages/configuration.md) is written
from these declarations (tests/test_docs.py keeps it complete).
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from chronicle.config.checks import (
    boolean,
    choice,
    day,
    doi_name,
    integer,
    issue_numbers,
    name_map,
    number,
    repo,
    site_url,
    strings,
    text,
)
from chronicle.config.fields import Invalid, option, section, unknown_keys
from chronicle.config.metrics import DEFAULT_CONFIG_KEYS, DEFAULT_METRICS
from chronicle.config.watchers import WatchSections
from chronicle.config.words import TRANSLATED, phases
from chronicle.config.zenodo import ZenodoSection

SOURCES = ("live", "simulated")
ENGINES = ("mkdocs", "zensical")
# The site's languages. English comes first: it is the language of the sealed record, built
# at the site's root; each other one is an edition under <lang>/
# (site/outputs/editions.py).
LANGUAGES = ("en", *TRANSLATED)  # English first: the sealed record's language
MFU_UNITS = ("percent", "fraction")
MAX_DAYS = 3650  # ten years: bounds `planned_days` and `simulated.days`
DEFAULT_FAILURES_FILE = "failures.yml"


def N_(message: str) -> str:
    """Mark `message` for the catalog (as render/i18n.py's N_, which this stage cannot
    import): it is translated where a page is rendered."""
    return message


# The site's title when chronicle.yml gives none; a message of the catalog, so each
# edition says it in its language (render/i18n.py `site_title`).
DEFAULT_TITLE = N_("{name}: a chronicle")

# W&B keys kept in the store (fnmatch patterns). A real run logs thousands of keys
# (per-layer router stats, 200 mixture weights); these are the ones readers watch.
DEFAULT_KEYS: tuple[str, ...] = (
    "train/loss",
    "train/cross_entropy_loss",
    "train/z_loss",
    "train/router/[!l]*",
    "throughput/*",
    "moe/*",
    "grad/norm/total",
    "optim/*",
    "eval/*macro*",
    "eval/loss",
    "eval_dropless/*macro*",
    "eval_dropless/loss",
    "run_progress",
    "memory/*",
    "mixture/stage",
    "mixture/weight/*",
)


def _metric_map(value: Any) -> dict[str, str]:
    """Overrides of DEFAULT_METRICS, merged over them."""
    if not isinstance(value, dict):
        raise Invalid("expected a mapping of metric name -> W&B key, e.g. {loss: train/loss}")
    problems = unknown_keys(value, DEFAULT_METRICS, noun="metric name")
    problems += [(str(k), "expected a W&B key string, e.g. loss: train/loss")
                 for k, v in value.items()
                 if k in DEFAULT_METRICS and not (isinstance(v, str) and v.strip())]
    if problems:
        raise Invalid(problems=problems)
    return {**DEFAULT_METRICS, **value}


def _config_key_map(value: Any) -> dict[str, str]:
    """Overrides of DEFAULT_CONFIG_KEYS (canonical name -> dotted config path), merged."""
    if not isinstance(value, dict):
        raise Invalid("expected a mapping of name -> dotted config path, e.g. "
                      "{sequence_length: model.max_seq_len}")
    problems = unknown_keys(value, DEFAULT_CONFIG_KEYS, noun="config name")
    problems += [(str(k), "expected a dotted path into the W&B run config, e.g. "
                          "trainer.trainer.num_train_steps")
                 for k, v in value.items() if k in DEFAULT_CONFIG_KEYS
                 and not (isinstance(v, str) and v.strip() and "" not in v.strip().split("."))]
    if problems:
        raise Invalid(problems=problems)
    return {**DEFAULT_CONFIG_KEYS, **{k: v.strip() for k, v in value.items()}}


def _relative_file(value: Any) -> str:
    """A file inside the chronicle folder, written relative to it."""
    name = text("a file name relative to the chronicle folder, e.g. failures.yml")(value)
    normal = posixpath.normpath(name.replace("\\", "/"))
    if Path(name).is_absolute() or normal.startswith("../") or normal in ("..", "."):
        raise Invalid(f"expected a file inside the chronicle folder, e.g. failures.yml, "
                      f"got {name!r}")
    return name


@dataclass(frozen=True, kw_only=True)
class Accelerators:
    kind: str = option(text("an accelerator name, e.g. GB200"), doc="accelerator model")
    count: int = option(integer(1, 10_000_000), doc="accelerators of the allocation")


@dataclass(frozen=True, kw_only=True)
class RunSection:
    name: str = option(text("the run's name, e.g. Marin 535B-A23B"),
                       doc="the run's name, used in titles and citations")
    start: date = option(day, doc="UTC date of day 1")
    planned_days: int = option(integer(1, MAX_DAYS), doc="planned length in days")
    token_budget: float = option(number(0, above=True, example="18.0e12"),
                                 doc="configured token budget")
    accelerators: Accelerators = section(Accelerators, doc="what the run trains on")
    prices_usd_per_accelerator_hour: dict[str, float] = option(
        name_map(number(0, example="4.22"), "{spot: 4.22}"), factory=dict,
        doc="price scenarios: name -> USD per accelerator-hour")
    sequence_length: int | None = option(integer(1, 2**31 - 1), default=None,
                                         doc="tokens per sequence")
    example: bool = option(boolean, default=False,
                           doc="true while the run: values are `chronicle init`'s examples: "
                               "a live snapshot refuses them, the home page says so")
    finished: bool = option(boolean, default=False,
                            doc="true once the run has ended, when neither its steps, its "
                                "token budget nor W&B say so (analysis/run_state.py)")
    phases: dict[str, float] = option(  # name (a Said: config/words.py) -> start fraction
        phases("{pretraining: 0.0, mid-training: {at: 0.8, zh: 中期训练}}"), factory=dict,
        doc="phase name -> fraction of the budget where it starts, or -> {at: fraction, "
            "zh: the name in Chinese}")


@dataclass(frozen=True, kw_only=True)
class WandbSection:
    entity: str = option(text(), doc="the W&B entity")
    project: str = option(text(), doc="the W&B project")
    runs: tuple[str, ...] = option(strings("[hero-run]"), default=(),
                                   doc="the lineage of W&B run ids, in order")
    group: str | None = option(text(), default=None,
                               doc="discover the lineage by W&B group instead")
    metrics: dict[str, str] = option(_metric_map, factory=lambda: dict(DEFAULT_METRICS),
                                     doc="overrides of the canonical metric -> W&B key map")
    mfu_unit: str = option(choice(MFU_UNITS), default="percent",
                           doc="how throughput/mfu is logged: percent or fraction")
    timeout_seconds: int = option(integer(1, 3600), default=30,
                                  doc="HTTP timeout of the W&B client")
    keys: tuple[str, ...] = option(strings("['train/*', eval/loss]"), default=DEFAULT_KEYS,
                                   doc="fnmatch patterns of the W&B keys stored")
    config_keys: dict[str, str] = option(
        _config_key_map, factory=lambda: dict(DEFAULT_CONFIG_KEYS),
        doc="overrides of the canonical config value -> dotted W&B config path map")

    def keeps(self, key: str) -> bool:
        """Return whether the W&B key `key` is stored (mapped metrics always are)."""
        return key in self.metrics.values() or any(fnmatch.fnmatchcase(key, p) for p in self.keys)

    def key(self, canonical: str) -> str:
        """Return the W&B key that holds the canonical metric `canonical`."""
        return self.metrics[canonical]


@dataclass(frozen=True, kw_only=True)
class PullsSection:
    paths: tuple[str, ...] = option(
        strings("['experiments/grug/moe_hero_ep/*']"), default=(),
        doc="fnmatch patterns of repository files: a merged PR changing one is a change")
    labels: tuple[str, ...] = option(strings("[hero-run]"), default=(),
                                     doc="a merged PR carrying one of these labels is a change")

    @property
    def configured(self) -> bool:
        """Whether merged pull requests are listed at all."""
        return bool(self.paths or self.labels)


@dataclass(frozen=True, kw_only=True)
class GithubSection:
    repo: str = option(repo, doc="the GitHub repository, owner/name")
    issues: tuple[int, ...] = option(issue_numbers, default=(),
                                     doc="issue numbers always archived")
    labels: tuple[str, ...] = option(strings("[hero-run]"), default=(),
                                     doc="issues carrying one of these labels are archived")
    failure_labels: tuple[str, ...] = option(strings("[incident]"), default=(),
                                             doc="issues with these labels are failures")
    max_rate_limit_wait_seconds: int = option(integer(1, 86_400), default=600,
                                              doc="longest wait for a rate limit")
    pulls: PullsSection = section(PullsSection, required=False,
                                  doc="merged pull requests recorded as changes")


@dataclass(frozen=True, kw_only=True)
class FailuresSection:
    # None: the key is not written, so DEFAULT_FAILURES_FILE is read if it exists. A file
    # named in chronicle.yml must exist (sources.manual says so when it does not).
    file: str | None = option(_relative_file, default=None,
                              doc="hand-written failure records (default failures.yml)")
    gap_minutes: float = option(number(0, above=True, example="10"), default=10.0,
                                doc="no history for longer than this is downtime")

    @property
    def path(self) -> str:
        """Return the failures file to read, relative to the chronicle folder."""
        return self.file or DEFAULT_FAILURES_FILE


@dataclass(frozen=True, kw_only=True)
class SimulatedSection:
    seed: int = option(integer(0, 2**32 - 1), default=535, doc="seed of the simulated run")
    days: int = option(integer(1, MAX_DAYS), default=100, doc="days the simulated run lasts")


def _languages(value: Any) -> tuple[str, ...]:
    """en, then the translated editions: [en] or [en, zh]."""
    if not isinstance(value, list) or not value:
        raise Invalid(f"expected a list of languages starting with en, e.g. [en, zh]; "
                      f"known: {', '.join(LANGUAGES)}")
    problems = [(f"[{i}]", f"expected one of {', '.join(LANGUAGES)}, got {v!r}")
                for i, v in enumerate(value) if v not in LANGUAGES]
    if problems:
        raise Invalid(problems=problems)
    if value[0] != "en":
        raise Invalid("en must come first: English is the sealed record, built at the "
                      "site's root (e.g. [en, zh])")
    if len(set(value)) != len(value):
        raise Invalid(f"a language is listed twice in {value!r}")
    return tuple(value)


def _titles(value: Any) -> dict[str, str]:
    """The site's title in each translated edition: {zh: "..."}."""
    problems = [(str(key), f"expected a translated language ({', '.join(LANGUAGES[1:])}); "
                           "the English title is site.title")
                for key in (value if isinstance(value, dict) else ())
                if key not in LANGUAGES[1:]]
    try:
        titles: dict[str, str] = name_map(text(), '{zh: "训练纪事"}')(value)
    except Invalid as err:
        raise Invalid(problems=[*problems, *err.at("")]) from err
    if problems:
        raise Invalid(problems=problems)
    return titles


@dataclass(frozen=True, kw_only=True)
class SealingSection:
    # A closed day waits for every source to answer; after this many days it is sealed
    # anyway, marked with the sources it lacks, so a dead API never blocks the archive.
    max_wait_days: int = option(integer(1, 365), default=7,
                                doc="days a closed day waits for a failing source")


@dataclass(frozen=True, kw_only=True)
class SiteSection:
    url: str = option(site_url, doc="where the site is published")
    # "" until RunConfig's finish step derives it from the run's name.
    title: str = option(text(), default="", doc="site title (default '<run.name>: a chronicle')")
    titles: dict[str, str] = option(_titles, factory=dict,
                                    doc="the site title of each translated edition")
    author: str = option(text(), default="chronicle", doc="author shown in citations")
    license: str = option(text(), default="CC-BY-4.0", doc="licence of the chronicle")
    # Zenodo mints it once the repository is linked (documentation/pages/citing.md):
    # unknown until then.
    doi: str | None = option(doi_name, default=None,
                             doc="the chronicle's concept DOI on Zenodo (10.5281/zenodo.N)")
    languages: tuple[str, ...] = option(_languages, default=("en",),
                                        doc="the site's languages: en, then translations")
    # Material for MkDocs reaches its end of life on 2027-05-05; Zensical is its successor
    # (documentation/pages/engines.md). Both build the same sources
    # (site/outputs/sources.py).
    engine: str = option(choice(ENGINES), default="mkdocs",
                         doc="what builds the site: mkdocs (mkdocs-material) or zensical")


def finish_config(config: RunConfig) -> RunConfig:
    """Apply the rules that span sections; derive the default site title."""
    if config.source == "live" and not config.wandb.runs and not config.wandb.group:
        raise Invalid(problems=[(
            "wandb.runs", "list the W&B run ids of the lineage, or set wandb.group")])
    if config.site.title:
        return config
    title = DEFAULT_TITLE.format(name=config.run.name)
    return replace(config, site=replace(config.site, title=title))


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """The whole chronicle.yml, validated; `root` is the folder holding it."""

    root: Path
    source: str = option(choice(SOURCES), default="live",
                         doc="live (W&B + GitHub) or simulated (the offline demo run)")
    run: RunSection = section(RunSection, doc="the training run")
    wandb: WandbSection = section(WandbSection, doc="the W&B project and lineage")
    github: GithubSection = section(GithubSection, doc="the GitHub repository")
    failures: FailuresSection = section(FailuresSection, required=False,
                                        doc="failure records and downtime")
    simulated: SimulatedSection = section(SimulatedSection, required=False,
                                          doc="the simulated run (demo)")
    sealing: SealingSection = section(SealingSection, required=False,
                                      doc="when a closed day is sealed")
    site: SiteSection = section(SiteSection, doc="the published site")
    zenodo: ZenodoSection = section(ZenodoSection, required=False,
                                    doc="the .zenodo.json of a weekly DOI "
                                        "(site/publish/zenodo.py)")
    # prediction, health checks, risks and claims: top-level keys (config/watchers.py)
    watch: WatchSections = section(WatchSections, inline=True,
                                   doc="prediction, health, risks, claims")

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"

