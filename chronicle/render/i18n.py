"""Languages of the site: message catalogs and the language a page is rendered in
(render stage, pure).

Every generated sentence and label is an English msgid marked with `_()` / `ngettext()`
in Python or `{% trans %}` in a template; `chronicle/locale/<lang>/LC_MESSAGES/chronicle.po`
holds its translation. A catalog is read as text and compiled in memory (Babel), so no
binary .mo file is committed or installed. A chronicle may carry `locale/<lang>.po`
beside its chronicle.yml: its translations win over the packaged ones, so a reader's fix
reaches the site at the next build without a release.

The language is per build, not per call: `use_language("zh")` sets it for everything
rendered inside (a context variable, like a web framework's request locale), so the pure
page builders need no extra parameter. English is the default and the language of the
sealed record: sealing renders in English whatever the context says.
"""

from __future__ import annotations

import gettext as _gettext
import io
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from chronicle.config import LANGUAGES  # English first: the sealed record's language

DEFAULT = LANGUAGES[0]
DOMAIN = "chronicle"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
# The name of each language in its own language (the language switch shows these).
NAMES = {"en": "English", "zh": "中文"}


@dataclass(frozen=True)
class Language:
    """The language a build renders in, with its compiled catalog."""

    code: str = DEFAULT
    overrides: Path | None = None  # a chronicle's own locale/ folder, if it has one
    catalog: _gettext.NullTranslations = field(default_factory=_gettext.NullTranslations,
                                               compare=False)


_ENGLISH = Language()  # frozen: a safe default for every context
_current: ContextVar[Language] = ContextVar("chronicle_language", default=_ENGLISH)
_cache: dict[tuple[str, Path | None, float], _gettext.NullTranslations] = {}


def language() -> str:
    """Return the code of the language pages are being rendered in ("en", "zh")."""
    return _current.get().code


def is_chinese() -> bool:
    return language() == "zh"


@contextmanager
def use_language(code: str, overrides: Path | None = None) -> Iterator[None]:
    """Render everything inside this block in `code` (optionally with a chronicle's own
    catalog folder `overrides`, holding `<code>.po`)."""
    if code not in LANGUAGES:
        raise ValueError(f"language {code!r} is not one of {', '.join(LANGUAGES)}")
    token = _current.set(Language(code, overrides, load_catalog(code, overrides)))
    try:
        yield
    finally:
        _current.reset(token)


def edition_dir(code: str) -> str:
    """Return the folder of a language's edition relative to the site root ('' or 'zh/')."""
    return "" if code == DEFAULT else f"{code}/"


def catalog_path(code: str) -> Path:
    """Return the packaged catalog of `code` (chronicle/locale/<code>/LC_MESSAGES/...po)."""
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def _compile(paths: list[Path]) -> _gettext.NullTranslations:
    """Return the translations of the .po files `paths`, later files winning."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    merged = None
    for path in paths:
        with path.open("rb") as fh:
            cat = read_po(fh, domain=DOMAIN)
        if merged is None:
            merged = cat
            continue
        for message in cat:
            if not (message.id and message.string and not message.fuzzy):
                continue
            current = merged.get(message.id, message.context)
            if current is None:
                merged[message.id] = message
            else:  # Catalog.__setitem__ would keep the packaged string
                current.string = message.string
                current.flags.discard("fuzzy")
    if merged is None:
        return _gettext.NullTranslations()
    buffer = io.BytesIO()
    write_mo(buffer, merged)  # fuzzy and untranslated messages are left out
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def load_catalog(code: str, overrides: Path | None = None) -> _gettext.NullTranslations:
    """Return the compiled catalog of `code` (the packaged one, then `overrides/<code>.po`
    over it), cached until one of the files changes (`chronicle serve` sees an edit)."""
    if code == DEFAULT:
        return _gettext.NullTranslations()
    paths = [p for p in (catalog_path(code), overrides / f"{code}.po" if overrides else None)
             if p is not None and p.is_file()]
    key = (code, overrides, sum(p.stat().st_mtime for p in paths))
    if key not in _cache:
        _cache[key] = _compile(paths)
    return _cache[key]


def translations() -> _gettext.NullTranslations:
    """Return the compiled catalog of the current language."""
    return _current.get().catalog


def gettext(message: str) -> str:
    """Return `message` in the current language (itself when untranslated)."""
    return translations().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Return the singular or plural form for `n` in the current language."""
    return translations().ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """Return `message` in the current language, as meant in `context` ("issue state")."""
    return translations().pgettext(context, message)


def N_(message: str) -> str:
    """Mark `message` for the catalog without translating it here (translated later)."""
    return message


_ = gettext
