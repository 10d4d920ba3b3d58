"""Texts in both of the site's languages, kept apart so a reader is shown only theirs.

The judge writes every message it produces for a learner as a `Text`; the report carries both
languages, and whoever shows it (the page, the API, `judge run --lang`, the kit) picks one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"


@dataclass(frozen=True, eq=False)
class Text:
    zh: str
    en: str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Text):
            return (self.zh, self.en) == (other.zh, other.en)
        if isinstance(other, str):  # one of its languages
            return other in (self.zh, self.en)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.zh, self.en))

    def __contains__(self, part: str) -> bool:
        return part in self.zh or part in self.en

    def __bool__(self) -> bool:
        return bool(self.zh or self.en)

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh

    def to_dict(self) -> dict[str, str]:
        return {"zh": self.zh, "en": self.en}

    @classmethod
    def from_dict(cls, raw: Any) -> Text:
        if isinstance(raw, dict):
            return cls(str(raw.get("zh", "")), str(raw.get("en", "")))
        return cls(str(raw), str(raw))  # a text written before languages were kept apart

    def __add__(self, other: Text) -> Text:
        return Text(self.zh + other.zh, self.en + other.en)

    def with_zh(self, zh: str) -> Text:
        return Text(zh, self.en)

    @staticmethod
    def join(texts: list[Text], sep: str = "\n") -> Text:
        return Text(sep.join(t.zh for t in texts), sep.join(t.en for t in texts))


def same(text: str) -> Text:
    """A text that reads the same in both languages (numbers, names, code, a traceback)."""
    return Text(text, text)


EMPTY = Text("", "")


def parse_author_text(text: str) -> Text:
    """An author's bilingual text, as packages write it, parsed into its two languages.

    The format (docs/authoring.md): the Chinese first, then the English.
    - Across lines (a wrong solution's docstring hint: a Chinese paragraph, then an English
      one): the first line break after which no Chinese follows splits them.
    - On one line (a case's description, "中文 / English"): the first "/" after which no Chinese
      follows splits them, so a "/" inside the Chinese part ("1/√7") is not taken for it.
    Either way a "/" at the seam is dropped and the lines of each part are joined by spaces.
    A text with no English part is shown as it is in both languages.

    Parse a text once, where the package is loaded (judge.core.casekit for descriptions,
    judge.authoring.package for hints); everything after that hands the `Text` on.
    """
    text = text.strip()
    lines = text.splitlines()
    for i in range(1, len(lines)):
        head = " ".join(line.strip() for line in lines[:i]).rstrip(" /")
        tail = " ".join(line.strip() for line in lines[i:]).lstrip(" /")
        if head and tail and _is_chinese(head) and not _is_chinese(tail):
            return Text(head, tail)
    flat = " ".join(line.strip() for line in lines)
    for at, ch in enumerate(flat):
        if (
            ch == "/"
            and _is_chinese(flat[:at])
            and flat[at + 1 :].strip()
            and not _is_chinese(flat[at + 1 :])
        ):
            return Text(flat[:at].strip(), flat[at + 1 :].strip())
    return Text(text, text)


def split_pair(text: str) -> Text:
    """A text stored before the two languages were kept apart (an old report's hint,
    description or warning: both in one string, as an author wrote it, or the Chinese line
    and then the English one), read as `parse_author_text` reads an author's. Only for old
    stored rows; the judge itself never makes such a string."""
    return parse_author_text(text)


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
