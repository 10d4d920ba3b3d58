"""The import graph of this repository's own packages (judge, sandbox, web), read from the source.

Every import statement is an edge wherever it stands: at the top, inside a function (a lazy import
still runs), or under `if TYPE_CHECKING:` (a type-only import still ties the modules together for
a reader and for mypy). `from pkg import name` is an edge to `pkg.name` when that is a module."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from tests.paths import REPO_ROOT

PACKAGES = ("judge", "sandbox", "web")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Module name -> file, for the Python modules of `packages` (the front end's tools left out)."""
    return {
        module_name(p): p
        for package in packages
        for p in (REPO_ROOT / package).rglob("*.py")
        if not {"node_modules", "frontend", "migrations"} & set(p.parts)
    }


def imported_names(path: Path) -> set[str]:
    """Every module name `path` imports, outside modules included (`torch`, `os.path`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def graph(packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules of `packages` it imports (by module, not by the names it takes)."""
    known = modules(packages)
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for imported in imported_names(path):
            if imported in known:
                targets.add(imported)
            elif imported.rpartition(".")[0] in known:  # `from judge.core.casekit import case`
                targets.add(imported.rpartition(".")[0])
        edges[name] = targets - {name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `edges` (as a path that ends where it starts), or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(edges.get(node, ())):
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

    for start in sorted(edges):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None
