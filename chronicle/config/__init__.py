"""chronicle.yml -> a typed, validated RunConfig. Every problem is reported at once.

Secrets never live in the file: they come from environment variables only.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from chronicle.config.watchers import WatchSections, parse_watch
from chronicle.errors import ConfigError

CONFIG_NAME = "chronicle.yml"
SOURCES = ("simulated", "live")
MFU_UNITS = ("percent", "fraction")

# Canonical metric name -> default W&B key (levanter / Marin names). Analysis only ever
# asks for canonical names; `wandb.metrics` in chronicle.yml overrides any of them.
DEFAULT_METRICS: dict[str, str] = {
    "loss": "train/loss",
    "cross_entropy": "train/cross_entropy_loss",
    "eval_loss": "eval_dropless/paloma/macro_loss",
    "tokens_per_second": "throughput/tokens_per_second",
    "total_tokens": "throughput/total_tokens",
    "mfu": "throughput/mfu",
    "step_duration": "throughput/duration",
    "drop_fraction": "moe/drop_fraction",
    "grad_norm": "grad/norm/total",
    "learning_rate": "optim/learning_rate",
    "run_progress": "run_progress",
    "router_entropy": "train/router/routing_entropy_mean",
    "router_bias_max": "train/router/bias_max",
    "router_bias_min": "train/router/bias_min",
    "memory_peak_gib": "memory/peak_gib",
}

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
)

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Accelerators:
    kind: str
    count: int


@dataclass(frozen=True)
class RunSection:
    name: str
    start: date
    planned_days: int
    token_budget: float
    accelerators: Accelerators
    prices_usd_per_accelerator_hour: dict[str, float]
    sequence_length: int | None = None
    phases: dict[str, float] = field(default_factory=dict)  # name -> start budget fraction


@dataclass(frozen=True)
class WandbSection:
    entity: str
    project: str
    runs: tuple[str, ...]
    group: str | None = None
    metrics: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_METRICS))
    mfu_unit: str = "percent"
    timeout_seconds: int = 30
    keys: tuple[str, ...] = DEFAULT_KEYS

    def keeps(self, key: str) -> bool:
        """Return whether the W&B key `key` is stored (mapped metrics always are)."""
        return key in self.metrics.values() or any(fnmatch.fnmatchcase(key, p) for p in self.keys)

    def key(self, canonical: str) -> str:
        """Return the W&B key that holds the canonical metric `canonical`."""
        return self.metrics[canonical]


@dataclass(frozen=True)
class GithubSection:
    repo: str
    issues: tuple[int, ...]
    labels: tuple[str, ...]
    failure_labels: tuple[str, ...]
    max_rate_limit_wait_seconds: int = 600


@dataclass(frozen=True)
class FailuresSection:
    file: str | None = "failures.yml"
    gap_minutes: float = 10.0


@dataclass(frozen=True)
class SimulatedSection:
    seed: int = 535
    days: int = 100


@dataclass(frozen=True)
class SiteSection:
    url: str
    title: str
    author: str
    license: str = "CC-BY-4.0"


@dataclass(frozen=True)
class RunConfig:
    """The whole chronicle.yml, validated; `root` is the folder holding it."""

    root: Path
    source: str
    run: RunSection
    wandb: WandbSection
    github: GithubSection
    failures: FailuresSection
    simulated: SimulatedSection
    site: SiteSection
    # prediction, health checks, risks and claims (chronicle/config_watch.py)
    watch: WatchSections = field(default_factory=WatchSections)

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"


# ---------------------------------------------------------------------------
# Schema: key -> (type checker, required, default). Nested sections are dicts.

_Schema = dict[str, Any]

_SCHEMA: _Schema = {
    "source": ("choice", False, "live", SOURCES),
    "run": {
        "name": ("str", True, None),
        "start": ("date", True, None),
        "planned_days": ("posint", True, None),
        "token_budget": ("posfloat", True, None),
        "sequence_length": ("posint", False, None),
        "accelerators": {
            "kind": ("str", True, None),
            "count": ("posint", True, None),
        },
        "prices_usd_per_accelerator_hour": ("pricemap", False, {}),
        "phases": ("phasemap", False, {}),
    },
    "wandb": {
        "entity": ("str", True, None),
        "project": ("str", True, None),
        "runs": ("strlist", False, []),
        "group": ("str", False, None),
        "metrics": ("metricmap", False, {}),
        "mfu_unit": ("choice", False, "percent", MFU_UNITS),
        "timeout_seconds": ("posint", False, 30),
        "keys": ("strlist", False, DEFAULT_KEYS),
    },
    "github": {
        "repo": ("repo", True, None),
        "issues": ("intlist", False, []),
        "labels": ("strlist", False, []),
        "failure_labels": ("strlist", False, []),
        "max_rate_limit_wait_seconds": ("posint", False, 600),
    },
    "failures": {
        "file": ("str", False, "failures.yml"),
        "gap_minutes": ("posfloat", False, 10.0),
    },
    "simulated": {
        "seed": ("int", False, 535),
        "days": ("posint", False, 100),
    },
    "site": {
        "url": ("url", True, None),
        "title": ("str", False, None),
        "author": ("str", False, None),
        "license": ("str", False, "CC-BY-4.0"),
    },
    # Validated in config_watch.py (lists of mappings): every problem joins the same list.
    "prediction": ("any", False, None),
    "health": ("any", False, None),
    "risks": ("any", False, None),
    "claims": ("any", False, None),
}

_OPTIONAL_SECTIONS = {"failures", "simulated"}


def _check(kind: str, value: Any, extra: tuple[Any, ...]) -> tuple[Any, str | None]:
    """Return (converted value, problem or None) for one leaf."""
    if kind == "any":
        return value, None
    if kind == "str":
        if isinstance(value, str) and value.strip():
            return value.strip(), None
        return None, "expected a non-empty string"
    if kind == "choice":
        if value in extra[0]:
            return value, None
        return None, f"expected one of {', '.join(extra[0])}, got {value!r}"
    if kind == "date":
        if isinstance(value, datetime):
            return value.date(), None
        if isinstance(value, date):
            return value, None
        if isinstance(value, str):
            try:
                return date.fromisoformat(value), None
            except ValueError:
                pass
        return None, f"expected a date like 2026-08-20, got {value!r}"
    if kind in ("int", "posint"):
        if isinstance(value, bool) or not isinstance(value, int):
            return None, f"expected a whole number, got {value!r}"
        if kind == "posint" and value <= 0:
            return None, f"expected a positive whole number, got {value}"
        return value, None
    if kind == "posfloat":
        # PyYAML (YAML 1.1) reads 18.0e12 as a string: it wants 18.0e+12. Accept both.
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return None, f"expected a positive number (e.g. 18.0e12), got {value!r}"
        return float(value), None
    if kind == "strlist":
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return tuple(value), None
        return None, "expected a list of strings, e.g. [hero-run]"
    if kind == "intlist":
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
        )
        if ok:
            return tuple(value), None
        return None, "expected a list of issue numbers, e.g. [8435, 8506]"
    if kind == "repo":
        if isinstance(value, str) and _NAME_RE.match(value):
            return value, None
        return None, f"expected owner/name, e.g. marin-community/marin, got {value!r}"
    if kind == "url":
        if isinstance(value, str) and re.match(r"^https?://[^\s/]+", value):
            return value if value.endswith("/") else value + "/", None
        return None, f"expected an http(s) URL, e.g. https://example.org/chronicle/, got {value!r}"
    if kind == "pricemap":
        if isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()
        ):
            return {str(k): float(v) for k, v in value.items()}, None
        return (
            None,
            "expected a mapping of scenario name -> USD per accelerator-hour, e.g. {spot: 4.22}",
        )
    if kind == "phasemap":
        if isinstance(value, dict) and all(
            isinstance(k, str)
            and isinstance(v, int | float)
            and not isinstance(v, bool)
            and 0 <= v <= 1
            for k, v in value.items()
        ):
            return {str(k): float(v) for k, v in value.items()}, None
        return None, (
            "expected a mapping of phase name -> fraction of the token budget where it "
            "starts (0..1), e.g. {pretraining: 0.0, mid-training: 0.8}"
        )
    if kind == "metricmap":
        if not isinstance(value, dict):
            return None, "expected a mapping of metric name -> W&B key"
        bad = [k for k in value if k not in DEFAULT_METRICS]
        if bad:
            hints = []
            for k in bad:
                close = difflib.get_close_matches(str(k), DEFAULT_METRICS, n=1)
                hints.append(f"{k!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            return None, (
                f"unknown metric name {', '.join(hints)}; known: {', '.join(DEFAULT_METRICS)}"
            )
        if not all(isinstance(v, str) and v for v in value.values()):
            return None, "every metric must map to a W&B key string, e.g. loss: train/loss"
        return {**DEFAULT_METRICS, **value}, None
    raise ValueError(f"unknown schema kind {kind!r}")


def _validate(data: dict[str, Any], schema: _Schema, path: str, problems: list[str]) -> dict:
    out: dict[str, Any] = {}
    for key in data:
        if key not in schema:
            close = difflib.get_close_matches(str(key), list(schema), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            known = ", ".join(schema)
            problems.append(f"{path}{key}: unknown key{hint}; allowed here: {known}")
    for key, spec in schema.items():
        where = f"{path}{key}"
        if isinstance(spec, dict):
            value = data.get(key)
            if value is None:
                if path == "" and key in _OPTIONAL_SECTIONS:
                    value = {}
                else:
                    problems.append(f"{where}: missing section")
                    continue
            if not isinstance(value, dict):
                problems.append(f"{where}: expected a mapping, got {type(value).__name__}")
                continue
            out[key] = _validate(value, spec, where + ".", problems)
            continue
        kind, required, default = spec[0], spec[1], spec[2]
        if key not in data or data[key] is None:
            if required:
                problems.append(f"{where}: missing (required)")
            out[key] = default
            continue
        value, problem = _check(kind, data[key], tuple(spec[3:]))
        if problem:
            problems.append(f"{where}: {problem}")
        out[key] = value
    return out


def parse_config(data: Any, root: Path, origin: str = CONFIG_NAME) -> RunConfig:
    """Validate a loaded YAML document and return the RunConfig; raise ConfigError."""
    if not isinstance(data, dict):
        raise ConfigError(origin, ["the file must be a YAML mapping (run:, wandb:, github:, ...)"])
    problems: list[str] = []
    v = _validate(data, _SCHEMA, "", problems)
    watch = parse_watch(v, problems)
    if problems:
        raise ConfigError(origin, problems)
    run, wb, gh, site = v["run"], v["wandb"], v["github"], v["site"]
    if v["source"] == "live" and not wb["runs"] and not wb["group"]:
        raise ConfigError(
            origin, ["wandb.runs: list the W&B run ids of the lineage, or set wandb.group"]
        )
    return RunConfig(
        root=root,
        source=v["source"],
        run=RunSection(
            name=run["name"],
            start=run["start"],
            planned_days=run["planned_days"],
            token_budget=run["token_budget"],
            accelerators=Accelerators(**run["accelerators"]),
            prices_usd_per_accelerator_hour=run["prices_usd_per_accelerator_hour"],
            sequence_length=run["sequence_length"],
            phases=run["phases"],
        ),
        wandb=WandbSection(
            entity=wb["entity"],
            project=wb["project"],
            runs=wb["runs"],
            group=wb["group"],
            metrics=wb["metrics"] or dict(DEFAULT_METRICS),
            mfu_unit=wb["mfu_unit"],
            timeout_seconds=wb["timeout_seconds"],
            keys=tuple(wb["keys"]),
        ),
        github=GithubSection(
            repo=gh["repo"],
            issues=gh["issues"],
            labels=gh["labels"],
            failure_labels=gh["failure_labels"],
            max_rate_limit_wait_seconds=gh["max_rate_limit_wait_seconds"],
        ),
        failures=FailuresSection(**v["failures"]),
        simulated=SimulatedSection(**v["simulated"]),
        site=SiteSection(
            url=site["url"],
            title=site["title"] or f"{run['name']}: a chronicle",
            author=site["author"] or "chronicle",
            license=site["license"],
        ),
        watch=watch,
    )


def load_config(root: Path) -> RunConfig:
    """Read `root/chronicle.yml`; raise ConfigError naming the file and every problem."""
    path = root / CONFIG_NAME
    if not root.is_dir():
        raise ConfigError(
            str(root), ["folder does not exist; create one with `chronicle init DIR`"]
        )
    if not path.is_file():
        raise ConfigError(
            str(path), [f"no {CONFIG_NAME} here; run `chronicle init {root}` or pass --dir"]
        )
    return parse_config(read_yaml(path), root.resolve(), str(path))


def read_yaml(path: Path) -> Any:
    """Load a YAML file; raise ConfigError naming the line and column of a syntax error."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(str(path), [f"not valid YAML{where}: {err}"]) from err
    return data


def secret(name: str) -> str | None:
    """Return a secret from the environment only (never from a file)."""
    value = os.environ.get(name, "").strip()
    return value or None
