"""Statements as HTML for the problem page: the judge's Markdown, with code highlighted by Pygments.

Raw HTML in a statement is escaped (judge.statement) and unsafe link schemes are refused by
markdown-it, so the output needs no further sanitising; math stays as text for KaTeX.
"""

from __future__ import annotations

from functools import cache
from html import escape

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from judge.statement import markdown

_FORMATTER = HtmlFormatter(nowrap=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    body = highlight(code, lexer, _FORMATTER)
    css_lang = escape(lang or "text", quote=True)
    # Starting with <pre tells markdown-it to use this as the whole block.
    return f'<pre class="highlight"><code class="language-{css_lang}">{body}</code></pre>'


@cache
def _renderer() -> MarkdownIt:
    md = markdown()
    md.options["highlight"] = _highlight
    return md


def render_statement(text: str) -> str:
    html: str = _renderer().render(text)
    return html


@cache
def highlight_css() -> str:
    """The colours of highlighted code (served at /highlight.css: generated, never built or committed)."""
    light = HtmlFormatter(style="friendly").get_style_defs(".highlight")
    return str(light)
