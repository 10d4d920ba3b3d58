"""Mutants run many to a process and are graded like wrong solutions; one that hangs or breaks
its process is killed and the rest of its batch is still scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.authoring.mutation.generate import generate
from judge.authoring.mutation.run import score_mutants
from judge.authoring.package import Problem
from judge.expected import ExpectedStore
from tests.factories import make_package, shared_backend

pytestmark = pytest.mark.slow

LOOPING = """
def f(x):
    out = x.clone()
    i = 0
    while i < 2:
        out = out + x * 0.5
        i += 1
    return out
"""


def test_a_hanging_mutant_is_killed_and_its_batch_still_scored(tmp_path: Path) -> None:
    problem = Problem(make_package(tmp_path, reference=LOOPING.lstrip(), time_s=5))
    backend = shared_backend()
    expected = ExpectedStore(tmp_path / "cache").get(problem, backend)
    mutants = generate(problem.reference.source())
    hang = next(m for m in mutants if m.change == "i += 1 → i -= 1")
    bound = next(m for m in mutants if m.change == "2 → 3")  # one more round: a different output
    clone = next(m for m in mutants if m.operator == "drop-clone")  # out is rebound: no difference
    score = score_mutants(problem, backend, expected, reference_s=0.01, mutants=[bound, hang, clone])
    by_id = {r.mutant.id: r for r in score.results}
    assert list(by_id) == [bound.id, hang.id, clone.id]
    assert by_id[hang.id].killed and by_id[hang.id].by[0].startswith("TLE"), by_id[hang.id].by
    assert by_id[bound.id].killed and not by_id[clone.id].killed
    assert score.to_dict() == {
        "generated": 3,
        "killed": 2,
        "equivalent": 0,
        "survived": 1,
        "survivors": [{"id": clone.id, "line": clone.line, "change": clone.change}],
    }
