"""Statements as HTML: the judge's Markdown, for the problem page with code highlighted by Pygments.

Raw HTML in a statement is escaped (judge.authoring.statement) and unsafe link schemes are refused by
markdown-it, so the output needs no further sanitising; math stays as text for KaTeX.

Rendering a statement takes milliseconds (most of a problem page's time), so both renderings
are kept per statement text, by the platform (`Platform.statements`): the same text always
renders the same, so a kept one can never be stale, and `Platform.reload_problems` empties them
so that old versions are not kept.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from judge.authoring.statement import markdown, render

# Statements kept per rendering: every problem's zh and en texts, with room for new versions.
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


# When the system prefers dark (web/frontend/src/theme.css darkens the page): a dark style whose
# rules outrank the light style's (:root), whose token colours are reset where it has none.
DARK_HIGHLIGHT_CSS = (
    "\n@media (prefers-color-scheme: dark) {\n:root .highlight span { color: inherit; }\n"
    + str(HtmlFormatter(style="github-dark").get_style_defs(":root .highlight"))
    + "\n}\n"
)


class Statements:
    """Both renderings of each statement text, kept; `forget()` drops them all."""

    def __init__(self, kept: int = STATEMENTS_KEPT) -> None:
        self._highlighting = markdown()
        self._highlighting.options["highlight"] = _highlight
        # The problem page's HTML: code highlighted by Pygments.
        self.for_page = lru_cache(maxsize=kept)(self._page_html)
        # The API's HTML (`GET /api/problems/{id}`): judge.authoring.statement's, code left plain.
        self.for_api = lru_cache(maxsize=kept)(render)
        # The colours of highlighted code (served at /highlight.css: generated, never committed).
        # xcode: every token 4.5:1 or more on the statement's code background (friendly's
        # comments were 2.7:1).
        light = str(HtmlFormatter(style="xcode").get_style_defs(".highlight"))
        self.highlight_css = light + DARK_HIGHLIGHT_CSS

    def _page_html(self, text: str) -> str:
        html: str = self._highlighting.render(text)
        return html

    def forget(self) -> None:
        """Drop every kept rendering (the problems were reloaded)."""
        self.for_page.cache_clear()
        self.for_api.cache_clear()
