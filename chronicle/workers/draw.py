"""What a render worker process runs: vl-convert calls, and nothing else of chronicle's.

render/svg.py prepares every spec in the calling process (its width, a white background,
no hover layer) and sends it here. A worker unpickling a function imports that function's
module and its package: one in chronicle.render would import the renderers (Jinja2,
NumPy, the config model: much of every worker's start, which a nightly snapshot waits
for), so this module sits outside it and imports nothing from chronicle.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

# vl-convert measures each glyph of each label through its font database, which holds the
# fonts it is shown, then the Liberation Sans it ships (in memory). A font on disk is
# opened and memory-mapped again for every glyph (about half of a day chart's drawing,
# mostly kernel time) when a machine's Liberation Sans came first. So vl-convert is
# shown one known set (FONTCONFIG_FILE, read once when its font database is built): no
# font of the machine but its Han fonts (Noto Sans / Serif CJK, Debian's fonts-noto-cjk),
# which draw what Liberation Sans lacks (Chinese). A chart is then the same bytes on any
# machine with that package, whatever else it has installed.
SHIPPED = frozenset({"LiberationSans-Regular.ttf", "LiberationSans-Bold.ttf",
                     "LiberationSans-Italic.ttf", "LiberationSans-BoldItalic.ttf"})
HAN_FONTS = ("NotoSansCJK", "NotoSerifCJK")  # file names start so (fonts-noto-cjk)
HAN_PACKAGE = "fonts-noto-cjk"  # the Debian package that ships them
FONT_DIRS = "CHRONICLE_FONT_DIRS"  # folders to look in instead of the machine's (os.pathsep)
FONT_SUFFIXES = frozenset({".ttf", ".ttc", ".otf", ".otc"})
_FIRST_TEXT: dict[str, Any] = {"mark": "text", "data": {"values": [{"t": "0"}]},
                               "encoding": {"text": {"field": "t", "type": "nominal"}}}
_fonts_set = False


def cache_dir() -> Path:
    """Return chronicle's per-user cache folder (the vega bundle, the font list)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "chronicle"


def font_roots() -> list[Path]:
    """Return the folders fontdb (vl-convert's font database) reads without a fontconfig
    file: the system's and the user's font folders (CHRONICLE_FONT_DIRS instead, when
    set: a machine's fonts hidden, in tests)."""
    given = os.environ.get(FONT_DIRS)
    if given is not None:
        return [Path(p) for p in given.split(os.pathsep) if p]
    home = Path.home()
    data = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), home / ".fonts",
            data / "fonts"]


def han_fonts(roots: list[Path] | None = None) -> list[Path]:
    """Return the machine's Han fonts charts are drawn with (HAN_FONTS), in the order
    vl-convert is shown them: regular sans faces first."""
    found: set[Path] = set()
    for root in roots if roots is not None else font_roots():
        with contextlib.suppress(OSError):
            found |= {p for p in root.rglob("*") if p.name.startswith(HAN_FONTS)
                      and p.suffix.lower() in FONT_SUFFIXES and p.is_file()}
    return [Path(p) for p in sorted({str(p.resolve()) for p in found}, key=_font_order)]


def font_config(roots: list[Path] | None = None) -> Path | None:
    """Return a fontconfig file listing the fonts charts are drawn with beside the
    Liberation Sans vl-convert ships: the machine's Han fonts alone (a folder of links to
    them), or None when the folder cannot be written (vl-convert then reads every font of
    the machine)."""
    kept = [str(p) for p in han_fonts(roots)]
    folder = cache_dir() / "fonts" / hashlib.sha256("\n".join(kept).encode()).hexdigest()[:16]
    conf = folder / "fonts.conf"
    # One folder per font, listed in this order: fontdb reads a folder in the file
    # system's order, and a glyph Liberation Sans lacks (CJK) is drawn from the first
    # font that has it, so the regular sans faces come first.
    text = ('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
            "<fontconfig>\n" + "".join(f"  <dir>{escape(str(folder / f'{i:04d}'))}</dir>\n"
                                       for i in range(len(kept))) + "</fontconfig>\n")
    # The list decides how sealed SVGs measure text: one found in the cache is used only
    # if it is exactly what this machine's fonts give (an edited or planted one is made
    # again), so no cache decides a sealed byte.
    if _is_font_list(folder, kept, text):
        return conf
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
        for i, target in enumerate(kept):
            (staging / f"{i:04d}").mkdir()
            (staging / f"{i:04d}" / Path(target).name).symlink_to(target)
        (staging / "fonts.conf").write_text(text, encoding="utf-8")
        if folder.is_symlink() or (folder.exists() and not _is_font_list(folder, kept, text)):
            if folder.is_symlink() or not folder.is_dir():
                folder.unlink()
            else:
                shutil.rmtree(folder)
        try:
            staging.rename(folder)  # whole or not at all; another process may have won
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        return None
    return conf if _is_font_list(folder, kept, text) else None


def _is_font_list(folder: Path, kept: list[str], text: str) -> bool:
    """Whether `folder` holds exactly the font list `font_config` makes for `kept`."""
    try:
        if folder.is_symlink() or (folder / "fonts.conf").is_symlink() or \
                (folder / "fonts.conf").read_text(encoding="utf-8") != text:
            return False
        entries = sorted(p.name for p in folder.iterdir())
        if entries != sorted(["fonts.conf", *(f"{i:04d}" for i in range(len(kept)))]):
            return False
        for i, target in enumerate(kept):
            sub = folder / f"{i:04d}"
            link = sub / Path(target).name
            if sub.is_symlink() or [p.name for p in sub.iterdir()] != [link.name] or \
                    not link.is_symlink() or os.readlink(link) != target:
                return False
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _font_order(path: str) -> tuple[bool, bool, bool, str]:
    """Sans before serif and mono, regular before bold, light or italic; then by path."""
    name = Path(path).stem.lower()
    return (any(w in name for w in ("bold", "black", "heavy", "light", "thin", "italic",
                                    "oblique", "condensed", "narrow", "math")),
            "serif" in name.replace("sans", ""), "mono" in name, path)


def _use_shipped_sans() -> None:
    """Build vl-convert's font database (once per process) from `font_config()`'s list.

    FONTCONFIG_FILE is set only while vl-convert builds it, so that other programs this
    process starts (a browser, in the tests) still see the machine's fonts.
    """
    global _fonts_set
    if _fonts_set:
        return
    _fonts_set = True
    conf = font_config()
    if conf is None:
        return
    import vl_convert as vlc

    before = os.environ.get("FONTCONFIG_FILE")
    os.environ["FONTCONFIG_FILE"] = str(conf)
    try:
        vlc.vegalite_to_svg(_FIRST_TEXT, allowed_base_urls=[])
    finally:
        if before is None:
            os.environ.pop("FONTCONFIG_FILE", None)
        else:
            os.environ["FONTCONFIG_FILE"] = before


def svg(spec: dict[str, Any], vl_version: str | None) -> str:
    """Return the SVG of a prepared Vega-Lite spec, with no network access."""
    import vl_convert as vlc

    _use_shipped_sans()
    drawn: str = vlc.vegalite_to_svg(spec, vl_version=vl_version, allowed_base_urls=[])
    return drawn


def png(drawn: str) -> bytes:
    """Return a PNG of an SVG (for feed readers that show no SVG), compressed."""
    import vl_convert as vlc

    _use_shipped_sans()
    return recompressed(vlc.svg_to_png(drawn, scale=1.0))


def svg_and_png(spec: dict[str, Any], vl_version: str | None,
                with_png: bool) -> tuple[str, bytes | None]:
    """Return the SVG of a prepared spec and, when `with_png`, a PNG of it."""
    drawn = svg(spec, vl_version)
    return drawn, png(drawn) if with_png else None


def recompressed(image: bytes) -> bytes:
    """Return the same PNG with its pixel data deflated at zlib's default level.

    vl-convert stores pixels barely compressed; deflated, the same image is several times
    smaller. Level 6, not 9: 9 is a little smaller but takes several times as long, on
    every sealed day. Chunks other than IDAT are kept.
    """
    pos, chunks = 8, []
    while pos < len(image):
        (length,) = struct.unpack(">I", image[pos:pos + 4])
        chunks.append((image[pos + 4:pos + 8], image[pos + 8:pos + 8 + length]))
        pos += 12 + length
    pixels = zlib.decompress(b"".join(data for kind, data in chunks if kind == b"IDAT"))
    out, idat_done = [image[:8]], False
    for kind, data in chunks:
        if kind == b"IDAT":
            if idat_done:
                continue
            kind, data, idat_done = b"IDAT", zlib.compress(pixels, 6), True
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        out.append(struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc))
    return b"".join(out)
