"""Config stage: read a hand-written YAML file (chronicle.yml, failures.yml) safely.

A file a person edits is read more strictly than PyYAML's `safe_load` does:
it must be UTF-8; a key written twice in one mapping is refused (YAML keeps the last
silently); aliases (`*name`) are refused, so a few lines cannot expand into gigabytes;
a date or a number PyYAML cannot build (`2026-02-30`) stays a string, so validation
names its key instead of PyYAML raising. Every refusal is a ConfigError naming the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from chronicle.config.fields import join, key_text
from chronicle.errors import ConfigError

MAX_BYTES = 8 * 1024 * 1024  # far above any real chronicle.yml / failures.yml
_MESSAGE_CHARS = 160  # PyYAML's own message, capped: it may quote the offending text


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and keeps unbuildable dates/numbers as strings."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ComposerError(
                None, None,
                f"alias *{event.anchor} is not allowed (aliases can expand a few lines into "
                "gigabytes); write the value out in full",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def _lenient(self, node: ScalarNode, build: Any) -> Any:
        try:
            return build(self, node)
        except (ValueError, OverflowError):
            # 2026-02-30 matches YAML's timestamp pattern but is no date; a 5,000-digit
            # integer is beyond Python's int parsing limit. The key's check reports either.
            return self.construct_scalar(node)

    def construct_yaml_timestamp(self, node: ScalarNode) -> Any:
        return self._lenient(node, yaml.SafeLoader.construct_yaml_timestamp)

    def construct_yaml_int(self, node: ScalarNode) -> Any:
        return self._lenient(node, yaml.SafeLoader.construct_yaml_int)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def read_yaml(path: Path) -> Any:
    """Return the document in `path`; raise ConfigError naming the line of any problem."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(str(path), [f"cannot read the file: {err.strerror}"]) from err
    if len(raw) > MAX_BYTES:
        raise ConfigError(str(path), [
            f"the file is {len(raw):,} bytes; the limit is {MAX_BYTES:,}: is it the right file?"
        ])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise ConfigError(str(path), [
            f"not UTF-8 text: byte 0x{raw[err.start]:02x} at line {line}, column {column}; "
            "save the file as UTF-8"
        ]) from err
    return parse_yaml(text, str(path))


def parse_yaml(text: str, origin: str) -> Any:
    """Return the YAML document in `text`; raise ConfigError naming `origin` and the line."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        duplicates = _find_duplicates(node)
        if duplicates:
            raise ConfigError(origin, duplicates)
        return loader.construct_document(node)
    except yaml.YAMLError as err:
        raise ConfigError(origin, [_describe(err)]) from err
    except RecursionError as err:
        raise ConfigError(origin, [
            "nested too deeply to read (thousands of levels of [ or {); is it the right file?"
        ]) from err
    finally:
        loader.dispose()


def _describe(err: yaml.YAMLError) -> str:
    """Return PyYAML's complaint as one short line: where, what, and what it was reading."""
    problem = getattr(err, "problem", None)
    if not problem:
        return f"not valid YAML: {_short(str(err))}"
    text = f"not valid YAML{_at(getattr(err, 'problem_mark', None))}: {_short(problem)}"
    context = getattr(err, "context", None)
    if context:
        text += f" ({_short(context)}{_at(getattr(err, 'context_mark', None))})"
    return text


def _at(mark: Any) -> str:
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def _find_duplicates(node: Node) -> list[str]:
    """Return one problem per key written twice in a mapping, naming both lines, in order."""
    # The composed tree is walked with an explicit stack: a deep document must not hit
    # Python's recursion limit here (PyYAML's composer already bounded the depth).
    found: list[tuple[int, str]] = []
    stack: list[tuple[Node, str]] = [(node, "")]
    while stack:
        current, at = stack.pop()
        if isinstance(current, SequenceNode):
            stack.extend((child, f"{at}[{i}]") for i, child in enumerate(current.value))
        elif isinstance(current, MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in current.value:
                key = key_node.value if isinstance(key_node, ScalarNode) else None
                where = join(at, key_text(key))
                line = key_node.start_mark.line + 1
                if key is not None and key in seen:
                    found.append((line, f"{where}: key written twice (lines {seen[key]} and "
                                  f"{line}); YAML would keep only the last: delete one"))
                elif key is not None:
                    seen[key] = line
                stack.append((value_node, where))
    return [message for _, message in sorted(found)]
