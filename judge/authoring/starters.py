"""A starter in one language: its comments and docstrings in the reader's language only, and
comment lines wrapped to fit the editor. The problem page hands it to the editor
(web.pages.problems), the kit's chapter notebooks put it in a cell (judge.authoring.notebooks).

A package's starter.py says each TODO twice, a Chinese line then its English one (docstrings
alike), so that the file reads in either language on disk. On the page the reader reads one
language: a line with Chinese in it is the Chinese one; a line without, right after a Chinese
one of the same kind (comment after comment, docstring line after docstring line), is its
English translation. Code is never touched: only whole comment lines and docstring lines go,
and only comment lines are wrapped, so the starter runs exactly as the package's does.
"""

from __future__ import annotations

import re
import unicodedata

WIDTH = 76  # display columns (a CJK character is two): what the editor shows at 1366 px
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_COMMENT = re.compile(r"^(\s*)#(\s*)(.*)$")


def has_chinese(line: str) -> bool:
    return bool(_CJK.search(line))


def _is_continuation(line: str) -> bool:
    """`#       (more of the item above)`: a comment line indented past its item's first."""
    found = _COMMENT.match(line)
    return found is not None and len(found.group(2)) >= 2


def _docstring_lines(lines: list[str]) -> set[int]:
    """Indices of lines inside a triple-quoted string (the quotes' own lines included)."""
    inside, out = False, set()
    for i, line in enumerate(lines):
        quotes = line.count('"""')
        if inside or quotes:
            out.add(i)
        if quotes % 2 == 1:
            inside = not inside
    return out


def _items(lines: list[str], doc: set[int]) -> list[tuple[str, list[int]]]:
    """Lines grouped into items: ("comment", a comment line with its continuation lines),
    ("doc", one docstring line) or ("code", any other line)."""
    items: list[tuple[str, list[int]]] = []
    for i, line in enumerate(lines):
        if i in doc:
            items.append(("doc", [i]))
        elif _COMMENT.match(line):
            if _is_continuation(line) and items and items[-1][0] == "comment":
                items[-1][1].append(i)
            else:
                items.append(("comment", [i]))
        else:
            items.append(("code", [i]))
    return items


def _docstring_line_for(line: str, dropped: str) -> str:
    """`line` with the opening quotes the dropped line before it held ('    \"\"\"' + text)."""
    head = dropped[: dropped.index('"""') + 3]
    return head + line.strip()


def in_language(source: str, lang: str) -> str:
    """The starter with only `lang`'s comment and docstring lines (see the module's docstring)."""
    lines = source.splitlines()
    doc = _docstring_lines(lines)
    items = _items(lines, doc)
    out: list[str] = []
    carry_quotes: str | None = None  # a dropped Chinese docstring line that opened the string
    for n, (kind, idx) in enumerate(items):
        text = [lines[i] for i in idx]
        chinese = any(has_chinese(t) for t in text)
        if kind == "code":
            out.extend(text)
            continue
        if lang == "en" and chinese:
            if kind == "doc" and '"""' in text[0] and text[0].count('"""') == 1:
                carry_quotes = text[0]
            continue
        previous = items[n - 1] if n else None
        translation = (
            lang == "zh"
            and not chinese
            and previous is not None
            and previous[0] == kind
            and any(has_chinese(lines[i]) for i in previous[1])
            and not any('"""' in t for t in text)
        )
        if translation:
            continue
        if carry_quotes is not None and kind == "doc" and '"""' not in text[0]:
            text = [_docstring_line_for(text[0], carry_quotes), *text[1:]]
        carry_quotes = None
        if kind == "comment" and any(_width(t) > WIDTH for t in text):
            text = wrap_comments([_joined(text)])  # one item, wrapped afresh as a whole
        out.extend(text)
    return "\n".join(out) + ("\n" if source.endswith("\n") else "")


def _joined(item: list[str]) -> str:
    """A comment item (its first line and continuation lines) as one line."""
    first = item[0]
    rest = [found.group(3) for line in item[1:] if (found := _COMMENT.match(line)) is not None]
    glue = "" if has_chinese(first) else " "
    return glue.join([first.rstrip(), *rest]) if rest else first


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _split_to_width(text: str, width: int) -> list[str]:
    """`text` in pieces of at most `width` columns: at spaces where it has them, else anywhere
    (Chinese has no spaces between words)."""
    pieces: list[str] = []
    rest = text
    while _width(rest) > width:
        cut, used = 0, 0
        for i, ch in enumerate(rest):
            used += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
            if used > width:
                break
            cut = i + 1
        space = rest.rfind(" ", 0, cut + 1)
        if space > width // 3:  # break at a space, unless that leaves a very short line
            cut = space
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    pieces.append(rest)
    return pieces


def wrap_comments(lines: list[str], width: int = WIDTH) -> list[str]:
    """Comment lines longer than `width` columns, wrapped under their own text (a TODO's
    continuation lines start under its first word)."""
    out: list[str] = []
    for line in lines:
        found = _COMMENT.match(line)
        if found is None or _width(line) <= width:
            out.append(line)
            continue
        indent, gap, body = found.groups()
        lead = f"{indent}#{gap}"
        label = re.match(r"(TODO:\s*|NOTE:\s*)", body)
        hang = " " * (len(gap) + (len(label.group(1)) if label else 0))
        pieces = _split_to_width(body, max(20, width - len(indent) - 1 - len(hang)))
        out.append(lead + pieces[0])
        out.extend(f"{indent}#{hang}{piece}" for piece in pieces[1:])
    return out
