"""Statements as HTML: the judge's Markdown, for the problem page with code highlighted by Pygments.

Raw HTML in a statement is escaped (judge.authoring.statement) and unsafe link schemes are refused by
markdown-it, so the output needs no further sanitising; math stays as text for KaTeX.

Rendering a statement takes milliseconds (most of a problem page's time), so both renderings
are kept per statement text, by the platform (`Platform.statements`): the same text always
renders the same, so a kept one can never be stale, and `Platform.reload_problems` empties them
so that old versions are not kept. `Statements.pages` keeps what the problem page derives from a
package version (web.pages.sheets), emptied with them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from functools import lru_cache
from html import escape
from typing import Any

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


class Kept:
    """A bounded map of what pages derive from the current packages (least recently used goes
    first), shared by the request threads: a lock, since a get reorders. Its keys name whatever
    the value depends on; `Statements.forget()` empties it when the problems change."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        # How many times it was emptied: what was built from rows read before an emptying is
        # not put back after it (`put`'s `since`).
        self.generation = 0

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any, since: int | None = None) -> None:
        """Keep `value`, unless the map was emptied after `since` (the generation read before
        the rows it was built from): those rows may be what the emptying was for."""
        with self._lock:
            if since is not None and since != self.generation:
                return
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.generation += 1

    def __len__(self) -> int:
        return len(self._items)


class Statements:
    """Both renderings of each statement text, kept, and what the pages derive from a package
    version (`pages`); `forget()` drops them all."""

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
        # The problem page's sheets and visitors' pages (web.pages.sheets), each keyed by the
        # package version and the language it shows.
        self.pages = Kept(kept)

    def _page_html(self, text: str) -> str:
        html: str = self._highlighting.render(text)
        return html

    def forget(self) -> None:
        """Drop every kept rendering (the problems were reloaded)."""
        self.for_page.cache_clear()
        self.for_api.cache_clear()
        self.pages.clear()
