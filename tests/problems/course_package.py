"""The course package `qwen/` built from part problems' references, for tests that import a
reference which itself imports its parts (`from qwen.norm import GatedRMSNorm`).

    root = course_package(tmp_path, ["218"])   # qwen/norm.py, qwen/conv.py, ... under root
    monkeypatch.syspath_prepend(str(root))

Each listed problem's reference becomes qwen/<module>.py, and so do the references of the parts
it declares, and theirs (the judge closes over parts the same way). A test that wants to import
the listed problem's reference itself loads it from its own file (see `load_reference`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from judge.package import Problem, find_problem
from tests.paths import REPO_ROOT

PROBLEMS_DIR = REPO_ROOT / "problems"


def _with_parts(ids: list[str]) -> list[Problem]:
    """The problems named and every part they reach, each once."""
    found: dict[str, Problem] = {}
    pending = list(ids)
    while pending:
        ref = pending.pop()
        problem = find_problem(ref, PROBLEMS_DIR)
        if problem.id not in found:
            found[problem.id] = problem
            pending.extend(problem.spec.parts)
    return [found[key] for key in sorted(found)]


def course_package(tmp_path: Path, ids: list[str]) -> Path:
    """Write qwen/<module>.py for each problem in `ids` and each part it reaches, from their
    references; return the folder to put on sys.path. A problem without a `module` is an error:
    it would not be importable as a part either."""
    root = tmp_path / "course"
    for problem in _with_parts(ids):
        module = problem.spec.module
        if module is None:
            raise ValueError(f"problem {problem.id} declares no module in its problem.toml")
        target = root.joinpath(*module.split(".")).with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in target.relative_to(root).parents:
            init = root / folder / "__init__.py"
            if folder != Path(".") and not init.exists():
                init.write_text("", encoding="utf-8")
        target.write_text(problem.reference.source(), encoding="utf-8")
    # A stale qwen from another test's tmp folder must not answer the next import.
    for name in [n for n in sys.modules if n == "qwen" or n.startswith("qwen.")]:
        del sys.modules[name]
    return root


def load_reference(problem_id: str) -> ModuleType:
    """Import a problem's reference.py as a module of its own (its `qwen.*` imports resolve
    through sys.path, so call course_package and prepend its folder first)."""
    problem = find_problem(problem_id, PROBLEMS_DIR)
    name = f"reference_{problem.id}"
    spec = importlib.util.spec_from_file_location(name, problem.reference.path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
