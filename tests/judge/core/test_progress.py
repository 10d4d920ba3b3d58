"""Issue 31 item 4: a judgement says how many cases have reported while its jobs still run, the
public cases' first, then the hidden cases' (a count only)."""

from __future__ import annotations

import time
from pathlib import Path

from judge.authoring.package import Problem
from judge.core.grading import Progress, judge_source
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import PROPERTIES_CASE_F, local_backend, make_package

CASES = (
    """
import torch
from judge.core.casekit import case
"""
    + "".join(
        f"""

@case(points=10, public={i < 3})
def c{i}(impl, rng):
    return {{"y": impl.f(rng.normal(2, 3))}}
"""
        for i in range(6)
    )
    + PROPERTIES_CASE_F
)
SLOW = "import time\n\ndef f(x):\n    time.sleep(0.12)\n    return 2 * x\n"


def test_progress_is_told_case_by_case_while_the_jobs_run(tmp_path: Path) -> None:
    problem = Problem(make_package(tmp_path / "pkg", cases=CASES))
    store = ExpectedStore(tmp_path / "cache")
    seen: list[tuple[Progress, float]] = []
    report = judge_source(
        problem, SLOW, local_backend(), store, "all", progress=lambda p: seen.append((p, time.monotonic()))
    )
    ended = time.monotonic()
    assert report.verdict == Verdict.AC
    told = [p for p, _ in seen]
    public, total = 3, len(report.cases)
    assert told[:public] == [Progress(n, total, "public") for n in range(1, public + 1)]
    assert told[public] == Progress(public, total, "hidden")  # the hidden job starts
    assert told[public + 1 :] == [Progress(n, total, "hidden") for n in range(public + 1, total + 1)]
    # Told as each case reported, not after the job: the first public case well before the end.
    assert ended - seen[0][1] > 0.5


def test_a_run_of_the_public_cases_tells_only_them(tmp_path: Path) -> None:
    problem = Problem(make_package(tmp_path / "pkg", cases=CASES))
    told: list[Progress] = []
    store = ExpectedStore(tmp_path / "cache")
    judge_source(problem, SLOW, local_backend(), store, "public", progress=told.append)
    assert told == [Progress(n, 3, "public") for n in (1, 2, 3)]
