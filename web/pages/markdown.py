"""Statements as HTML for the problem page: the judge's Markdown, with code highlighted by Pygments.

Raw HTML in a statement is escaped (judge.statement) and unsafe link schemes are refused by
markdown-it, so the output needs no further sanitising; math stays as text for KaTeX.

Rendering a statement takes milliseconds (most of a problem page's time), so both renderings
are kept per statement text: the same text always renders the same, so a kept one can never be
stale, and `Platform.reload_problems` empties the caches so that old versions are not kept.
"""

from __future__ import annotations

from functools import cache, lru_cache
from html import escape

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from judge.statement import markdown, render

# Statements kept per renderer: every problem's zh and en texts, with room for new versions.
STATEMENTS_KEPT = 256

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


@lru_cache(maxsize=STATEMENTS_KEPT)
def render_statement(text: str) -> str:
    """The problem page's HTML: code highlighted by Pygments."""
    html: str = _renderer().render(text)
    return html


@lru_cache(maxsize=STATEMENTS_KEPT)
def statement_html(text: str) -> str:
    """The API's HTML (`GET /api/problems/{id}`): judge.statement's, code left plain."""
    return render(text)


def forget_statements() -> None:
    """Drop every kept rendering (the problems were reloaded)."""
    render_statement.cache_clear()
    statement_html.cache_clear()


@cache
def highlight_css() -> str:
    """The colours of highlighted code (served at /highlight.css: generated, never built or committed)."""
    light = HtmlFormatter(style="friendly").get_style_defs(".highlight")
    return str(light)
