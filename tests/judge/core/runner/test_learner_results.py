"""What learner code does with its results is the learner's doing, never the judge's failure.

Two ways it used to be blamed on the judge, each judged on the local backend and in Docker:

- a `done` frame written by learner code into the result stream, then exit 0: the judge took
  the run for finished and gave every case it lacked SE ("the runner did not report this case");
- a tensor of a dtype the result stream cannot carry (float8, uint16/32/64, complex, ...) or a
  nested tensor: the runner failed while writing the frame and exited 70, and every case got
  "did it close or write to the runner's stream".

Both are now RE, with a plain message; the second one per case, the other cases judged. So is
a string the stream cannot carry (a lone surrogate is not UTF-8), which failed the runner too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.authoring.package import Problem
from judge.core.backend import Backend
from judge.core.execution import case_run
from judge.core.frames import CaseOutcome
from judge.core.grading import judge_source
from judge.core.report import Report
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import local_backend, make_package

# dtype (or kind of tensor) -> the words the message must name it by
UNRETURNABLE = {
    "float8_e4m3fn": "torch.float8_e4m3fn",
    "float8_e5m2": "torch.float8_e5m2",
    "float8_e4m3fnuz": "torch.float8_e4m3fnuz",
    "float8_e5m2fnuz": "torch.float8_e5m2fnuz",
    "uint16": "torch.uint16",
    "uint32": "torch.uint32",
    "uint64": "torch.uint64",
    "complex32": "torch.complex32",
    "complex64": "torch.complex64",
    "complex128": "torch.complex128",
    "qint8": "torch.qint8",
    "nested": "nested",
    "nested_jagged": "nested",
    "sparse": "sparse",
}
CASES = "import torch\nfrom judge.core.casekit import case\n" + "".join(
    f"\n@case(points=10, public=True)\ndef {kind}(impl, rng):\n    return {{'y': impl.f({kind!r})}}\n"
    for kind in ("float32", "lone_surrogate", *UNRETURNABLE)
)
REFERENCE = "import torch\ndef f(kind):\n    return torch.zeros(3)\n"
LEARNER = """
import torch
def f(kind):
    if kind == 'nested':
        return torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
    if kind == 'nested_jagged':
        return torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)], layout=torch.jagged)
    if kind == 'sparse':
        return torch.zeros(3).to_sparse()
    if kind == 'lone_surrogate':
        return '\\ud800'
    if kind == 'qint8':
        return torch.quantize_per_tensor(torch.zeros(3), 0.1, 0, torch.qint8)
    return torch.zeros(3, dtype=getattr(torch, kind))
"""
# Only the `done` frame, written to every pipe the process holds (the result stream is one),
# then the process ends as a finished runner would.
FORGED_DONE = """
import json, os, struct
def f(x):
    head = json.dumps({'kind': 'done'}).encode()
    frame = struct.pack('>4sIQ', b'JDG1', len(head), 0) + head
    for fd in map(int, os.listdir('/proc/self/fd')):
        try:
            if fd > 2 and os.readlink(f'/proc/self/fd/{fd}').startswith('pipe:'):
                os.write(fd, frame)
        except OSError:
            pass
    os._exit(0)
"""
RUNNER_BLAMED = ("runner failed", "did it close", "did not report")


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Problem]:
    root = tmp_path_factory.mktemp("learner-results")
    return {
        "dtypes": Problem(make_package(root, problem_id="902", cases=CASES, reference=REFERENCE)),
        "double": Problem(make_package(root, problem_id="903")),
    }


@pytest.fixture(params=["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.slow])])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "local":
        yield local_backend()
    else:
        yield request.getfixturevalue("docker_backend")


def judged(problem: Problem, source: str, backend: Backend, tmp_path: Path) -> Report:
    return judge_source(problem, source, backend, ExpectedStore(tmp_path / "expected"))


def test_a_forged_done_frame_then_exit_is_the_learners_runtime_error(
    problems: dict[str, Problem], backend: Backend, tmp_path: Path
) -> None:
    report = judged(problems["double"], FORGED_DONE, backend, tmp_path)
    assert report.verdict == Verdict.RE and report.score == 0
    for c in report.cases:
        assert c.verdict == Verdict.RE, (c.name, c.verdict, c.message)
        assert not [w for w in RUNNER_BLAMED if w in c.message.en], c.message.en
    first = report.cases[0].message
    assert "exit code 0" in first.en and "退出码 0" in first.zh


def test_a_tensor_that_cannot_be_returned_is_a_runtime_error_of_its_case(
    problems: dict[str, Problem], backend: Backend, tmp_path: Path
) -> None:
    report = judged(problems["dtypes"], LEARNER, backend, tmp_path)
    by_name = {c.name: c for c in report.cases}
    assert by_name["float32"].verdict == Verdict.AC  # the run went on past every bad case
    for kind, named in UNRETURNABLE.items():
        c = by_name[kind]
        assert c.verdict == Verdict.RE, (kind, c.verdict, c.message)
        assert named in c.message.en and named in c.message.zh, (kind, c.message)
        assert "cannot be returned" in c.message.en and "不能返回" in c.message.zh, (kind, c.message)
        assert not [w for w in RUNNER_BLAMED if w in c.message.en], (kind, c.message)
    surrogate = by_name["lone_surrogate"]
    assert surrogate.verdict == Verdict.RE and "UnicodeEncodeError" in surrogate.message.en
    assert not [w for w in RUNNER_BLAMED if w in surrogate.message.en], surrogate.message
    assert report.verdict == Verdict.RE


def test_the_judge_words_an_unreturnable_tensor_in_each_language() -> None:
    run = case_run(CaseOutcome("error", 1.5, unreturnable="torch.uint16"), {})
    assert (run.status, run.time_ms) == ("error", 1.5) and run.text is not None
    assert run.text.en.startswith("your code returned a tensor of dtype torch.uint16")
    assert "float32" in run.text.en and "bfloat16" in run.text.en  # what it may return instead
    assert run.text.zh.startswith("你的代码返回了") and "cannot" not in run.text.zh
    nested = case_run(CaseOutcome("error", unreturnable="nested"), {}).text
    assert nested is not None and "nested tensor" in nested.en and "嵌套" in nested.zh
    # A frame is the learner's to forge: anything else there is not taken as a name.
    head = {"status": "error", "unreturnable": "<b>x</b>", "message": "m"}
    forged = case_run(CaseOutcome.parse(head), {})
    assert (forged.text, forged.message) == (None, "m")


# The line an error points at travels as a field of each case (the page marks it in the editor).
SYNTAX_ERROR = "def f(x):\n    return (x\n\n\ny = 1\n"
RAISES_IN_CASE = "def f(x):\n    y = x * 2\n    raise ValueError('no')\n"
RAISES_AT_IMPORT = "import torch\n\nraise RuntimeError('at import')\n"


@pytest.mark.parametrize(
    ("source", "verdict", "line"),
    [(SYNTAX_ERROR, Verdict.CE, 2), (RAISES_IN_CASE, Verdict.RE, 3), (RAISES_AT_IMPORT, Verdict.RE, 3)],
    ids=["compile", "case", "import"],
)
def test_an_errors_line_is_in_the_report(
    problems: dict[str, Problem], backend: Backend, tmp_path: Path, source: str, verdict: Verdict, line: int
) -> None:
    report = judged(problems["double"], source, backend, tmp_path)
    public, hidden = report.to_dict()["cases"]
    assert report.to_dict()["version"] == 2
    assert (public["verdict"], public["line"]) == (str(verdict), line), public
    assert public["missing_problem"] is None
    if verdict == Verdict.RE and "import" not in source:
        # The hidden case ran apart, sealed: nothing its process wrote is told, the line neither.
        assert (hidden["verdict"], hidden["line"]) == ("RE", None), hidden
    else:
        # It never ran: the public job's load failure stands for it, its line too.
        assert (hidden["verdict"], hidden["line"]) == (str(verdict), line), hidden


def test_a_case_that_passes_or_fails_without_an_error_has_no_line(
    problems: dict[str, Problem], tmp_path: Path
) -> None:
    report = judged(problems["double"], "def f(x):\n    return x * 3\n", local_backend(), tmp_path)
    assert [c["line"] for c in report.to_dict()["cases"]] == [None, None]
