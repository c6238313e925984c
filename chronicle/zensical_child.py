"""What a Zensical build's child process runs: `zensical.build`, and nothing else of
chronicle's.

The child is `python -m chronicle.executor`, which imports the module of the function it is
sent; one in chronicle.site would import the whole build path (Altair, mkdocs, Material,
jieba: ~0.8 s of every Zensical build's start, twice a night). So this module sits outside
it, like chronicle/draw.py for the render workers, and imports nothing from chronicle.

**The reference scan, kept.** Zensical 0.0.73 scans every page's Markdown for links,
images, link definitions and footnotes (`zensical.collectors.references`, pure Python, a
byte at a time) on every build, also for the pages whose HTML it takes from its own cache:
~2.0 s of a 2.5 s warm build of a 100-day edition (2 MB of Markdown), measured with
py-spy. The scan is a function of the Markdown's bytes and the offset it is given, and
Zensical looks it up by name each time it calls it. So, given the scans of the last build
(`kept`, the edition's entry of the build cache, signed: site/zensical.py reads and keeps
it), the child answers each page whose bytes it has seen from there and scans the others
with Zensical's own function. Only on the Zensical release it was written against: on any
other, or where that function is not the one it knows, Zensical scans as it always does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.connection import Connection
from typing import Any

# The release whose reference scan (types, signature, how it is called) this was read from.
ZENSICAL = "0.0.73"

Encoded = list[Any]  # a scan's references, as JSON: [type name, field, ...], nested
Scans = dict[str, list[Encoded]]  # "<offset>:<sha256 of the Markdown>" -> references


def build(conn: Connection, config_file: str, log: str, kept: Scans | None) -> None:
    """In the child: build with Zensical, its output into `log`; answer "done" or why not.
    With `kept` (the last build's scans, possibly empty), "done" is followed by this
    build's scans (what the next build is given), or None where none were kept."""
    with open(log, "wb") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    try:
        import zensical

        memo = KeptScans.install(kept) if kept is not None else None
        zensical.build(config_file, {"clean": False, "strict": True})
    except BaseException as err:  # anything Zensical raises is its answer
        conn.send(f"{type(err).__name__}: {err}".strip())
        return
    conn.send("done")
    if kept is not None:
        conn.send(memo.scans if memo is not None else None)


class KeptScans:
    """Zensical's reference scan answered from the last build's scans where the bytes are
    the same; what this build scanned or read, in `scans`."""

    def __init__(self, kept: Scans, scan: Callable[[bytes, int], Iterator[Any]],
                 types: Mapping[str, type]) -> None:
        self.kept, self._scan, self._types = kept, scan, types
        self.scans: Scans = {}
        self.reused = self.made = 0

    @classmethod
    def install(cls, kept: Scans) -> KeptScans | None:
        """Put a memo in place of Zensical's scan (None, and nothing changed, on a release
        other than ZENSICAL or where the scan is not the function this was written for)."""
        import zensical
        import zensical.collectors as collectors
        from zensical.collectors.references import types
        from zensical.utilities.span import Span

        # The package's `references` is the function; the module of that name holds it.
        module = importlib.import_module("zensical.collectors.references")

        scan = getattr(collectors, "references", None)
        if str(zensical.version()) != ZENSICAL or scan is not module.references:
            return None
        known: dict[str, type] = {t.__name__: t for t in (types.Link, types.LinkReference,
                                         types.LinkDefinition, types.FootnoteReference,
                                         types.FootnoteDefinition, Span)}
        memo = cls(kept, scan, known)
        collectors.references = memo  # Zensical's build looks the name up at each page
        return memo

    def __call__(self, markdown: bytes, shift: int = 0) -> Iterator[Any]:
        if not isinstance(markdown, bytes) or not isinstance(shift, int):
            return self._scan(markdown, shift)  # not a call this was written for
        key = f"{shift}:{hashlib.sha256(markdown).hexdigest()}"
        encoded: Any = self.kept.get(key)
        found = self._decode_all(encoded)
        if found is None:
            found = list(self._scan(markdown, shift))
            encoded = [encode(ref) for ref in found]
            self.made += 1
        else:
            self.reused += 1
        self.scans[key] = encoded
        return iter(found)

    def _decode_all(self, encoded: Any) -> list[Any] | None:
        """Return the references of an entry, or None for one that is not a list of them
        (the entry is signed: this is only a check that it is of this form)."""
        if not isinstance(encoded, list):
            return None
        try:
            return [self._decode(ref) for ref in encoded]
        except (TypeError, ValueError, KeyError):
            return None

    def _decode(self, value: Any) -> Any:
        if isinstance(value, list):
            kind = self._types[value[0]]
            names = [f.name for f in dataclasses.fields(kind)]
            if len(value) != len(names) + 1:
                raise ValueError(f"{value[0]} has {len(names)} fields")
            return kind(*(self._decode(v) for v in value[1:]))
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise TypeError(f"not a field of a reference: {value!r}")
        return value


def encode(value: Any) -> Any:
    """Return a reference (a dataclass of spans, offsets and kinds) as JSON."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__,
                *(encode(getattr(value, f.name)) for f in dataclasses.fields(value))]
    return value
