"""Problem statements: Markdown with $...$ and $$...$$ math, rendered to HTML (math left for KaTeX)."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

PLACEHOLDER = re.compile(r"\bTODO\b")


def markdown() -> MarkdownIt:
    """The statement dialect: CommonMark, tables and dollar math; raw HTML is escaped."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    dollarmath_plugin(md, allow_space=True, allow_digits=True, double_inline=True)
    return md


def render(text: str) -> str:
    """HTML for a statement. Raw HTML in the source is escaped, not passed through."""
    html: str = markdown().render(text)
    return html


def problems_in(text: str) -> list[str]:
    """What is wrong with a statement, in words an author can act on; empty when it is sound."""
    found: list[str] = []
    if not text.strip():
        return ["is empty"]
    tokens = markdown().parse(text)
    if not any(t.type == "heading_open" and t.tag == "h1" for t in tokens):
        found.append("has no '# title' heading")
    if PLACEHOLDER.search(text):
        found.append("still holds a TODO placeholder")
    for tok in tokens:
        if tok.type != "inline" or not tok.children:
            continue
        for child in tok.children:
            if child.type == "text" and "$" in child.content:
                line = (tok.map[0] + 1) if tok.map else "?"
                found.append(
                    f"line {line}: unbalanced $ (math that does not close): {child.content.strip()[:60]!r}"
                )
    lines = text.splitlines()
    fences = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
    if len(fences) % 2:
        found.append(f"line {fences[-1] + 1}: code fence ``` is never closed")
    return found
