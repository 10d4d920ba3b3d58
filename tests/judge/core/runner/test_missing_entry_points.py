"""A missing entry point fails only the cases that use it (issue 29): judged for real, on problem
213 (route, moe_forward, moe_block) with moe_block left out, and on a small package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.grading import judge_source
from judge.core.report import Report
from judge.core.runner.main import EntryPoints
from judge.core.runner.parts import MissingEntryPointError
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, local_backend, make_package, package_module
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

MOE = Problem(REPO_ROOT / "problems" / "213-moe-routing")
TWO_ENTRIES = '''
import torch
from judge.core.casekit import case

@case(points=50, public=True)
def doubles(impl, rng):
    """f alone"""
    return {"y": impl.f(rng.normal(4, 8))}

@case(points=30)
def triples(impl, rng):
    """g alone"""
    return {"y": impl.g(rng.normal(4, 8))}

@case(points=20)
def expects_an_error(impl, rng):
    """a case that catches what the learner's code raises must not catch a missing entry point"""
    try:
        impl.g(torch.ones(2, 3))
    except Exception:
        return {"raised": True}
    return {"raised": False}
'''
TWO_REFERENCE = (
    "import torch\n\n"
    "def f(x):\n    return x * 2\n\n"
    "def g(x):\n    if x.dim() != 2 or x.shape[-1] == 3:\n        raise ValueError('no')\n    return x * 3\n"
)
TIMES_THREE = (
    '"""乘了 3 / You multiplied by 3."""\n' + "def f(x):\n    return x * 3\n\ndef g(x):\n    return x * 3\n"
)


def _without(source: str, name: str) -> str:
    """`source` with its top-level function `name` taken out."""
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = source.splitlines(keepends=True)
    return "".join(lines[: node.lineno - 1] + lines[node.end_lineno or node.lineno :])


def _uses(problem: Problem, name: str) -> set[str]:
    """The cases that reach for entry point `name`: each run in this process on the reference's
    other entry points, as the runner hands them to a solution that lacks `name`."""
    ref = package_module(problem, "reference.py", "reference")
    present = {n: getattr(ref, n) for n in problem.spec.entry_points if n != name}
    used = set()
    for c in problem.cases:
        try:
            c.fn(EntryPoints([name], **present), Rng(c.seed))
        except MissingEntryPointError:
            used.add(c.name)
    return used


def _judge_sealed(problem: Problem, source: str, store: ExpectedStore) -> Report:
    """As the site judges: the hidden cases in a sealed job."""
    return judge_source(problem, source, local_backend(), store, parts=problem.reference_parts())


def test_moe_without_moe_block_scores_the_other_cases(store: ExpectedStore) -> None:
    report = _judge_sealed(MOE, _without(MOE.reference.source(), "moe_block"), store)
    needs_block = _uses(MOE, "moe_block")
    assert needs_block and len(needs_block) < len(report.cases)
    for c in report.cases:
        if c.name in needs_block:
            assert c.verdict == Verdict.CE and c.score == 0, c.name
            assert c.message.zh == "这个用例用到入口 moe_block，你的代码没有定义它"  # hidden ones too
            assert c.message.en == "this case uses the entry point moe_block, which your code does not define"
        else:
            assert c.verdict == Verdict.AC, (c.name, c.message)
    assert report.verdict == Verdict.CE
    assert report.score == sum(c.max_score for c in report.cases if c.name not in needs_block) > 0
    named = [w for w in report.warnings if "moe_block" in w]
    assert len(named) == 1 and "缺少入口 moe_block" in named[0]
    assert "lacks the entry point(s) moe_block" in named[0]


def test_a_file_with_no_entry_point_is_still_a_ce(store: ExpectedStore) -> None:
    report = _judge_sealed(MOE, "import torch\n\ndef routing(x):\n    return x\n", store)
    assert report.verdict == Verdict.CE and report.score == 0
    assert all(c.verdict == Verdict.CE and not c.ran for c in report.cases)
    message = report.cases[0].message
    assert "缺少入口" in message.zh and "missing entry point(s): route, moe_forward, moe_block" in message.en
    assert not any("lacks the entry point" in w for w in report.warnings)


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pkg = make_package(
        tmp_path_factory.mktemp("problems"),
        problem_id="902",
        cases=TWO_ENTRIES,
        reference=TWO_REFERENCE,
        wrong={"times_three": TIMES_THREE},
    )
    toml = pkg / "problem.toml"
    toml.write_text(toml.read_text().replace('entry_points = ["f"]', 'entry_points = ["f", "g"]'))
    return pkg


def test_only_the_cases_of_the_missing_one_fail(two: Path, store: ExpectedStore) -> None:
    report = judge(two, "def f(x):\n    return x + x\n", store)
    verdicts = {c.name: c.verdict for c in report.cases}
    assert verdicts == {"doubles": Verdict.AC, "triples": Verdict.CE, "expects_an_error": Verdict.CE}
    assert report.score == 50
    assert "entry point g" in report.cases[1].message.en


def test_a_defined_entry_point_that_is_not_callable_is_still_a_ce(two: Path, store: ExpectedStore) -> None:
    report = judge(two, "def f(x):\n    return x + x\n\ng = 3\n", store)
    assert report.verdict == Verdict.CE and report.score == 0
    assert "not callable: g" in report.cases[0].message.en


def test_a_case_frame_names_only_an_entry_point_its_load_declared_missing() -> None:
    from judge.core.execution import case_run
    from judge.core.frames import CaseOutcome

    head = CaseOutcome.parse({"status": "error", "missing_entry": "g", "message": "forged", "time_ms": 1.0})
    believed = case_run(head, {}, ["g"])
    assert believed.missing_entry == "g" and believed.text is not None and "entry point g" in believed.text.en
    forged = case_run(head, {}, ["f"])  # g was not declared missing: a plain error, not the judge's words
    assert forged.missing_entry is None and forged.text is None and forged.message == "forged"


def test_the_scratch_cell_runs_code_that_lacks_an_entry_point(store: ExpectedStore) -> None:
    """As a case does: the snippet runs, and calling the missing one says it is missing."""
    from judge.scratch import run_scratch

    norm = Problem(REPO_ROOT / "problems" / "204-rmsnorm")
    code = _without(norm.reference.source(), "l2norm")
    backend = local_backend()
    expected = store.get(norm, backend)
    ran = run_scratch(norm, code, "RMSNorm(8)(torch.randn(2, 8))", backend, expected, 30.0).to_dict()
    assert ran["status"] == "ok" and ran["value"]["shape"] == [2, 8], ran
    failed = run_scratch(norm, code, "l2norm(torch.randn(2, 8))", backend, expected, 30.0).to_dict()
    assert failed["status"] == "error" and failed["line"] == 1, failed
    assert "missing entry point: l2norm" in str(failed["message"])


def test_a_forged_load_frame_names_only_the_problems_entry_points() -> None:
    """Learner code can write frames: a load frame's `missing` is believed only for the problem's
    own entry points, and a case frame's `missing_entry` only for one of those."""
    from judge.core.backend import Limits, Outcome
    from judge.core.execution import interpret
    from judge.core.protocol import encode_frame, parse_stream

    frames = [
        encode_frame({"kind": "hello", "protocol": 1, "torch": "x", "python": "3"}),
        encode_frame({"kind": "load", "solution": 0, "status": "ok", "missing": ["g", "secret_1234", 5]}),
        encode_frame({"kind": "case", "solution": 0, "case": "a", "status": "error", "missing_entry": "g"}),
        encode_frame(
            {"kind": "case", "solution": 0, "case": "b", "status": "error", "missing_entry": "secret_1234"}
        ),
        encode_frame({"kind": "done"}),
    ]
    data = b"".join(frames)
    limits = Limits(startup_s=5, wall_s=5, cpu_s=10, memory_bytes=1 << 28, log_bytes=4096)
    run = interpret(parse_stream(data), Outcome(data, b"", 0, None, 0.1), 1, limits, ["a", "b"], ["f", "g"])
    solution = run.solutions[0]
    assert solution.missing_entries == ["g"]
    assert solution.cases["a"].missing_entry == "g"
    assert solution.cases["b"].missing_entry is None and solution.cases["b"].text is None
