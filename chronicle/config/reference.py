"""Config stage: the configuration reference, written from the keys' declarations.

The documentation's configuration page (documentation/pages/configuration.md) holds this
Markdown between its `reference:config` markers; `make docs` writes it and
tests/test_docs.py fails while the page holds another. Like `chronicle init`'s template
(config/template.py), every default and every meaning comes from the key's one
declaration (`option(check, default, doc)`), and what a key accepts is what its check
says when a value is wrong: the check is asked about a value no check accepts, and the
words it expects are the ones a user would read in its error message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import is_dataclass
from typing import Any

from chronicle.config.default_checks import Check
from chronicle.config.fields import UNSET, Fields, Invalid, Option, Section
from chronicle.config.model import RunConfig
from chronicle.config.template import yaml_text

INLINE_DEFAULT = 40  # a longer default is listed under the table, not in its cell
_HEAD = "| key | default | accepts | meaning |\n|---|---|---|---|"


class _Probe:
    """A value no check accepts: the message it raises says what it expects."""

    def __repr__(self) -> str:
        return "PROBE"


def reference() -> str:
    """Return the Markdown reference of every key of chronicle.yml: a table per section
    (key, default, what it accepts, what it means), then the defaults too long for a cell."""
    out: list[str] = []
    long: list[tuple[str, Any]] = []
    for heading, intro, rows in _tables():
        out += [f"### {heading}", "", *([intro, ""] if intro else []), _HEAD,
                *(_row(k, o, long) for k, o in rows), ""]
    if long:
        out += ["### Longer defaults", ""]
        for key, value in long:
            out += [f"#### Default of `{key}`", "", *_long_default(value), ""]
    return "\n".join(out).rstrip() + "\n"


def reference_keys() -> list[str]:
    """Return every key as the reference names it (a list's item keys as `risks[].id`)."""
    return list(dict.fromkeys(key for _, _, rows in _tables() for key, _ in rows))


def _tables() -> Iterator[tuple[str, str, list[tuple[str, Option]]]]:
    """Yield (heading, intro, rows) of each table: the top level, then one per section."""
    root = list(_flat(Section(RunConfig).schema))
    yield "Top level", "", root
    for key, opt in root:
        if opt.schema is None:
            continue
        doc = table_cell(opt.doc)
        what = "a list; each item has these keys" if _is_list(opt) else _presence(opt)
        yield f"`{key}`", f"{doc[:1].upper()}{doc[1:]}: {what}.", list(_keys(opt, key))


def _flat(schema: Mapping[str, Option]) -> Iterator[tuple[str, Option]]:
    """Yield the keys of `schema`, an inline section's keys in its place."""
    for key, opt in schema.items():
        if opt.inline and opt.schema:
            yield from _flat(opt.schema)
        else:
            yield key, opt


def _is_list(opt: Option) -> bool:
    """Whether the key holds a list of mappings (health, risks, claims, creators)."""
    return opt.schema is not None and not isinstance(opt.check, Section | Fields)


def _keys(opt: Option, path: str) -> Iterator[tuple[str, Option]]:
    """Yield every key below a section or a list's items, nested ones in their place."""
    below = f"{path}[]" if _is_list(opt) else path
    for key, sub in (opt.schema or {}).items():
        yield f"{below}.{key}", sub
        if sub.schema is not None:
            yield from _keys(sub, f"{below}.{key}")


def _presence(opt: Option) -> str:
    return "required" if opt.required else "optional"


def _row(path: str, opt: Option, long: list[tuple[str, Any]]) -> str:
    cells = [f"`{path}`", _default(path, opt, long), _accepts(path, opt), table_cell(opt.doc)]
    return "| " + " | ".join(cells) + " |"


def _default(path: str, opt: Option, long: list[tuple[str, Any]]) -> str:
    """Return the cell of a key's default: required, not set, or the value as YAML."""
    if opt.required:
        return "required"
    if opt.default is UNSET:
        return "not set"
    value = opt.make_default()
    if value is None or value == "":
        return "not set"
    if is_dataclass(value):  # an optional section
        return "its keys' defaults"
    written = _yaml(value)
    if written is None or len(written) > INLINE_DEFAULT:
        long.append((path, value))
        # The slug of the heading "Default of `wandb.keys`", as mkdocs and GitHub make it.
        return f"[below](#default-of-{path.replace('.', '')})"
    return f"`{written}`"


def _yaml(value: Any) -> str | None:
    try:
        return yaml_text(value)
    except TypeError:
        return None


def _accepts(path: str, opt: Option) -> str:
    """Return what the key's check says it expects (its words for a wrong value)."""
    if opt.schema is not None:
        below = f"[below](#{path.replace('.', '')})" if "." not in path else "below"
        return f"a list of mappings, {below}" if _is_list(opt) else f"a mapping, {below}"
    try:
        opt.check(_Probe())
    except Invalid as err:
        said = "; ".join(m for _, m in err.problems)
    else:  # a check that takes anything (none does today) expects nothing to say
        return "anything"
    said = said.replace(", got PROBE", "").replace(", got a _Probe", "")
    said = said.removeprefix("expected ")
    if _takes_empty(opt):
        said = said.replace("a non-empty string", "a string (may be empty)")
    return table_cell(said)


def _takes_empty(opt: Option) -> bool:
    try:
        opt.check("")
    except Invalid:
        return False
    return True


def table_cell(text: str) -> str:
    """Return `text` for a Markdown table cell: `<` (which would open a tag) and `*`
    escaped outside its `code` spans, pipes escaped everywhere."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace("*", r"\*")
    return "`".join(parts).replace("|", r"\|")


def _long_default(value: Any) -> list[str]:
    """Return the Markdown of a default too long for its cell."""
    if isinstance(value, Mapping):
        rows = [f"| `{k}` | `{v}` |" for k, v in value.items()]
        return ["| name | default |", "|---|---|", *rows]
    if value and all(isinstance(v, Check) for v in value):
        return ["| id | metric | rule | window | severity | reason |",
                "|---|---|---|---|---|---|", *(_check_row(c) for c in value)]
    return [", ".join(f"`{v}`" for v in value)]


def _check_row(check: Check) -> str:
    window = f"{check.window_minutes:g} min" if check.window_minutes else "the day"
    metrics = ", ".join(f"`{m}`" for m in check.metric)
    return (f"| `{check.id}` | {metrics} | `{check.rule}` | {window} | {check.severity} | "
            f"{table_cell(check.reason)} |")
