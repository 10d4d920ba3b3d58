"""The layers of the house, read from the imports (tests/imports.py):

    web  ->  judge (cli, settings, backends, expected, scratch; authoring)  ->  sandbox  ->  judge.core

`judge.core` is what a judgement needs and what the practice kit copies whole: it imports the
standard library, torch and itself, nothing else. The sandbox implements the backend interface the
core declares and takes nothing else from the judge but how a forked runner child waits and leaves
(`judge.core.children`). Nothing imports the web but the web, and no
module anywhere imports one that imports it back, type-only and lazy imports counted."""

from __future__ import annotations

import sys

from tests.imports import find_cycle, graph, imported_names, modules

ALLOWED_OUTSIDE_CORE = {"torch"}
# The backend interface, and how a forked runner child waits for its job and leaves.
SANDBOX_MAY_TAKE = {"judge.core.backend", "judge.core.errors", "judge.core.children"}


def top(name: str) -> str:
    return name.split(".")[0]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_one_that_imports_it_back() -> None:
    edges = graph()
    assert len(edges) > 150 and sum(map(len, edges.values())) > 300  # the walk saw the house
    # Type-only imports are edges: the course's parts know the job's records only for mypy.
    assert "judge.core.runner.job" in edges["judge.core.runner.parts"]
    cycle = find_cycle(edges)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_core_imports_only_the_standard_library_torch_and_itself() -> None:
    core = {name: path for name, path in modules(["judge"]).items() if name.startswith("judge.core")}
    assert "judge.core.runner.main" in core and "judge.core.grading" in core
    for name, path in sorted(core.items()):
        outside = {
            imported
            for imported in imported_names(path)
            if top(imported) not in sys.stdlib_module_names
            and top(imported) not in ALLOWED_OUTSIDE_CORE
            and not imported.startswith("judge.core")
            and imported != "judge.core"
        }
        assert not outside, f"{name} imports {sorted(outside)}"


def test_the_sandbox_takes_only_the_backend_interface_from_the_judge() -> None:
    for name, imported in sorted(graph().items()):
        if top(name) == "sandbox":
            judge = {m for m in imported if top(m) in ("judge", "web")}
            assert judge <= SANDBOX_MAY_TAKE, f"{name} imports {sorted(judge - SANDBOX_MAY_TAKE)}"


def test_only_the_web_imports_the_web() -> None:
    for name, imported in sorted(graph().items()):
        if top(name) != "web":
            assert not {m for m in imported if top(m) == "web"}, name


def test_the_judge_imports_no_web_framework_and_no_database_layer() -> None:
    frameworks = {"fastapi", "starlette", "sqlalchemy", "alembic", "jinja2", "uvicorn"}
    for name, path in sorted(modules(["judge", "sandbox"]).items()):
        assert not {top(m) for m in imported_names(path)} & frameworks, name
