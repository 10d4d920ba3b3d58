"""How web/ is put together: the domains (auth, problems, drafts, submissions, judging, scores,
admin) and the platform under them never reach into the pages (only the app, which puts
everything together, does). That no module imports one that imports it back is tests/test_layers.py's."""

from __future__ import annotations

from tests.imports import graph

DOMAINS = ("auth", "problems", "drafts", "submissions", "judging", "scores", "admin")
# The one module outside web.pages that may import it: the app includes the page routes.
COMPOSER = "web.app"


def import_graph() -> dict[str, set[str]]:
    return graph(["web"])


def is_page_module(name: str) -> bool:
    return name == "web.pages" or name.startswith("web.pages.")


def test_only_the_app_imports_the_pages() -> None:
    graph = import_graph()
    assert {f"web.{d}" for d in DOMAINS} <= set(graph)
    offending = {
        name: sorted(filter(is_page_module, imported))
        for name, imported in graph.items()
        if not is_page_module(name) and name != COMPOSER
    }
    assert {name: pages for name, pages in offending.items() if pages} == {}
    assert any(is_page_module(m) for m in graph[COMPOSER])  # the check sees page imports
