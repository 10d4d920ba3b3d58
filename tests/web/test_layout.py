"""How web/ is put together: the domains (auth, problems, drafts, submissions, scores, admin) and
the platform under them never reach into the pages (only the app, which puts everything
together, does), and no module of web/ imports one that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO_ROOT

WEB = REPO_ROOT / "web"
DOMAINS = ("auth", "problems", "drafts", "submissions", "scores", "admin")
# The one module outside web.pages that may import it: the app includes the page routes.
COMPOSER = "web.app"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def web_modules() -> dict[str, Path]:
    return {
        module_name(p): p
        for p in WEB.rglob("*.py")
        if "node_modules" not in p.parts and "frontend" not in p.parts
    }


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The web modules `path` imports when it runs (imports for type checkers alone left out),
    wherever in the module the import stands: a lazy import in a function is still an edge."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if _under_type_checking(node, parents):
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    found.add(sub)  # `from web.auth import service`: the module
                elif node.module in known:
                    found.add(node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = web_modules()
    known = set(modules)
    return {name: imports_of(path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` (as a path that ends where it starts), or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


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


def test_web_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 30 and any(graph.values())  # the walk found the modules and their imports
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
