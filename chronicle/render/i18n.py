"""Languages of the site: message catalogs and the language a page is rendered in
(render stage, pure).

Every generated sentence and label is an English msgid marked with `_()` / `ngettext()`
in Python or `{% trans %}` in a template; `chronicle/locale/<lang>/LC_MESSAGES/chronicle.po`
holds its translation. A catalog is read as text and compiled in memory (Babel), so no
binary .mo file is committed or installed. A chronicle may carry `locale/<lang>.po`
beside its chronicle.yml: its translations win over the packaged ones, so a reader's fix
reaches the site at the next build without a release.

The language is an argument, never ambient state: every function that writes words or
numbers for a reader takes a `Language` (its catalog and its formats) from its caller,
so two editions rendered in one process, or in one thread after another, cannot borrow
each other's words. `ENGLISH` is the language of the sealed record: sealing passes it.
"""

from __future__ import annotations

import datetime as dt
import gettext as _gettext
import hashlib
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronicle.config import LANGUAGES  # English first: the sealed record's language
from chronicle.config.model import DEFAULT_TITLE
from chronicle.render import formats, terms

if TYPE_CHECKING:
    from chronicle.config import RunConfig

DEFAULT = LANGUAGES[0]
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
DOMAIN = "chronicle"
LOCALE_FOLDER = "locale"  # a chronicle's own translations: <root>/locale/<lang>.po
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
# The name of each language in its own language (the language switch shows these).
NAMES = {"en": "English", "zh": "中文"}


@dataclass(frozen=True)
class Language:
    """A language to render in: its code, its compiled catalog and its formats.

    The words (`gettext`, `ngettext`, `pgettext`, `term`, `plural`) come from the
    catalog; the numbers and dates that differ by language (`si`, `usd`, `date`, ...)
    follow render/formats.py's rules for it.
    """

    code: str = DEFAULT
    catalog: _gettext.NullTranslations = field(default_factory=_gettext.NullTranslations,
                                               compare=False, repr=False)
    # The chronicle's own words in this language: its chronicle.yml's reader-facing text
    # (risk titles and reasons, claim statements, check reasons, phase names) -> the
    # translation it gives (config/words.py).
    words: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    # What the words came from: the sha256 of the catalogs' bytes and of `words` (an
    # edition sealed with one says so: `verify --recompute` compares its bytes only under
    # the same words).
    fingerprint: str = field(default="", compare=False)

    @property
    def zh(self) -> bool:
        return self.code == "zh"

    @property
    def english(self) -> bool:
        return self.code == DEFAULT

    @property
    def folder(self) -> str:
        """This edition's folder relative to the site root ('' for English, 'zh/')."""
        return edition_dir(self.code)

    @property
    def sep(self) -> str:
        """What joins two sentences: a space, or nothing after Chinese punctuation."""
        return "" if self.zh else " "

    @property
    def line(self) -> str:
        """What ends a line inside a paragraph of a template: a newline, which a browser
        shows as a space, or nothing in Chinese (`{{ lang.line -}}` before the next line)."""
        return "" if self.zh else "\n"

    def join_sentences(self, *parts: str) -> str:
        """Return the non-empty `parts` as one run of sentences: a space between English
        sentences, none between Chinese ones (after their full-width punctuation)."""
        return self.sep.join(p for p in parts if p)

    # --- words ------------------------------------------------------------------------
    def gettext(self, message: str) -> str:
        """Return `message` in this language (itself when untranslated)."""
        return self.catalog.gettext(message)

    _ = gettext

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """Return the singular or plural form for `n` in this language."""
        return self.catalog.ngettext(singular, plural, n)

    def pgettext(self, context: str, message: str) -> str:
        """Return `message` in this language, as meant in `context` ("issue state")."""
        return self.catalog.pgettext(context, message)

    def said(self, text: object) -> str:
        """Return text from chronicle.yml in this language: its translation where the
        config gives one (config/words.py), else as written. Sealed records hold the
        English, which finds its translation here."""
        value = "" if text is None else str(text)
        return self.words.get(value, value)

    def quoted(self, text: object) -> str | None:
        """Return the language of words people wrote (a comment, an issue or PR title) when
        it is not this page's: "en" for text without Chinese on a Chinese page, "zh" for
        Chinese text on an English one; None when it is the page's own (a screen reader
        then reads it with the page's voice)."""
        han = _HAN.search(str(text or "")) is not None
        if self.zh and not han and _LATIN.search(str(text or "")):
            return DEFAULT
        if self.english and han:
            return "zh"
        return None

    def term(self, keyword: object, context: str) -> str:
        """Return the word for a record's keyword (`"gap"` as a "failure kind" -> 缺口);
        a keyword the vocabulary does not know (a hand-written kind) is shown as written."""
        text = str(keyword)
        return self.pgettext(context, text) if (context, text) in terms.KNOWN else text

    def plural(self, n: Any, noun: str, many: str | None = None) -> str:
        """Return "1 failure", "2 failures" (`many` for irregular plurals); in Chinese the
        catalog's word with its measure word (3 次重启; render/terms.py lists the nouns)."""
        count = int(n) if formats.finite(n) else 0
        if not self.english:
            return f"{formats.fmt_count(count)} {self.term(noun, 'counted')}"
        word = noun if count == 1 else (many or noun + "s")
        return f"{formats.fmt_count(count)} {word}"

    # --- numbers, dates and times that differ by language -------------------------------
    def si(self, value: Any, unit: str = "") -> str:
        return formats.fmt_si(value, unit, zh=self.zh)

    def si_signed(self, value: Any, unit: str = "") -> str:
        return formats.fmt_si_signed(value, unit, zh=self.zh)

    def usd(self, value: Any, digits: int = 0) -> str:
        return formats.fmt_usd(value, digits, zh=self.zh)

    def points(self, value: Any, digits: int = 1) -> str:
        return formats.fmt_points(value, digits, zh=self.zh)

    def duration(self, seconds: Any) -> str:
        return formats.fmt_duration(seconds, zh=self.zh)

    def time(self, value: Any, seconds: bool = False) -> str:
        return formats.fmt_time(value, zh=self.zh, seconds=seconds)

    def date(self, value: Any) -> str:
        return formats.fmt_date(value, zh=self.zh)

    def month(self, value: dt.date) -> str:
        return formats.fmt_month(value, zh=self.zh)

    def hours(self, value: Any) -> str:
        return formats.fmt_hours(value, zh=self.zh)

    def value(self, value: Any, kind: str, unit: str = "") -> str:
        return formats.fmt_value(value, kind, unit, zh=self.zh)


ENGLISH = Language()  # the record's language: no catalog, English formats


def edition_dir(code: str) -> str:
    """Return the folder of a language's edition relative to the site root ('' or 'zh/')."""
    return "" if code == DEFAULT else f"{code}/"


def catalog_path(code: str) -> Path:
    """Return the packaged catalog of `code` (chronicle/locale/<code>/LC_MESSAGES/...po)."""
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def _compile(paths: list[Path]) -> tuple[_gettext.NullTranslations, str]:
    """Return the translations of the .po files `paths`, later files winning, and the
    sha256 of their words: every (context, English, translation) the catalog gives, not
    the files' bytes, so a catalog whose comments, references or dates alone changed
    says the same words (the fingerprint `verify --recompute` replays an edition under)."""
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
        return _gettext.NullTranslations(), hashlib.sha256(b"-").hexdigest()
    words = sorted([m.context or "", json.dumps(m.id, ensure_ascii=False),
                    json.dumps(m.string, ensure_ascii=False)]
                   for m in merged if m.id and m.string and not m.fuzzy)
    buffer = io.BytesIO()
    write_mo(buffer, merged)  # fuzzy and untranslated messages are left out
    buffer.seek(0)
    digest = hashlib.sha256(json.dumps(words, ensure_ascii=False).encode()).hexdigest()
    return _gettext.GNUTranslations(buffer), digest


# Compiled catalogs and their words' sha256 by (code, overrides, the files' mtimes): a
# cache of pure results (the same files give the same catalog), not state a render
# depends on.
_compiled: dict[tuple[str, Path | None, float], tuple[_gettext.NullTranslations, str]] = {}


def _compiled_catalog(code: str, overrides: Path | None
                      ) -> tuple[_gettext.NullTranslations, str]:
    paths = [p for p in (catalog_path(code), overrides / f"{code}.po" if overrides else None)
             if p is not None and p.is_file()]
    key = (code, overrides, sum(p.stat().st_mtime for p in paths))
    if key not in _compiled:
        _compiled[key] = _compile(paths)
    return _compiled[key]


def load_catalog(code: str, overrides: Path | None = None) -> _gettext.NullTranslations:
    """Return the compiled catalog of `code` (the packaged one, then `overrides/<code>.po`
    over it), compiled again when one of the files changes (`chronicle serve` sees an edit)."""
    if code == DEFAULT:
        return _gettext.NullTranslations()
    return _compiled_catalog(code, overrides)[0]


def language(code: str, overrides: Path | None = None,
             config: RunConfig | None = None) -> Language:
    """Return the `code` language with its catalog (and a chronicle's own `overrides`
    folder holding `<code>.po`, whose messages win), and with `config`, the translations
    its chronicle.yml gives of its own text (config/words.py)."""
    if code not in LANGUAGES:
        raise ValueError(f"language {code!r} is not one of {', '.join(LANGUAGES)}")
    if code == DEFAULT:
        return ENGLISH
    words = config_words(config, code) if config is not None else {}
    return Language(code, load_catalog(code, overrides), words,
                    _fingerprint(code, overrides, words))


def editions(config: RunConfig) -> list[Language]:
    """Return the languages of the site other than English, each with the chronicle's own
    catalog (<root>/locale/<code>.po) and chronicle.yml's words: the editions a day is
    sealed in beside its English record."""
    return [language(code, config.root / LOCALE_FOLDER, config)
            for code in config.site.languages if code != DEFAULT]


def _fingerprint(code: str, overrides: Path | None, words: Mapping[str, str]) -> str:
    """Return the sha256 of a language's words: its catalog's (the packaged one with a
    chronicle's own over it, `_compile`) and chronicle.yml's translations."""
    digest = hashlib.sha256(_compiled_catalog(code, overrides)[1].encode() + b"\0")
    digest.update(json.dumps(dict(words), sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def config_words(config: RunConfig, code: str) -> dict[str, str]:
    """Return English -> `code` of every reader-facing text of `config` that has one."""
    from chronicle.config.words import catalog

    watch = config.watch
    texts = [*config.run.phases, *(r.title for r in watch.risks), *(r.reason for r in watch.risks),
             *(c.statement for c in watch.claims), *(c.reason for c in watch.health)]
    return catalog(texts, code)


def site_title(config: RunConfig, lang: Language) -> str:
    """Return the site's title in `lang`'s edition: `site.titles[<lang>]` when chronicle.yml
    gives it, else the default title said in `lang` when chronicle.yml gives no title, else
    `site.title` as written (text an operator wrote stays as written)."""
    site = config.site
    if lang.english:
        return site.title
    if lang.code in site.titles:
        return site.titles[lang.code]
    if site.title == DEFAULT_TITLE.format(name=config.run.name):
        return lang.gettext(DEFAULT_TITLE).format(name=config.run.name)
    return site.title


def N_(message: str) -> str:
    """Mark `message` for the catalog without translating it here (translated later)."""
    return message
