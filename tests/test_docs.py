"""The documentation (documentation/, `make docs`) and the README: the references generated
from the code are current, every config key, command and option is documented, the site
builds strictly with every link and anchor resolving, every code path the pages name
exists, and the README stays short (datasette's `test_settings_are_documented`, kept
true by generating the pages)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import yaml

from chronicle.cli import main
from chronicle.config import DEFAULT_METRICS, declared_keys
from chronicle.config.reference import reference_keys
from tests.support import docs

README = docs.README.read_text(encoding="utf-8")
CONFIG_PAGE = (docs.PAGES / "configuration.md").read_text(encoding="utf-8")
COMMANDS_PAGE = (docs.PAGES / "commands.md").read_text(encoding="utf-8")
SETUP = """```sh
make demo    # installs chronicle (the runtime only) into .venv and builds the demo chronicle from a simulated run (no network, no account)
make test    # adds the dev extras; lint (ruff, mypy) + the whole test suite, incl. real mkdocs builds, headless Chromium and the built wheel
```"""  # noqa: E501
MAX_README_LINES = 150
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_short_and_starts_with_the_two_setup_commands() -> None:
    assert len(README.splitlines()) <= MAX_README_LINES
    assert README.startswith(f"# chronicle\n\n{SETUP}\n")


def test_the_readme_links_every_page_and_its_links_resolve() -> None:
    links = _LINK.findall(README)
    # Every page but the documentation's home page, which says what the README says.
    pages = {f"documentation/pages/{p.name}" for p in docs.PAGES.glob("*.md")} - {
        "documentation/pages/index.md"}
    assert pages <= set(links), f"the README does not link {sorted(pages - set(links))}"
    relative = [link for link in links if "://" not in link]
    assert not [link for link in relative if not (docs.REPO / link.split("#")[0]).exists()]


def test_every_page_is_in_the_nav() -> None:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!relative", lambda loader, node: None)
    config = yaml.load(docs.CONFIG.read_text(encoding="utf-8"), Loader=Loader)
    nav = {page for entry in config["nav"] for page in entry.values()}
    assert nav == {p.name for p in docs.PAGES.glob("*.md")}


def test_the_generated_references_are_what_the_code_makes() -> None:
    stale = docs.stale_blocks()
    assert not stale, f"out of date: {stale}; run `{docs.COMMAND}`"


def test_every_declared_config_key_is_in_the_reference() -> None:
    keys = reference_keys()
    assert sorted(k.replace("[]", "") for k in keys) == sorted(declared_keys())
    missing = [k for k in keys if f"| `{k}` |" not in CONFIG_PAGE]
    assert not missing, f"documentation/pages/configuration.md lacks {missing}"


def test_the_keys_the_configuration_page_explains_are_declared() -> None:
    explained = re.findall(r"^- `([\w.\[\]]+)`:", CONFIG_PAGE, re.MULTILINE)
    assert len(explained) > 20
    stale = [k for k in explained if k.replace("[]", "") not in set(declared_keys())]
    assert not stale, f"the configuration page explains keys chronicle.yml lacks: {stale}"


def test_every_canonical_metric_is_documented() -> None:
    missing = [m for m in DEFAULT_METRICS if f"| `{m}` |" not in CONFIG_PAGE]
    assert not missing


def test_every_cli_command_and_option_is_documented() -> None:
    assert isinstance(main, click.Group)
    missing = []
    for name, command in main.commands.items():
        if f"\n## chronicle {name}\n\n<!-- reference:cli:{name} -->" not in COMMANDS_PAGE:
            missing.append(name)
        missing += [f"{name} {opt}" for param in command.params for opt in param.opts
                    if opt.startswith("--") and f"`{opt}`" not in COMMANDS_PAGE]
    assert not missing, f"documentation/pages/commands.md lacks: {missing}"


def test_the_documentation_builds_strictly_and_every_link_resolves(tmp_path: Path) -> None:
    site = tmp_path / "site"
    docs.build_docs(site)
    assert (site / "configuration.html").is_file()
    assert not docs.broken_links(site)
    # The benchmarks page holds the bench's results file, included at build time.
    assert "chronicle bench:" in (site / "benchmarks.html").read_text(encoding="utf-8")


def test_every_code_path_the_docs_name_exists() -> None:
    assert not docs.missing_code_paths()


def test_a_missing_code_path_is_found() -> None:
    text = ("see `chronicle/site/build.py`, site/outputs/editions.py, render/day.py, `cli.py`, "
            "tests/test_docs.py, `site.build.build_site` and documentation/pages/ "
            "(not docs/days/<date>.md, nor api/latest.json)")
    assert docs.missing_in(text) == []
    assert docs.missing_in("site/nowhere.py, `nothing_here.py`, site.build.no_such, "
                           "site.engines.mkdocs.plugin.no_such") == [
        "site/nowhere.py", "nothing_here.py", "site.build.no_such",
        "site.engines.mkdocs.plugin.no_such"]


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_text(
        '<h2 id="here">x</h2><a href="#here">ok</a><a href="sub/">ok</a>'
        '<a href="https://example.org/gone">other host</a><a href="b.html#there">no anchor</a>'
        '<a href="c.html">no file</a><img src="/sub/index.html">', encoding="utf-8")
    (tmp_path / "b.html").write_text('<p id="elsewhere">b</p>', encoding="utf-8")
    (tmp_path / "sub" / "index.html").write_text('<a href="../a.html#here">ok</a>',
                                                 encoding="utf-8")
    assert docs.broken_links(tmp_path) == [
        "a.html: b.html#there: b.html has no such anchor", "a.html: c.html: no such file"]


@pytest.mark.parametrize("name", ["config", "cli", "cli:build"])
def test_a_block_is_replaced_whole_and_the_page_around_it_kept(name: str) -> None:
    made = docs.generated_blocks()[name]
    page = f"by hand\n<!-- reference:{name} -->\nold\n<!-- /reference:{name} -->\nafter\n"
    assert docs.blocks_in(page) == {name: "old\n"}
    written = docs.with_blocks(page, {name: made, "elsewhere": "not on this page\n"})
    assert written.startswith("by hand\n") and written.endswith("\nafter\n")
    assert docs.blocks_in(written) == {name: made}
