"""The languages the site speaks (Chinese first, English one click away) and their gettext catalogs.

Message ids are English; `web/i18n/zh/LC_MESSAGES/` holds the Chinese catalogs. The `messages`
domain covers templates and page code, the `js` domain the strings of the front end, which the
page hands to the script as a JSON object. English needs no catalog: its text is the ids.
`make i18n` re-extracts both domains; a test fails when any string lacks a translation.

The catalogs are compiled in memory once per platform (`Platform.catalogs`), at start-up.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = ("zh", "en")
DEFAULT_LANGUAGE: Language = "zh"
LANGUAGE_COOKIE = "judge_lang"
CATALOG_DIR = Path(__file__).resolve().parent / "i18n"
# What each language calls itself, for the switch.
NATIVE_NAMES: dict[Language, str] = {"zh": "中文", "en": "English"}


def as_language(value: str | None) -> Language | None:
    for lang in LANGUAGES:
        if value == lang:
            return lang
    return None


def reader_language(asked: str | None, accept_language: str, *fallbacks: str | None) -> Language:
    """What a request reads: `asked` (its ?lang=), else the first tag of its Accept-Language
    that the site speaks, else the first of `fallbacks` that is a language, else Chinese."""
    chosen = as_language(asked)
    if chosen is not None:
        return chosen
    for part in accept_language.split(","):
        tag = part.split(";")[0].strip().lower()
        for lang in LANGUAGES:
            if tag.startswith(lang):
                return lang
    for fallback in fallbacks:
        chosen = as_language(fallback)
        if chosen is not None:
            return chosen
    return DEFAULT_LANGUAGE


def read_catalog(lang: str, domain: str) -> Catalog:
    path = CATALOG_DIR / lang / "LC_MESSAGES" / f"{domain}.po"
    with path.open("rb") as f:
        return read_po(f, locale=lang, domain=domain)


def compile_translations(lang: Language) -> NullTranslations:
    if lang == "en":
        return NullTranslations()
    buffer = io.BytesIO()
    write_mo(buffer, read_catalog(lang, "messages"), use_fuzzy=False)
    buffer.seek(0)
    return Translations(buffer, domain="messages")


def compile_js_messages(lang: Language) -> dict[str, str]:
    if lang == "en":
        return {}
    catalog = read_catalog(lang, "js")
    return {str(m.id): str(m.string) for m in catalog if m.id and m.string and not m.fuzzy}


class Catalogs:
    """Every language's catalogs, compiled once: the pages' gettext and the script's messages."""

    def __init__(self) -> None:
        self._translations = {lang: compile_translations(lang) for lang in LANGUAGES}
        self._js = {lang: compile_js_messages(lang) for lang in LANGUAGES}

    def translations(self, lang: Language) -> NullTranslations:
        return self._translations[lang]

    def js_messages(self, lang: Language) -> dict[str, str]:
        return self._js[lang]


# t("...") with a plain double-quoted literal: the only form the front end uses for messages.
# Babel's JavaScript lexer loses strings next to template literals, so this domain has its own.
JS_MESSAGE = re.compile(r'\bt\(\s*"((?:[^"\\\n]|\\.)*)"')


def extract_js(
    fileobj: BinaryIO, keywords: object, comment_tags: object, options: object
) -> Iterator[tuple[int, str, str, list[str]]]:
    """A Babel extraction method (see web/i18n/babel-js.cfg) for the front end's t() calls."""
    source = fileobj.read().decode("utf-8")
    for match in JS_MESSAGE.finditer(source):
        lineno = source.count("\n", 0, match.start()) + 1
        yield lineno, "t", json.loads(f'"{match.group(1)}"'), []
