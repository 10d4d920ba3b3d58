"""Options that more than one command line (`judge`, `judge serve`'s tools) declare alike."""

from __future__ import annotations

import argparse

from judge.core.texts import DEFAULT_LANGUAGE, LANGUAGES


def add_lang(parser: argparse.ArgumentParser) -> None:
    """`--lang zh|en`: the one language a command's messages are shown in."""
    parser.add_argument(
        "--lang", choices=list(LANGUAGES), default=DEFAULT_LANGUAGE, help="the language of the messages"
    )
