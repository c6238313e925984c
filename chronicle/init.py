"""`chronicle init DIR`: scaffold a chronicle for anyone's run.

Copies chronicle/scaffold/ (mkdocs.yml, docs/ skeleton, the nightly workflow), writes
a commented chronicle.yml and the .zenodo.json made from it. Never overwrites a file that exists.
"""

from __future__ import annotations

import os
import stat
import textwrap
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from chronicle.config import DEFAULT_CONFIG_KEYS, load_config
from chronicle.config.template import declared_line
from chronicle.errors import ChronicleError
from chronicle.files import nofollow
from chronicle.site.publish.zenodo import FILENAME as ZENODO_FILE
from chronicle.site.publish.zenodo import write_zenodo_json
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
# chronicle.yml: the one config file of this chronicle (the chronicle docs: "Configuration").
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
  {mfu_unit}
  metrics: {{}}                   # overrides, e.g. {{loss: train/loss}}
{config_keys_note}
  {config_keys}

github:
  repo: {repo}
  issues: [{issues}]            # threads always archived
  labels: [{labels}]            # plus every issue carrying one of these labels
  failure_labels: [incident]    # issues that are failure records
  {pulls}

failures:
  file: failures.yml            # hand-written failure records (a file named here must exist)
  {gap_minutes}

simulated:                      # used when source: simulated
  {seed}
  {days}

site:
  url: {url}
  author: {author}
  languages: [{languages}]      # en (the sealed record, at the root), then editions: zh -> zh/
  # {engine}

# zenodo:                       # .zenodo.json, what Zenodo records for each weekly release
#   creators: [{{name: "Family, Given", affiliation: "", orcid: 0000-0002-1825-0097}}]
#   keywords: [machine learning, training run]
{watch}"""

# The simulated run's W&B config keeps its schedule in `trainer` itself (Marin's levanter
# layout nests it in trainer.trainer, the default): the line a simulated chronicle needs,
# and a live one's example of an override.
SIMULATED_CONFIG_KEYS = ("config_keys: {train_steps: trainer.num_train_steps, "
                         "batch_size: trainer.train_batch_size}")

# The watchers (documentation/pages/configuration.md: prediction, risks, claims), as
# examples that fit the simulated run: written as they are for `--source simulated` (and
# by the demo), so its home page shows all three signals on the first build; commented out
# for a live run, whose own must be written before launch. The prediction follows the
# simulated eval loss (1.5 + 0.54 p^-0.25 at budget fraction p) with a slightly lower
# coefficient, 0.535, so the residual is small, positive, and leaves the +-0.012 band when
# a spike hits an eval.
SIMULATED_WATCH = """\
prediction:
  metric: eval_loss
  registered: 2026-08-19
  source: demo fit (1.5 + 0.535 p^-0.25), registered before the simulated launch
  table:
    - [0.02, 2.9226, 2.9106, 2.9346]
    - [0.03, 2.7855, 2.7735, 2.7975]
    - [0.04, 2.6963, 2.6843, 2.7083]
    - [0.05, 2.6314, 2.6194, 2.6434]
    - [0.06, 2.5810, 2.5690, 2.5930]
    - [0.08, 2.5060, 2.4940, 2.5180]
    - [0.1, 2.4514, 2.4394, 2.4634]
    - [0.125, 2.3998, 2.3878, 2.4118]
    - [0.15, 2.3597, 2.3477, 2.3717]
    - [0.2, 2.3000, 2.2880, 2.3120]
    - [0.25, 2.2566, 2.2446, 2.2686]
    - [0.3, 2.2229, 2.2109, 2.2349]
    - [0.35, 2.1956, 2.1836, 2.2076]
    - [0.4, 2.1727, 2.1607, 2.1847]
    - [0.45, 2.1532, 2.1412, 2.1652]
    - [0.5, 2.1362, 2.1242, 2.1482]
    - [0.55, 2.1212, 2.1092, 2.1332]
    - [0.6, 2.1079, 2.0959, 2.1199]
    - [0.65, 2.0958, 2.0838, 2.1078]
    - [0.7, 2.0849, 2.0729, 2.0969]
    - [0.75, 2.0749, 2.0629, 2.0869]
    - [0.8, 2.0657, 2.0537, 2.0777]
    - [0.85, 2.0572, 2.0452, 2.0692]
    - [0.9, 2.0493, 2.0373, 2.0613]
    - [0.95, 2.0419, 2.0299, 2.0539]
    - [1.0, 2.0350, 2.0230, 2.0470]
risks:
  - id: grad-norm-growth
    title: {en: Grad-norm growth peaking at 25-38% of the run,
            zh: 梯度范数增长，峰值在训练进度 25%–38% 之间}
    metric: grad_norm
    rule: "p50 > 0.36"
    window: 60
    watch: [0.2, 0.45]
    reason: {en: "the gradient norm rose towards a peak near a third of the run on the ladder",
             zh: 在规模阶梯实验中，梯度范数在训练约三分之一处升至峰值}
  - id: first-quarter
    title: {en: "First 25% of the budget: the go / no-go decision",
            zh: 预算前 25%：继续还是停止的决策点}
    metric: prediction
    rule: "band_excess > 0"
    watch: [0.2, 0.25]
    reason: {en: "eval loss outside the prediction band at 25% would reopen the decision",
             zh: 若在 25% 时评估损失落在预测区间外，将重新讨论这一决策}
  - id: data-mix-switch
    title: {en: Data-mix phase switch to mid-training, zh: 数据配比切换到中期训练阶段}
    metric: eval_loss
    rule: "increase > 0.03"
    watch: [0.78, 0.85]
  - id: drop-rebound
    title: {en: Token dropping rebounding after a context-length change,
            zh: 上下文长度变更后 token 丢弃率反弹}
    metric: drop_fraction
    rule: "rebound > 2"
    window: 60
    after: sequence_length
    reason: {en: "dropping rose from ~7% to ~40% when an earlier run's context grew 4K -> 65K;
       watched against its p50 in the day before the context change",
             zh: 在早先的一次训练中，上下文从 4K 增长到 65K 时丢弃率从约 7% 升至约 40%；
       以上下文变更前一天的中位数为基线观察}
claims:
  - {statement: {en: "The run uses 792 GPUs", zh: 本次训练使用 792 块 GPU}, value: 792,
     unit: GPUs, who: an example post, where: illustrative claim, when: 2026-08-18,
     against: config.accelerators, how: equals}
  - {statement: {en: "18.75T tokens", zh: 18.75 万亿 token}, value: 18.75e12, unit: tokens,
     who: an example post, where: illustrative claim, when: 2026-08-18,
     against: config.token_budget, how: within, tolerance: 0.01}
  - {statement: {en: "MFU p50 13.6%", zh: MFU 中位数 13.6%}, value: 13.6, unit: percent,
     who: an example post, where: illustrative claim, when: 2026-08-25, against: data.mfu_p50,
     how: within, tolerance: 0.1}
  - {statement: {en: "Billions of dollars of compute", zh: 算力花费数十亿美元}, value: 1.0e9,
     unit: USD, who: an example post, where: illustrative claim,
     against: data.projected_cost_usd, how: at_least}
"""

_WATCH_NOTE = {
    "simulated": """
# The prediction, risks and claims below are EXAMPLES that fit the simulated run (its
# prediction follows the simulated eval loss; its risks and claims are illustrative). For
# a live run, write your own before it starts: the prediction's sha256 is sealed on day 1
# and a later change is flagged. The chronicle docs' "Configuration" page lists every key.
""",
    "live": """
# The prediction, risks and claims below are EXAMPLES (they fit the simulated run of
# `chronicle init --source simulated`): uncomment them and write your run's own before it
# starts. The prediction's sha256 is sealed on day 1 and a later change is flagged.
# The chronicle docs' "Configuration" page lists every key.
""",
}
_HEALTH_EXAMPLE = """\
# health:                       # override or extend the 12 default checks
#   - {id: grad_norm, rule: "max > 3.0"}
"""


def watch_sections(source: str) -> str:
    """Return the watchers' sections of a new chronicle.yml: the examples, active for a
    simulated run, commented out for a live one."""
    examples = SIMULATED_WATCH if source == "simulated" else "".join(
        f"# {line}".rstrip() + "\n" for line in SIMULATED_WATCH.splitlines())
    return _WATCH_NOTE[source] + examples + _HEALTH_EXAMPLE


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
    # The prediction / risks / claims sections; None: the examples (`watch_sections`).
    watch: str | None = None
    # None: the simulated run's line, active for a simulated chronicle, commented for a
    # live one (an example of an override).
    config_keys: str | None = None
    pulls: str = ("# pulls: {paths: ['experiments/*'], labels: [training-run]}   "
                  "# merged PRs recorded as changes")


def _config_keys_note() -> str:
    """The comment above `config_keys`: what it says, and its defaults (config/metrics.py)."""
    defaults = ", ".join(f"{k}: {v}" for k, v in DEFAULT_CONFIG_KEYS.items())
    return textwrap.fill(
        f"where a run's W&B config keeps its sequence length and schedule (default: "
        f"{{{defaults}}}, Marin's levanter layout):", width=92, initial_indent="  # ",
        subsequent_indent="  #   ", break_on_hyphens=False)


def _config_keys(options: InitOptions) -> str:
    if options.config_keys is not None:
        return options.config_keys
    if options.source == "simulated":
        return SIMULATED_CONFIG_KEYS
    return ("# e.g. a run keeping them in trainer itself, as the simulated run does:\n"
            f"  # {SIMULATED_CONFIG_KEYS}")


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
        watch=options.watch if options.watch is not None else watch_sections(options.source),
        config_keys=_config_keys(options),
        config_keys_note=_config_keys_note(),
        pulls=options.pulls,
        # Keys shown at their default: each line from its declaration (config/model.py).
        mfu_unit=declared_line("wandb.mfu_unit"),
        gap_minutes=declared_line("failures.gap_minutes"),
        seed=declared_line("simulated.seed"),
        days=declared_line("simulated.days", options.planned_days),
        engine=declared_line("site.engine", indent=4),
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
