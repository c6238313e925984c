"""Fields of a stored record read with their types checked (kernel).

A record comes back from a store file whose bytes the chain vouches for, but the chain
says nothing of what the bytes mean: someone who can write the repository can rewrite
the chain too, and a `"title": 5` or `"labels": {}` would otherwise travel on until a page
stumbles over it. Each reader raises TypeError naming the field; the store turns it into
one message naming the file (store/files.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_MISSING = object()


def text(d: Mapping[str, Any], key: str, default: str | None = None) -> str:
    """Return the string `d[key]`; `default` when it is absent, null or empty (if given)."""
    value = d.get(key, _MISSING)
    if default is not None and (value is _MISSING or value is None or value == ""):
        return default
    if not isinstance(value, str):
        raise TypeError(f"{key}: expected text, got {_kind(value)}")
    return value


def optional_text(d: Mapping[str, Any], key: str) -> str | None:
    """Return the string `d[key]`, or None when it is absent or null."""
    value = d.get(key)
    return None if value is None else text(d, key)


def whole(d: Mapping[str, Any], key: str) -> int:
    """Return the whole number `d[key]` (a bool is not one)."""
    value = d.get(key, _MISSING)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key}: expected a whole number, got {_kind(value)}")
    return value


def optional_whole(d: Mapping[str, Any], key: str) -> int | None:
    """Return the whole number `d[key]`, or None when it is absent or null."""
    return None if d.get(key) is None else whole(d, key)


def optional_number(d: Mapping[str, Any], key: str) -> float | int | None:
    """Return the number `d[key]` (int or float), or None when it is absent or null."""
    value = d.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{key}: expected a number, got {_kind(value)}")
    return value


def texts(d: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """Return the list of strings `d[key]` as a tuple (absent or null: empty)."""
    value = _or(d, key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key}: expected a list of text, got {_kind(value)}")
    return tuple(value)


def mapping(d: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Return the JSON object `d[key]` as a dict (absent or null: empty)."""
    value = _or(d, key, {})
    if not isinstance(value, dict):
        raise TypeError(f"{key}: expected an object, got {_kind(value)}")
    return dict(value)


def counts(d: Mapping[str, Any], key: str) -> dict[str, int]:
    """Return the object of whole numbers `d[key]` (reactions: name -> count)."""
    value = mapping(d, key)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
        raise TypeError(f"{key}: expected whole numbers, got {_kind(value)}")
    return value


def records(d: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """Return the list of objects `d[key]` (absent or null: empty)."""
    value = _or(d, key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TypeError(f"{key}: expected a list of objects, got {_kind(value)}")
    return value


def record(value: Any) -> dict[str, Any]:
    """Return `value` if it is a JSON object (a record), else TypeError."""
    if not isinstance(value, dict):
        raise TypeError(f"expected a record (an object), got {_kind(value)}")
    return value


def _or(d: Mapping[str, Any], key: str, empty: Any) -> Any:
    """Return `d[key]`, or `empty` when it is absent or null (never when merely falsy)."""
    value = d.get(key)
    return empty if value is None else value


def _kind(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40]}{'…' if len(shown) > 40 else ''}"
