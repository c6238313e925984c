"""Reading chart specs in tests: a layer's rows, wherever the spec keeps them (inline
values, or a named dataset at the top level, as Altair writes them for chronicle)."""

from __future__ import annotations

from typing import Any


def rows(spec: dict[str, Any], part: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Return the data rows of `part` (a layer of `spec`, or `spec` itself)."""
    data = (part if part is not None else spec).get("data") or spec.get("data") or {}
    if "values" in data:
        return list(data["values"])
    if "name" in data:
        return list(spec.get("datasets", {}).get(data["name"], []))
    return []


def all_rows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the rows of every layer of `spec` (each dataset once)."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for part in spec.get("layer", [spec]):
        data = part.get("data") or {}
        key = data.get("name") or str(id(part))
        if key not in seen:
            seen.add(key)
            out.extend(rows(spec, part))
    return out
