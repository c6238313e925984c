"""Config stage: lines of chronicle.yml written from the keys' declarations.

`chronicle init` writes a commented chronicle.yml (chronicle/init.py). Where it shows a key
at its default, the line comes from the key's one declaration (config/model.py: its
default and its doc), so the scaffold never says another default than the code has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chronicle.config.fields import REQUIRED, UNSET, Option, Section, walk
from chronicle.config.model import RunConfig

COMMENT_COLUMN = 32  # where a line's comment starts, as in the rest of the template
# A YAML plain scalar that reads back as the same string (no quoting needed).
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_DEFAULT: Any = object()


def declaration(path: str) -> Option:
    """Return the declaration of the key at dotted `path` (e.g. "wandb.mfu_unit")."""
    found = dict(walk(Section(RunConfig).schema)).get(path)
    if found is None:
        raise KeyError(f"no key {path!r} is declared in chronicle/config")
    return found


def yaml_text(value: Any) -> str:
    """Return `value` as chronicle.yml writes it in flow style (10.0 as 10)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return value if _PLAIN.fullmatch(value) else '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {yaml_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    raise TypeError(f"no YAML text for {type(value).__name__}")


def declared_line(path: str, value: Any = _DEFAULT, comment: str = "", indent: int = 2
                  ) -> str:
    """Return the line `key: value   # doc` of the key at `path`, to be written after
    `indent` spaces: its declared default (or `value`), its declared doc as the comment
    (or `comment`), the comment at COMMENT_COLUMN when the line leaves room."""
    opt = declaration(path)
    if value is _DEFAULT:
        if opt.default in (REQUIRED, UNSET) and opt.factory is None:
            raise ValueError(f"{path} has no default; pass the value to write")
        value = opt.make_default()
    line = f"{path.rsplit('.', 1)[-1]}: {yaml_text(value)}"
    return f"{line.ljust(COMMENT_COLUMN - indent - 1)} # {comment or opt.doc}"
