"""The course package `qwen/` built from problems' references, for tests that import a
reference which itself imports its parts (`from qwen.norm import GatedRMSNorm`).

    monkeypatch.syspath_prepend(str(course_package(tmp_path, ["218"])))
    layer = importlib.import_module("qwen.linear_attention")   # 218's reference, with its parts
    ...
    forget_course_package()   # at the end of the test (a fixture's teardown)

Each listed problem's reference becomes qwen/<module>.py, and so do the references of the parts
it declares, and theirs (the judge closes over parts the same way).
"""

from __future__ import annotations

import sys
from pathlib import Path

from judge.authoring.package import Problem, find_problem
from tests.paths import REPO_ROOT

PROBLEMS_DIR = REPO_ROOT / "problems"


def _with_parts(ids: list[str], problems_dir: Path) -> list[Problem]:
    """The problems named and every part they reach, each once."""
    found: dict[str, Problem] = {}
    pending = list(ids)
    while pending:
        ref = pending.pop()
        problem = find_problem(ref, problems_dir)
        if problem.id not in found:
            found[problem.id] = problem
            pending.extend(problem.spec.parts)
    return [found[key] for key in sorted(found)]


def course_package(tmp_path: Path, ids: list[str], problems_dir: Path = PROBLEMS_DIR) -> Path:
    """Write qwen/<module>.py for each problem in `ids` and each part it reaches, from their
    references in `problems_dir`; return the folder to put on sys.path. A problem without a
    `module` is an error: it would not be importable as a part either."""
    root = tmp_path / "course"
    for problem in _with_parts(ids, problems_dir):
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
    forget_course_package()
    return root


def forget_course_package() -> None:
    """Drop the imported qwen modules, so that the next test imports its own package (call it
    when a test that imported from the package ends)."""
    for name in [n for n in sys.modules if n == "qwen" or n.startswith("qwen.")]:
        del sys.modules[name]
