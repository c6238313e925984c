"""`chronicle init DIR`: scaffold a chronicle for anyone's run.

Copies chronicle/scaffold/ (mkdocs.yml, docs/ skeleton, the nightly workflow), writes
a commented chronicle.yml and the .zenodo.json made from it. Never overwrites a file that exists.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from chronicle import nofollow
from chronicle.config import load_config
from chronicle.errors import ChronicleError
from chronicle.site.zenodo import FILENAME as ZENODO_FILE
from chronicle.site.zenodo import write_zenodo_json
from chronicle.snapshot.preflight import (
    EXAMPLE_ENTITY,
    EXAMPLE_PROJECT,
    EXAMPLE_REPO,
    EXAMPLE_RUN,
)

SCAFFOLD = Path(__file__).parent / "scaffold"
# Where scaffold files land in the new chronicle (scaffold path -> target path).
_RENAMES = {
    "workflows/nightly.yml": ".github/workflows/nightly.yml",
    "gitignore": ".gitignore",
}

EXAMPLE_FLAG = ("  example: true                # the run: values below are examples: set your "
                "run's, then delete this line\n")

CONFIG_TEMPLATE = """\
# chronicle.yml: the one config file of this chronicle (see the chronicle README).
# Every problem in it is reported at once by `chronicle build` / `chronicle snapshot`.
# Secrets never go here: WANDB_API_KEY and GITHUB_TOKEN come from the environment.

# Where data comes from: "live" (W&B + GitHub) or "simulated" (an offline demo run).
source: {source}

run:
{example}  name: {name}
  start: {start}                # UTC date of day 1
  planned_days: {planned_days}
  token_budget: {token_budget}   # tokens the run is configured to train on
  sequence_length: 4096
  phases: {{pretraining: 0.0, mid-training: 0.8}}   # name -> budget fraction where it starts
  accelerators: {{kind: GB200, count: 704}}
  prices_usd_per_accelerator_hour: {{spot 2026-11: 4.22, spot 2026-10: 6.11}}

wandb:
  entity: {entity}
  project: {project}
  runs: [{runs}]                # the lineage in order; forks are stitched by step
  mfu_unit: percent             # how throughput/mfu is logged: percent or fraction
  metrics: {{}}                   # overrides, e.g. {{loss: train/loss}}
  # where a run's W&B config keeps its sequence length and schedule (default: levanter's)
  {config_keys}

github:
  repo: {repo}
  issues: [{issues}]            # threads always archived
  labels: [{labels}]            # plus every issue carrying one of these labels
  failure_labels: [incident]    # issues that are failure records
  {pulls}

failures:
  file: failures.yml            # hand-written failure records (a file named here must exist)
  gap_minutes: 10               # no history for longer than this counts as downtime

simulated:
  seed: 535                     # used when source: simulated
  days: {planned_days}

site:
  url: {url}
  author: {author}
  languages: [{languages}]      # en (the sealed record, at the root), then editions: zh -> zh/

# zenodo:                       # .zenodo.json, what Zenodo records for each weekly release
#   creators: [{{name: "Family, Given", affiliation: "", orcid: 0000-0002-1825-0097}}]
#   keywords: [machine learning, training run]
{watch}"""

# What the run's watchers watch (all optional; README lists every key). Commented out for a
# new chronicle: fill in your own prediction and claims before the run starts.
WATCH_TEMPLATE = """
# prediction:                   # frozen before launch; its sha256 is sealed on day 1
#   metric: eval_loss           # an eval metric: never compared with train loss
#   registered: 2026-08-19
#   table:                      # [budget fraction, predicted, low, high]
#     - [0.05, 2.392, 2.386, 2.413]
#     - [1.0, 2.039, 2.038, 2.041]
# health:                       # override or extend the 12 default checks
#   - {id: grad_norm, rule: "max > 3.0"}
# risks:
#   - {id: first-quarter, title: "25% of the budget: continue or stop",
#      metric: prediction, rule: "band_excess > 0", watch: [0.2, 0.25]}
# claims:
#   - {statement: "792 GPUs", value: 792, unit: GPUs, who: someone, where: a post,
#      when: 2026-08-01, against: config.accelerators, how: equals}
"""

FAILURES_TEMPLATE = """\
# failures.yml: hand-written failure records, merged with those detected from metrics and
# those filed as issues with a failure label. Each record:
#   - id: rack-7-power            # unique, stable: never reuse an id
#     start: 2026-09-02T04:10:00Z
#     end: 2026-09-02T06:40:00Z   # optional while the failure is ongoing
#     what: Rack 7 lost power; job restarted from step 61,000
#     accelerator_hours_lost: 160 # optional: default accelerators x duration
#     evidence: [https://github.com/owner/repo/issues/123]
[]
"""


@dataclass(frozen=True)
class InitOptions:
    """What `chronicle init` writes into chronicle.yml."""

    source: str = "live"
    name: str = "My training run"
    start: date = date(2026, 8, 20)
    planned_days: int = 100
    token_budget: str = "18.0e+12"
    entity: str = EXAMPLE_ENTITY  # `snapshot` refuses a live chronicle still naming these
    project: str = EXAMPLE_PROJECT
    runs: tuple[str, ...] = (EXAMPLE_RUN,)
    repo: str = EXAMPLE_REPO
    issues: tuple[int, ...] = ()
    labels: tuple[str, ...] = ("training-run",)
    url: str = "https://example.org/chronicle/"
    author: str = "chronicle contributors"
    languages: tuple[str, ...] = ("en", "zh")  # English only: ("en",)
    watch: str = WATCH_TEMPLATE  # the prediction / health / risks / claims sections
    config_keys: str = ("# config_keys: {sequence_length: model.max_seq_len, "
                        "train_steps: trainer.trainer.num_train_steps}")
    pulls: str = ("# pulls: {paths: ['experiments/*'], labels: [training-run]}   "
                  "# merged PRs recorded as changes")


def _refuse_links(target: Path, rels: list[str]) -> None:
    """NotAFile for the first link, FIFO or device where a scaffold file or a folder on
    its way would go (nothing there, or a file or folder in its place, is fine)."""
    for rel in rels:
        path = target
        parts = rel.split("/")
        for i, part in enumerate(parts, 1):
            path = path / part
            try:
                mode = os.stat(path, follow_symlinks=False).st_mode
            except FileNotFoundError:
                break
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise nofollow.NotAFile(path, nofollow.describe(mode),
                                        "a regular file" if i == len(parts) else "a folder")


def _write_new(target: Path, rel: str, data: bytes) -> bool:
    """Create `target`/`rel` holding `data`; False (nothing written) when a file is there.
    NotAFile (exit 2) when a link, FIFO or device is, or where a folder on the way is."""
    *folders, name = rel.split("/")
    with nofollow.folder(target, folders, create=True) as fd:
        try:
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                          | os.O_CLOEXEC, 0o644, dir_fd=fd)
        except FileExistsError:
            found = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            if stat.S_ISREG(found):
                return False  # never overwritten
            raise nofollow.NotAFile(target / rel, nofollow.describe(found)) from None
        with os.fdopen(out, "wb") as sink:
            sink.write(data)
    return True


def scaffold_files() -> dict[str, Path]:
    """Return {path in a new chronicle: the file in chronicle/scaffold/ copied there}."""
    files = {}
    for src in sorted(SCAFFOLD.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        rel = src.relative_to(SCAFFOLD).as_posix()
        files[_RENAMES.get(rel, rel)] = src
    return files


def init_chronicle(target: Path, options: InitOptions) -> list[Path]:
    """Scaffold a chronicle in `target`; return the files written.

    `target` is the user's to point anywhere (a link to a folder is followed), but what
    is inside it is held to nofollow's rule: a file is created without following a link,
    never over anything, and a folder is made or entered without following one (a folder
    that already holds a planted `mkdocs.yml -> ~/.bashrc` is refused, not written through).
    """
    if target.is_symlink() and not target.exists():
        raise ChronicleError(f"{target}: a symbolic link to {os.readlink(target)}, which does "
                             "not exist; remove the link or make its folder, or pick another DIR")
    if target.exists() and not target.is_dir():
        raise ChronicleError(f"{target}: exists and is not a folder; pick another DIR")
    if (target / "chronicle.yml").exists() or (target / "chronicle.yml").is_symlink():
        raise ChronicleError(
            f"{target / 'chronicle.yml'}: a chronicle already lives here; `chronicle init` "
            "never overwrites one (edit chronicle.yml, or pick an empty DIR)"
        )
    target.mkdir(parents=True, exist_ok=True)
    # Everything refused before anything is written: no half scaffold.
    _refuse_links(target, [*scaffold_files(), "chronicle.yml", "failures.yml", "docs/data",
                           "docs/days"])
    written: list[Path] = []
    for rel, src in scaffold_files().items():
        if _write_new(target, rel, src.read_bytes()):
            written.append(target / rel)
    config = CONFIG_TEMPLATE.format(
        source=options.source,
        # A live chronicle's run facts are examples until the operator sets them: the flag
        # makes the first snapshot refuse them and the home page say so (not "Day 0").
        example=EXAMPLE_FLAG if options.source == "live" else "",
        name=options.name,
        start=options.start.isoformat(),
        planned_days=options.planned_days,
        token_budget=options.token_budget,
        entity=options.entity,
        project=options.project,
        runs=", ".join(options.runs),
        repo=options.repo,
        issues=", ".join(str(i) for i in options.issues),
        labels=", ".join(options.labels),
        url=options.url,
        author=options.author,
        languages=", ".join(options.languages),
        watch=options.watch,
        config_keys=options.config_keys,
        pulls=options.pulls,
    )
    for name, text in (("chronicle.yml", config), ("failures.yml", FAILURES_TEMPLATE)):
        if _write_new(target, name, text.encode()):
            written.append(target / name)
    for folder in ("docs/data", "docs/days"):
        with nofollow.folder(target, folder.split("/"), create=True):
            pass
    # What Zenodo records for each weekly release, from the chronicle.yml just written
    # (`chronicle zenodo` writes it again after an edit; the nightly job does too).
    if not (target / ZENODO_FILE).exists():
        write_zenodo_json(load_config(target))
        written.append(target / ZENODO_FILE)
    return written
