"""Config stage: the declaration machinery. Each key is declared once, with its check,
default and one-line doc; validation walks the declarations and collects every problem.

A key is an `Option` (material's `Type(int, default = 1)` idea). On a frozen dataclass it
is written `name: int = option(integer(), doc="...")`, so the attribute, its default, its
check and its doc are one line; `Section(cls)` validates a mapping into that dataclass.
A check is any callable that returns the converted value or raises `Invalid`; nested
checks (sections, lists of rows) raise `Invalid` with every problem, each with its key
path relative to the value checked, and the caller prefixes its own key.
"""

from __future__ import annotations

import difflib
import math
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import date
from typing import Any

Check = Callable[[Any], Any]
Problem = tuple[str, str]  # (key path, what is wrong and how to fix it)
Schema = dict[str, "Option"]  # YAML key -> its declaration

OPTION = "chronicle.option"  # the dataclass field metadata key holding an Option
SHOW_CHARS = 80  # a bad value echoed in a message is cut to this many characters


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


REQUIRED: Any = _Marker("REQUIRED")  # no default: the key must be written
UNSET: Any = _Marker("UNSET")  # no default: an absent key stays absent (overrides)


class Invalid(Exception):
    """A value failed its check: one message, or several problems with relative key paths."""

    def __init__(self, message: str = "", problems: Iterable[Problem] = ()) -> None:
        self.problems: list[Problem] = list(problems) or [("", message)]
        super().__init__("; ".join(m for _, m in self.problems))

    def at(self, prefix: str) -> list[Problem]:
        """Return the problems with `prefix` (a key or `[i]`) in front of each path."""
        return [(join(prefix, path), message) for path, message in self.problems]

    def messages(self, prefix: str = "") -> list[str]:
        """Return one `path: message` line per problem, each path below `prefix`."""
        return lines(self.problems, prefix)


def lines(problems: Iterable[Problem], prefix: str = "") -> list[str]:
    """Return one `path: message` line per problem, each path below `prefix`."""
    out = []
    for path, message in problems:
        where = join(prefix, path)
        out.append(f"{where}: {message}" if where else message)
    return out


@dataclass(frozen=True)
class Option:
    """One key: its check, its one-line doc and its default (or REQUIRED / UNSET)."""

    check: Check
    doc: str
    default: Any = REQUIRED
    factory: Callable[[], Any] | None = None
    key: str | None = None  # the YAML key when it differs from the attribute's name
    inline: bool = False  # a section whose keys sit in the parent mapping

    @property
    def required(self) -> bool:
        return self.default is REQUIRED and self.factory is None

    @property
    def schema(self) -> Schema | None:
        """Return the nested declarations (sections, rows), or None for a leaf."""
        return getattr(self.check, "schema", None)

    def make_default(self) -> Any:
        return self.factory() if self.factory is not None else self.default


def option(check: Check, *, doc: str, default: Any = REQUIRED,
           factory: Callable[[], Any] | None = None, key: str | None = None,
           inline: bool = False) -> Any:
    """Declare a dataclass field as a config key (the dataclass default is the key's)."""
    meta = {OPTION: Option(check, doc, default, factory, key, inline)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    if default is REQUIRED:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


def section(cls: type, *, doc: str, required: bool = True, inline: bool = False,
            finish: Callable[[Any], Any] | None = None) -> Any:
    """Declare a dataclass field holding a nested section (a mapping -> `cls`)."""
    return option(Section(cls, finish), doc=doc,
                  factory=None if required and not inline else cls, inline=inline)


def join(prefix: str, path: str) -> str:
    """Return the key path `path` below `prefix` (`run` + `start`, `health` + `[0]`)."""
    if not path or not prefix:
        return prefix or path
    return f"{prefix}{path}" if path.startswith("[") else f"{prefix}.{path}"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = SHOW_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def show(value: Any) -> str:
    """Return `repr(value)` cut to ~80 characters: a message never echoes a huge value."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    if isinstance(value, date):  # datetimes too: shown as written in YAML, not as repr
        return value.isoformat()
    try:
        text = _REPR.repr(value)
    except Exception:  # a value whose repr fails must not turn a message into a traceback
        text = f"<{type(value).__name__}>"
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 1] + "…"


def key_text(key: Any) -> str:
    """Return a key as written in a key path (cut like `show` when it is long)."""
    text = str(key) if isinstance(key, str | int) and not isinstance(key, bool) else show(key)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 1] + "…"


def type_name(value: Any) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"


def suggest(word: Any, choices: Iterable[str]) -> str:
    """Return ` (did you mean 'x'?)` for the choice closest to `word`, or ''."""
    close = difflib.get_close_matches(key_text(word), list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_keys(data: Mapping[Any, Any], allowed: Iterable[str],
                 noun: str = "key") -> list[Problem]:
    """Return one problem per key of `data` not in `allowed`, with a suggestion."""
    names = list(allowed)
    return [(key_text(key), f"unknown {noun}{suggest(key, names)}; allowed here: "
             f"{', '.join(names)}") for key in data if key not in names]


def check_mapping(schema: Schema, data: Any) -> dict[str, Any]:
    """Return the checked values of `data` by YAML key; raise Invalid with every problem.

    An absent or null key takes its default; a REQUIRED one is a problem; an UNSET one is
    left out of the result.
    """
    if not isinstance(data, Mapping):
        required = [k for k, o in schema.items() if o.required] or list(schema)
        raise Invalid(f"expected a mapping with {', '.join(required)}, got {type_name(data)}")
    allowed = [k for k, o in schema.items() if not o.inline]
    for o in schema.values():
        if o.inline and o.schema:
            allowed += list(o.schema)
    problems = unknown_keys(data, allowed)
    values: dict[str, Any] = {}
    for key, opt in schema.items():
        try:
            if opt.inline:
                values[key] = opt.check({k: v for k, v in data.items() if k in (opt.schema or {})})
            elif data.get(key) is not None:
                values[key] = opt.check(data[key])
            elif opt.required:
                problems.append((key, f"missing (required): {opt.doc}"))
            elif opt.default is not UNSET:
                values[key] = opt.make_default()
        except Invalid as err:
            problems += err.problems if opt.inline else err.at(key)
    if problems:
        raise Invalid(problems=problems)
    return values


class Fields:
    """Check a mapping against a plain schema; return its values by key (rows, tables)."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def __call__(self, value: Any) -> dict[str, Any]:
        return check_mapping(self.schema, value)


class Section:
    """Check a mapping against the options declared on dataclass `cls`; return a `cls`.

    `finish(obj)` may derive values (a title defaulting to the id) or raise Invalid for
    rules that span several keys.
    """

    def __init__(self, cls: type, finish: Callable[[Any], Any] | None = None) -> None:
        self.cls, self.finish = cls, finish
        self.schema: Schema = {}
        self.attrs: dict[str, str] = {}  # YAML key -> attribute name
        for f in fields(cls):
            opt = f.metadata.get(OPTION)
            if opt is not None:
                self.schema[opt.key or f.name] = opt
                self.attrs[opt.key or f.name] = f.name

    def __call__(self, value: Any, **given: Any) -> Any:
        values = check_mapping(self.schema, value)
        obj = self.cls(**{self.attrs[k]: v for k, v in values.items()}, **given)
        return self.finish(obj) if self.finish else obj


class Rows:
    """Check a list whose items each pass `item`; return a tuple of the checked items."""

    def __init__(self, item: Check, what: str) -> None:
        self.item, self.what = item, what
        self.schema: Schema | None = getattr(item, "schema", None)

    def __call__(self, value: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise Invalid(f"expected a list of {self.what}, got {type_name(value)}")
        out, problems = [], []
        for i, row in enumerate(value):
            try:
                out.append(self.item(row))
            except Invalid as err:
                problems += err.at(f"[{i}]")
        if problems:
            raise Invalid(problems=problems)
        return tuple(out)


def walk(schema: Schema, prefix: str = "") -> Iterator[tuple[str, Option]]:
    """Yield (dotted key path, Option) for every declared key, sections before their keys."""
    for key, opt in schema.items():
        path = prefix if opt.inline else join(prefix, key)
        if not opt.inline:
            yield path, opt
        if opt.schema:
            yield from walk(opt.schema, path)
