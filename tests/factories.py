"""Factories for tests: tiny problem packages and stores built in a temporary folder."""

from __future__ import annotations

import contextlib
import os
import sys
import textwrap
import types
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from judge.authoring.package import Problem
from judge.core.backend import Backend
from judge.core.casekit import Rng
from judge.core.compare import compare
from judge.core.execution import RUNNER
from judge.core.grading import judge_source
from judge.core.interfaces import Which
from judge.core.local import LocalBackend
from judge.core.report import Report
from judge.core.runner.job import PartSource
from judge.core.runner.parts import PartFinder
from judge.expected import ExpectedStore
from tests.paths import REPO_ROOT

# What every package's cases must also do (judge.authoring.properties), for the default `f(x) = 2x`: one
# function called several times with other shapes and dtypes (twice with one shape, so that a
# result cached by shape shows), a one-row input, a transposed view beside its contiguous copy.
# Appended to a cases.py that imports torch and `case`, it makes the package's properties met.
PROPERTIES_CASE_F = """
@case(points=0)
def calls_and_layouts(impl, rng):
    x = rng.normal(4, 6)
    calls = [rng.normal(3, 5), rng.normal(3, 5), rng.normal(1, 7, dtype=torch.float64)]
    return {
        "calls": [impl.f(c) for c in calls],
        "contiguous": impl.f(x.t().contiguous()),
        "transposed_view": impl.f(x.t()),
    }
"""

DEFAULT_CASES = '''
import torch
from judge.core.casekit import case
from judge.core.checkers import allclose

@case(points=60, public=True)
def double(impl, rng):
    """doubles a vector"""
    return {"y": impl.f(rng.normal(4, 8))}

@case(points=40)
def double_bf16(impl, rng):
    return {"y": impl.f(rng.normal(4, 8, dtype=torch.bfloat16))}
'''

DEFAULT_REFERENCE = "def f(x):\n    return x * 2\n"


def make_package(
    root: Path,
    *,
    problem_id: str = "901",
    slug: str = "double",
    cases: str = DEFAULT_CASES,
    reference: str = DEFAULT_REFERENCE,
    starter: str = "def f(x):\n    raise NotImplementedError\n",
    wrong: dict[str, str] | None = None,
    accepted: dict[str, str] | None = None,
    time_s: float = 5,
    memory_mb: int = 256,
    output_kb: int = 16,
    forbidden: tuple[str, ...] = (),
    points: int = 100,
    extra_toml: str = "",
    notes: str | None = None,
) -> Path:
    """`notes`: solutions/notes.toml; None writes a note for the reference and each accepted file."""
    pkg = root / f"{problem_id}-{slug}"
    (pkg / "solutions" / "accepted").mkdir(parents=True, exist_ok=True)
    (pkg / "solutions" / "wrong").mkdir(parents=True, exist_ok=True)
    forbidden_list = ", ".join(f'"{f}"' for f in forbidden)
    (pkg / "problem.toml").write_text(
        textwrap.dedent(f"""\
        id = "{problem_id}"
        slug = "{slug}"
        version = 1
        difficulty = "easy"
        chapter = "tests"
        entry_points = ["f"]
        forbidden = [{forbidden_list}]
        points = {points}
        {extra_toml}
        [title]
        zh = "加倍"
        en = "Double"

        [limits]
        time_s = {time_s}
        memory_mb = {memory_mb}
        output_kb = {output_kb}
        """)
    )
    (pkg / "statement.zh.md").write_text("# 加倍\n\n返回 $2x$。\n")
    (pkg / "starter.py").write_text(starter)
    (pkg / "reference.py").write_text(reference)
    (pkg / "cases.py").write_text(cases)
    for name, src in (
        wrong or {"times_three": '"""乘了 3 / You multiplied by 3."""\ndef f(x):\n    return x * 3\n'}
    ).items():
        (pkg / "solutions" / "wrong" / f"{name}.py").write_text(src)
    for name, src in (accepted or {}).items():
        (pkg / "solutions" / "accepted" / f"{name}.py").write_text(src)
    if notes is None:
        notes = "".join(
            f'[{table}]\nzh = "{table} 为什么对"\nen = "why {table} is right"\n'
            for table in ["reference", *(f"accepted.{name}" for name in accepted or {})]
        )
    (pkg / "solutions" / "notes.toml").write_text(notes)
    return pkg


def local_backend() -> LocalBackend:
    return LocalBackend(code_root=REPO_ROOT, runner=RUNNER)


def judge(problem: Problem | Path, source: str, store: ExpectedStore, which: Which = "all") -> Report:
    """Judged on the local backend, with the parts' references as its parts (as `judge run`)."""
    if isinstance(problem, Path):
        problem = Problem(problem)
    return judge_source(
        problem, source, local_backend(), store, which, parts=problem.reference_parts(), seal_hidden=False
    )


_shared: list[Backend] = []


def shared_backend() -> Backend:
    """One backend for the whole session's problem tests: Docker's fork servers where an engine
    and the image answer (always under CI; the sandbox learners get), else the local backend.
    A new local runner costs about 2 s a judgement, a fork server's child a few tens of ms."""
    if not _shared:
        from judge.backends import BackendUnavailable, make_backend
        from judge.settings import SandboxSettings

        try:
            backend, _ = make_backend("docker", SandboxSettings(mode="fork", pool_size=2))
        except BackendUnavailable as exc:
            # Under CI the problem tests must run in the sandbox learners get, never quietly not.
            if os.environ.get("JUDGE_REQUIRE_DOCKER") == "1":
                raise AssertionError(f"JUDGE_REQUIRE_DOCKER=1 but Docker is not usable: {exc}") from exc
            backend = local_backend()
        _shared.append(backend)
    return _shared[0]


def close_shared_backend() -> None:
    while _shared:
        _shared.pop().close()


def judge_problem(problem: Problem, source: str, store: ExpectedStore, which: Which = "all") -> Report:
    """A shipped problem judged as on the server (see shared_backend), with the parts'
    references as its parts, and its hidden cases' messages kept, as `judge run` shows an
    author (the site seals them: tests/adversarial/test_hidden_cases_apart.py)."""
    return judge_source(
        problem, source, shared_backend(), store, which, parts=problem.reference_parts(), seal_hidden=False
    )


@contextlib.contextmanager
def _serving(parts: Sequence[PartSource]) -> Iterator[None]:
    """The parts importable (qwen.norm, ...) while a source runs, as the runner serves them; the
    names a source imported stay bound after, the course package leaves sys.modules."""
    if not parts:
        yield
        return
    finder = PartFinder()
    finder.install(list(parts))
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "qwen" or n.startswith("qwen.")]:
            del sys.modules[name]


def source_module(name: str, source: str, parts: Sequence[PartSource] = ()) -> types.ModuleType:
    """A reference, starter or solution as a module of this process: package unit tests call it
    directly instead of paying a runner start per check. `parts`: what its imports of the
    course package get (a problem's reference_parts())."""
    module = types.ModuleType(name)
    with _serving(parts):
        exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


def package_module(problem: Problem, path: str, name: str) -> types.ModuleType:
    return source_module(name, problem.read(path), problem.reference_parts())


def mutant_source(problem: Problem, mutant_id: str) -> str:
    """The source of one mutant of the package's reference, by its id (judge.authoring.mutation)."""
    from judge.authoring.mutation.generate import generate

    found = [m.source for m in generate(problem.reference.source()) if m.id == mutant_id]
    if not found:
        raise KeyError(f"{problem.id} has no mutant {mutant_id}")
    return found[0]


def failing_cases(problem: Problem, source: str) -> dict[str, list[str]]:
    """Run every case in this process on the reference and on `source`: the cases that differ."""
    ref = source_module("reference", problem.reference.source(), problem.reference_parts())
    impl = source_module("candidate", source, problem.reference_parts())
    failing = {}
    for c in problem.cases:
        mismatches = compare(c, c.fn(ref, Rng(c.seed)), c.fn(impl, Rng(c.seed)))
        if mismatches:
            failing[c.name] = [str(m) for m in mismatches]
    return failing


def failing_case_names(problem: Problem, source: str, only: Collection[str] | None = None) -> list[str]:
    """The cases (of `only`, if given) that `source` fails, each in a fresh module, in case
    order; a case that raises fails too (`failing_cases` lets its exception through)."""
    ref = source_module("reference", problem.reference.source(), problem.reference_parts())
    impl = source_module("candidate", source, problem.reference_parts())
    failing = []
    for c in problem.cases:
        if only is not None and c.name not in only:
            continue
        try:
            got = c.fn(impl, Rng(c.seed))
        except Exception:
            failing.append(c.name)
            continue
        if compare(c, c.fn(ref, Rng(c.seed)), got):
            failing.append(c.name)
    return failing
