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
    # The author's text this was split from ("中文 / English"), when it was.
    source: str = ""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Text):
            return (self.zh, self.en) == (other.zh, other.en)
        if isinstance(other, str):  # an author's original text, or one of its languages
            return other in (self.source, self.zh, self.en, self.both())
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.zh, self.en))

    def __contains__(self, part: str) -> bool:
        return part in self.zh or part in self.en

    def __bool__(self) -> bool:
        return bool(self.zh or self.en)

    def __str__(self) -> str:
        return self.both()

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

    def both(self) -> str:
        """Both languages in one string (the form of texts written before they were kept apart)."""
        return self.zh if self.zh == self.en else f"{self.zh}\n{self.en}"

    @staticmethod
    def join(texts: list[Text], sep: str = "\n") -> Text:
        return Text(sep.join(t.zh for t in texts), sep.join(t.en for t in texts))


def same(text: str) -> Text:
    """A text that reads the same in both languages (numbers, names, code, a traceback)."""
    return Text(text, text)


EMPTY = Text("", "")


def split_pair(text: str) -> Text:
    """Split an author's "中文 / English" line, or a "中文 paragraph" + "English paragraph" hint.

    Case descriptions put both languages on one line around " / "; hints (the docstrings of
    wrong solutions) put the Chinese paragraph first and the English one after a line break.
    A text with no English part is shown as it is in both languages.
    """
    text = text.strip()
    lines = text.splitlines()
    for i in range(1, len(lines)):
        head = " ".join(line.strip() for line in lines[:i]).rstrip(" /")
        tail = " ".join(line.strip() for line in lines[i:]).lstrip(" /")
        if head and tail and _is_chinese(head) and not _is_chinese(tail):
            return Text(head, tail, text)
    flat = " ".join(line.strip() for line in lines)
    for at, ch in enumerate(flat):
        # The first "/" after which no Chinese follows ("1/√7" inside the Chinese part is not it).
        if (
            ch == "/"
            and _is_chinese(flat[:at])
            and flat[at + 1 :].strip()
            and not _is_chinese(flat[at + 1 :])
        ):
            return Text(flat[:at].strip(), flat[at + 1 :].strip(), text)
    return Text(text, text, text)


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
