"""Config stage: text from chronicle.yml that readers see, in every language of the site.

A risk's title and reason, a claim's statement, a health check's reason and a phase's
name are written by the operator and shown on every page. Each can carry its
translations: `title: {en: Grad-norm growth, zh: 梯度范数增长}` (English required, every
other key a language of the site); a plain string is English alone and is shown as
written in every edition. The value is a `Said`: the English text itself (so sealed
records, written in English, stay what they were) with its translations beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chronicle.config.checks import no_controls
from chronicle.config.fields import Check, Invalid, Problem, show

ENGLISH = "en"
# The languages a translation may be given in (config/model.py LANGUAGES, which imports
# this module: kept here to avoid the cycle, and checked equal in tests).
TRANSLATED = ("zh",)


class Said(str):
    """Reader-facing text from chronicle.yml: the English (the string itself) and its
    translations by language code."""

    translations: Mapping[str, str]

    def __new__(cls, english: str, translations: Mapping[str, str] | None = None) -> Said:
        said = super().__new__(cls, english)
        said.translations = dict(translations or {})
        return said

    def in_language(self, code: str) -> str:
        """Return the text in `code` (English where no translation is given)."""
        return self.translations.get(code, str(self))


def words(expected: str = "a non-empty string", *, empty: bool = False) -> Check:
    """A string, or a mapping of language -> string with `en` required (`Said`)."""

    def check(value: Any) -> Said:
        if isinstance(value, str) and (empty or value.strip()):
            return Said(no_controls(value).strip())
        if not isinstance(value, Mapping):
            raise Invalid(f"expected {expected}, or one per language ({{en: ..., zh: ...}}), "
                          f"got {show(value)}")
        problems: list[Problem] = []
        said: dict[str, str] = {}
        for code, text in value.items():
            if code not in (ENGLISH, *TRANSLATED):
                problems.append((str(code), f"not a language of the site (expected one of "
                                            f"{', '.join((ENGLISH, *TRANSLATED))})"))
            elif not isinstance(text, str) or not text.strip():
                problems.append((str(code), f"expected {expected}, got {show(text)}"))
            else:
                try:
                    said[str(code)] = no_controls(text).strip()
                except Invalid as err:
                    problems.append((str(code), str(err)))
        if ENGLISH not in value:
            problems.append((ENGLISH, "missing: the English text is the record's"))
        if problems:
            raise Invalid(problems=problems)
        return Said(said.pop(ENGLISH), said)

    return check


def catalog(texts: Iterable[Any], code: str) -> dict[str, str]:
    """Return English -> `code` for every `Said` among `texts` that has a translation."""
    return {str(t): t.translations[code] for t in texts
            if isinstance(t, Said) and code in t.translations}


def phases(example: str) -> Check:
    """Phase name -> the budget fraction where it starts (0 to 1), or -> {at: fraction,
    <language>: the name in it}; each name a `Said`."""
    from chronicle.config.checks import name_map, number

    fraction = number(0, 1, example="0.8")

    def one(item: Any) -> tuple[float, dict[str, str]]:
        if not isinstance(item, Mapping):
            return fraction(item), {}
        extra = [k for k in item if k not in ("at", *TRANSLATED)]
        problems: list[Problem] = [(str(k), "unknown key: expected at and the phase's name "
                                            f"in {', '.join(TRANSLATED)}") for k in extra]
        if "at" not in item:
            problems.append(("at", "missing: the budget fraction where the phase starts"))
        names: dict[str, str] = {}
        for code in TRANSLATED:
            if code in item:
                try:
                    names[code] = words()(item[code])
                except Invalid as err:
                    problems += err.at(code)
        if problems:
            raise Invalid(problems=problems)
        return fraction(item["at"]), names

    mapped = name_map(one, example)

    def check(value: Any) -> dict[str, float]:
        return {Said(name, names): at for name, (at, names) in mapped(value).items()}

    return check
