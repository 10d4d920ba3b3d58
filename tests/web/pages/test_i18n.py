"""The Chinese catalogs cover every message of the pages and the front end, and nothing else."""

from __future__ import annotations

import re

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg

from tests.paths import REPO_ROOT
from web.language import CATALOG_DIR, Catalogs, read_catalog
from web.pages.templating import environment, js_messages_json

PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)s")
DOMAINS = {"messages": ("babel.cfg", ("_", "gettext", "N_")), "js": ("babel-js.cfg", ("t",))}


def extracted(domain: str) -> set[str]:
    config, keywords = DOMAINS[domain]
    with (CATALOG_DIR / config).open() as f:
        method_map, options_map = parse_mapping_cfg(f)
    found = extract_from_dir(str(REPO_ROOT), method_map, options_map, keywords={k: None for k in keywords})
    messages = {str(message) for _file, _line, message, _comments, _context in found}
    assert messages, f"nothing extracted for {domain}: is {config} right?"
    return messages


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_catalog_matches_the_source(domain: str) -> None:
    in_source = extracted(domain)
    catalog = read_catalog("zh", domain)
    in_catalog = {str(m.id) for m in catalog if m.id}
    missing = sorted(in_source - in_catalog)
    stale = sorted(in_catalog - in_source)
    assert not missing, f"run `make i18n` and translate: {missing}"
    assert not stale, f"run `make i18n` (these are no longer used): {stale}"


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_every_message_is_translated_with_its_placeholders(domain: str) -> None:
    problems = []
    for message in read_catalog("zh", domain):
        if not message.id:
            continue
        msgid, msgstr = str(message.id), str(message.string)
        if not msgstr or message.fuzzy:
            problems.append(f"untranslated: {msgid!r}")
        elif sorted(PLACEHOLDER.findall(msgid)) != sorted(PLACEHOLDER.findall(msgstr)):
            problems.append(f"placeholders differ: {msgid!r} -> {msgstr!r}")
    assert not problems, "\n".join(problems)


def test_languages_resolve() -> None:
    catalogs = Catalogs()
    assert catalogs.translations("zh").gettext("Problems") == "题目"
    assert catalogs.translations("en").gettext("Problems") == "Problems"
    assert catalogs.js_messages("zh")["Accepted"] == "通过"
    assert catalogs.js_messages("en") == {}


def test_the_script_s_messages_are_embedded_as_tojson_wrote_them() -> None:
    """Every page embeds them; they are serialised once per language (web.pages.templating), to
    the same text that `|tojson` made for each page (HTML-safe: `<`, `>`, `&` and `'` escaped)."""
    catalogs = Catalogs()
    for lang in ("zh", "en"):
        made_once = js_messages_json(catalogs, lang)
        assert made_once == environment().from_string("{{ m|tojson }}").render(m=catalogs.js_messages(lang))
        assert js_messages_json(catalogs, lang) is made_once
    assert '"Accepted": ' in js_messages_json(catalogs, "zh") and js_messages_json(catalogs, "en") == "{}"
