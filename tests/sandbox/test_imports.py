"""How sandbox/ is put together: no module imports one that imports it back (lazy imports in
functions and imports for type checkers count too), and nothing in it imports the judge or
the web platform: a backend knows processes and containers, not problems or users."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO_ROOT

SANDBOX = REPO_ROOT / "sandbox"


def imported_modules(path: Path) -> set[str]:
    """Every module `path` names in an import statement, wherever the statement stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from sandbox import wire`
    return found


def sandbox_graph() -> dict[str, set[str]]:
    modules = {f"sandbox.{p.stem}": p for p in SANDBOX.glob("*.py") if p.stem != "__init__"}
    return {name: imported_modules(path) & modules.keys() - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path that comes back to where it started, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph[node]):
            cycle = visit(nxt, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_sandbox_module_imports_one_that_imports_it_back() -> None:
    graph = sandbox_graph()
    assert {"sandbox.engine", "sandbox.docker_cold", "sandbox.docker_warm"} <= graph.keys()
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cold_path_and_the_pool_share_the_engine_not_each_other() -> None:
    graph = sandbox_graph()
    assert (
        "sandbox.engine" in graph["sandbox.docker_cold"] and "sandbox.engine" in graph["sandbox.docker_warm"]
    )
    assert "sandbox.docker_warm" not in graph["sandbox.docker_cold"]
    assert "sandbox.docker_cold" not in graph["sandbox.docker_warm"]
    assert not graph["sandbox.engine"] & {
        "sandbox.docker_backend",
        "sandbox.docker_cold",
        "sandbox.docker_warm",
    }


def test_the_sandbox_never_imports_the_judge_or_the_web_platform() -> None:
    for path in SANDBOX.glob("*.py"):
        outside = {m for m in imported_modules(path) if m.split(".")[0] in ("judge", "web")}
        assert not outside, f"{path.name} imports {sorted(outside)}"
