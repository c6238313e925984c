"""The message catalogs: extract every marked string, update the .po files (`make i18n`).

Run as `python -m tests.support.catalog`: it extracts the msgids of chronicle's Python
code (`_()`, `gettext()`, `ngettext()`, `N_()`) and templates (`{% trans %}`, `_()`) with
Babel, then merges them into each chronicle/locale/<lang>/LC_MESSAGES/chronicle.po: new
messages arrive untranslated, messages no longer used are dropped. A translator then
fills in the empty `msgstr ""` lines; tests/test_i18n.py fails while one is empty.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from chronicle.render.i18n import DOMAIN, LANGUAGES, catalog_path
from tests.support.paths import REPO

PACKAGE = REPO / "chronicle"
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None,
            "pgettext": ((1, "c"), 2)}
METHODS = [("**/templates/**.j2", "jinja2"), ("**.py", "python")]
OPTIONS = {"**/templates/**.j2": {"extensions": "jinja2.ext.i18n", "trimmed": "true"}}


def extract() -> Catalog:
    """Return a catalog of every message marked in chronicle's code and templates."""
    catalog = Catalog(domain=DOMAIN, project="chronicle", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
            str(PACKAGE), METHODS, OPTIONS, KEYWORDS, strip_comment_tags=True):
        catalog.add(message, None, [(f"chronicle/{filename}", lineno)],
                    auto_comments=comments, context=context)
    return catalog


def read(lang: str) -> Catalog:
    """Return the packaged catalog of `lang` (empty when it does not exist yet)."""
    path = catalog_path(lang)
    if not path.is_file():
        return Catalog(locale=lang, domain=DOMAIN, charset="utf-8")
    with path.open("rb") as fh:
        return read_po(fh, locale=lang, domain=DOMAIN)


HEADER = """\
# Translations of chronicle's generated pages (see README, "Languages").
# Fill in each empty msgstr; keep {placeholders} and %(placeholders)s as they are.
"""


def render(catalog: Catalog) -> bytes:
    """Return a catalog as .po text: messages sorted, no line wrapping, stable header."""
    catalog.project, catalog.version = "chronicle", ""
    catalog.header_comment = HEADER
    catalog.fuzzy = False  # a fuzzy header would be left out: Plural-Forms with it
    catalog.revision_date = catalog.creation_date  # same messages, same bytes
    catalog.last_translator = "chronicle contributors"
    catalog.language_team = "chronicle contributors"
    out = io.BytesIO()
    write_po(out, catalog, width=0, sort_output=True, omit_header=False,
             ignore_obsolete=True, include_lineno=False)
    return out.getvalue()


def update(lang: str) -> Path:
    """Merge the extracted messages into `lang`'s catalog; return its path."""
    template = extract()
    catalog = read(lang)
    catalog.update(template, no_fuzzy_matching=True)
    path = catalog_path(lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(render(catalog))
    return path


def translated(message: Message) -> bool:
    """Return whether a message has every form translated and is not fuzzy."""
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    return bool(strings) and all(strings) and not message.fuzzy


def main() -> None:
    for lang in LANGUAGES[1:]:
        path = update(lang)
        missing = [m.id for m in read(lang) if m.id and not translated(m)]
        print(f"{path.relative_to(REPO)}: {len(missing)} message(s) to translate")
        for msgid in missing:
            print(f"  {msgid if isinstance(msgid, str) else msgid[0]}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
