"""chronicle's documentation site (documentation/), built by the engine chronicle builds with.

    make docs              (python -m tests.support.docs [SITE_DIR])

writes the generated reference blocks into the pages (the configuration reference from
the keys' declarations, chronicle/config/reference.py; the command reference from the
CLI itself), builds documentation/mkdocs.yml with ProperDocs and Material, `--strict`
(a broken link to a page or an anchor fails it), then checks every `href` and `src` of
the built pages, fragments included, and that every code path the pages name exists.
tests/test_docs.py runs the same checks (and fails, naming `make docs`, while a page
holds a block the code no longer makes).

A generated block sits between `<!-- reference:NAME -->` and `<!-- /reference:NAME -->`
in its page; everything around it is written by hand.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click

from chronicle.cli import main as cli
from chronicle.config.reference import reference, table_cell
from tests.support.paths import REPO

DOCS = REPO / "documentation"
PAGES = DOCS / "pages"
CONFIG = DOCS / "mkdocs.yml"
SITE = REPO / "build" / "documentation"
README = REPO / "README.md"
COMMAND = "make docs"
# Which page holds each generated block (a `cli:<command>` block is on the commands page).
BLOCK_PAGES = {"config": "configuration.md", "cli": "commands.md"}
_BLOCK = re.compile(r"<!-- reference:(?P<name>[\w:-]+) -->\n(?P<body>.*?)"
                    r"<!-- /reference:(?P=name) -->", re.DOTALL)

# Code paths: a path under a folder of this repository (or of chronicle/, which pages may
# leave out: `site/build.py`), a bare module name (`draw.py`), or a dotted entry point
# below chronicle (`site.build.build_site`).
CODE_ROOTS = ("chronicle", "tests", "bench", "documentation", "actions", ".github", "site",
              "render", "analysis", "snapshot", "store", "sources", "config", "scaffold",
              "locale")
_ROOTS = "|".join(map(re.escape, CODE_ROOTS))
_PATH = re.compile(rf"(?<![\w./~$-])((?:{_ROOTS})/[\w./-]*[\w/])")
_MODULE = re.compile(r"(?<![\w./-])([a-z_][\w]*\.py)\b")
_DOTTED = re.compile(r"(?<![\w.])((?:site|snapshot|store|analysis|render|sources|config)"
                     r"(?:\.[a-z_]\w*)+\.[A-Za-z_]\w*)\b")
# Paths the pages name that are not files of this repository, and why.
ELSEWHERE = {
    "actions/cache": "GitHub's action",
    "actions/checkout": "GitHub's action",
    "actions/deploy-pages": "GitHub's action",
    "actions/setup-python": "GitHub's action",
    ".github/scripts/check_site.py": "in chronicles scaffolded before check-site existed",
    "locale/zh.po": "a chronicle's own catalog, beside its chronicle.yml",
}


def command_reference(name: str) -> str:
    """Return the Markdown of one command (`chronicle` itself for the group): its usage,
    its help and a table of its options, as click has them."""
    root = click.Context(cli, info_name="chronicle", **cli.context_settings)
    command = cli if name == "chronicle" else cli.commands[name]
    ctx = root if command is cli else click.Context(command, info_name=name, parent=root)
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    help_text = table_cell(" ".join((command.help or "").split()))
    out = ["```text", usage, "```", "", help_text, "", "| option | what it does |",
           "|---|---|"]
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or isinstance(param, click.Argument):  # named in the usage line
            continue
        names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
        flag = isinstance(param, click.Option) and param.is_flag
        metavar = "" if flag else " " + table_cell(param.make_metavar(ctx))
        out.append(f"| {names}{metavar} | {table_cell(' '.join(record[1].split()))} |")
    if isinstance(command, click.Group):
        out += ["", "| command | what it does |", "|---|---|"]
        out += [f"| [`chronicle {n}`](#chronicle-{n}) | {table_cell(c.get_short_help_str(200))} |"
                for n, c in command.commands.items()]
    return "\n".join(out) + "\n"


def generated_blocks() -> dict[str, str]:
    """Return every generated block by name: the config reference, the CLI's own block and
    one per command."""
    blocks = {"config": reference(), "cli": command_reference("chronicle")}
    blocks.update({f"cli:{name}": command_reference(name) for name in cli.commands})
    return blocks


def page_of(block: str) -> Path:
    return PAGES / BLOCK_PAGES[block.split(":", 1)[0]]


def blocks_in(text: str) -> dict[str, str]:
    """Return the generated blocks a page holds, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def stale_blocks() -> list[str]:
    """Return the blocks a page lacks, holds out of date, or holds for nothing the code
    makes (a removed command)."""
    made = generated_blocks()
    held: dict[str, str] = {}
    for page in {page_of(name) for name in made}:
        held.update(blocks_in(page.read_text(encoding="utf-8")))
    return sorted({n for n in made if held.get(n) != made[n]} | (held.keys() - made.keys()))


def write_blocks() -> list[str]:
    """Write every generated block into its page (it must have the markers); return the
    names of those that changed."""
    made = generated_blocks()
    stale = stale_blocks()
    for page in {page_of(name) for name in made}:
        text = page.read_text(encoding="utf-8")
        missing = [n for n in made if page_of(n) == page and n not in blocks_in(text)]
        if missing:
            raise SystemExit(f"{page}: no markers for {', '.join(missing)}: add "
                             f"`<!-- reference:NAME -->` and `<!-- /reference:NAME -->` lines")
        page.write_text(with_blocks(text, made), encoding="utf-8")
    return stale


def with_blocks(text: str, made: dict[str, str]) -> str:
    """Return a page's text with each block it holds that `made` names holding that."""
    return _BLOCK.sub(lambda m: f"<!-- reference:{m['name']} -->\n"
                      f"{made.get(m['name'], m['body'])}<!-- /reference:{m['name']} -->", text)


def build_docs(site: Path = SITE) -> float:
    """Build the documentation into `site` with ProperDocs, strictly; return the seconds
    it took. A warning (a link to a missing page or anchor) fails it, with the log."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "properdocs", "build", "--strict", "--config-file", str(CONFIG),
         "--site-dir", str(site)], capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"the documentation did not build (exit {done.returncode}):\n"
                           f"{done.stdout}{done.stderr}")
    return time.monotonic() - start


class _Page(HTMLParser):
    """A built page's links (`href`, `src`) and the ids a fragment may name."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key == "id" or (key == "name" and tag == "a"):
                self.ids.add(value)
            elif key in ("href", "src"):
                self.links.append(value)


def _parse(path: Path, parsed: dict[Path, _Page]) -> _Page:
    if path not in parsed:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        parsed[path] = page
    return parsed[path]


def broken_links(site: Path = SITE) -> list[str]:
    """Return one line per link of a built page to a file of the site that does not exist,
    or to a fragment its page lacks. Other hosts are not fetched."""
    root = site.resolve()
    parsed: dict[Path, _Page] = {}
    problems = []
    for path in sorted(site.rglob("*.html")):
        for url in dict.fromkeys(_parse(path, parsed).links):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc:
                continue
            # A path from the root (the 404 page's, which any folder may serve) is the site's.
            folder = site if parts.path.startswith("/") else path.parent
            target = (folder / unquote(parts.path).lstrip("/")).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {url}"
            if not target.is_relative_to(root) or not target.is_file():
                problems.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html" and unquote(
                    parts.fragment) not in _parse(target, parsed).ids:
                problems.append(f"{where}: {target.relative_to(root)} has no such anchor")
    return problems


def documented_texts() -> Iterator[tuple[Path, str]]:
    """Yield the README and every page of the documentation, with its text."""
    yield README, README.read_text(encoding="utf-8")
    for page in sorted(PAGES.rglob("*.md")):
        yield page, page.read_text(encoding="utf-8")


def missing_code_paths() -> list[str]:
    """Return one line per code path the README or a page names that does not exist."""
    return [f"{page.relative_to(REPO)}: {path}" for page, text in documented_texts()
            for path in missing_in(text)]


def missing_in(text: str) -> list[str]:
    """Return the code paths `text` names that do not exist: a file or folder (from the
    repository's root or from chronicle/), a module, or an entry point below chronicle."""
    modules = _modules()
    paths = [p for p in sorted(set(_PATH.findall(text))) if p.rstrip("/") not in ELSEWHERE
             and not any((base / p).exists() for base in (REPO, REPO / "chronicle"))]
    names = [n for n in sorted(set(_MODULE.findall(text))) if n not in modules]
    dotted = [d for d in sorted(set(_DOTTED.findall(text))) if not _has_entry_point(d)]
    return paths + names + dotted


def _modules() -> set[str]:
    """Return the names of the repository's Python files."""
    return {p.name for root in ("chronicle", "tests", "bench") for p in (REPO / root).rglob("*.py")
            } | {p.name for p in REPO.glob("*.py")}


def _has_entry_point(dotted: str) -> bool:
    module, attr = dotted.rsplit(".", 1)
    try:
        return hasattr(importlib.import_module(f"chronicle.{module}"), attr)
    except ImportError:
        return False


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else SITE
    changed = write_blocks()
    for name in changed:
        print(f"wrote the {name} block of {page_of(name).relative_to(REPO)}")
    seconds = build_docs(site)
    problems = broken_links(site) + missing_code_paths()
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    pages = len(list(site.rglob("*.html")))
    print(f"documentation: {pages} pages built strictly in {seconds:.1f} s into {site}"
          f"{'' if problems else '; every link, anchor and code path checked'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
