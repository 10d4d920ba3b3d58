"""Problem 203 through the real judge: forbidden lookups are named, precise mistakes fail precise cases."""

from __future__ import annotations

import pytest

from judge.expected import ExpectedStore
from judge.package import Problem
from judge.verdicts import Verdict
from tests.factories import failing_cases, judge_problem, mutant_source
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "203-embedding")


def _wrong(stem: str) -> str:
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem).source()


def test_functional_embedding_is_forbidden(store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "rows = self.weight[flat_ids]", "rows = torch.nn.functional.embedding(flat_ids, self.weight)"
    )
    assert "functional.embedding" in src
    report = judge_problem(PROBLEM, src, store)
    lookup = next(c for c in report.cases if c.name == "lookup_fp32")
    assert lookup.verdict == Verdict.WA and "torch.nn.functional.embedding" in lookup.message
    # The head does not use the lookup, so the logits cases still pass.
    assert next(c for c in report.cases if c.name == "logits_fp32").verdict == Verdict.AC


def test_nn_embedding_module_is_forbidden(store: ExpectedStore) -> None:
    src = PROBLEM.reference.source().replace(
        "self.weight = nn.Parameter(table)",
        "self.table = nn.Embedding(vocab_size, dim)\n        self.weight = self.table.weight",
    )
    assert "nn.Embedding" in src
    report = judge_problem(PROBLEM, src, store)
    init = next(c for c in report.cases if c.name == "init")
    assert init.verdict == Verdict.WA and "torch.nn.Embedding" in init.message


def test_bf16_logits_are_caught_only_where_the_inputs_are_bf16(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("logits_rounded_to_bf16"), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    assert failing == {"logits_bf16"}
    case = next(c for c in report.cases if c.name == "logits_bf16")
    assert "bf16_h_bf16_weight" in case.message and "fp32" in case.hint


def test_detached_head_fails_only_the_gradient(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("head_detached"), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["tied_gradient"]
    assert "grads.weight" in failing[0].message
    assert report.score == 100 - failing[0].max_score


def test_starter_scores_zero_with_readable_errors(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message


def test_uninitialised_table_fails_init_whatever_the_memory_held() -> None:
    # torch.empty can hand back a freed buffer that already looks like N(0, 0.02²), so the
    # statistics alone may accept a table nobody drew; the global generator has not moved.
    src = PROBLEM.reference.source().replace("nn.init.normal_(table, mean=0.0, std=0.02)", "pass")
    assert "normal_" not in src
    failing = failing_cases(PROBLEM, src)
    assert list(failing) == ["init"]
    assert any("drew_from_global_generator" in m for m in failing["init"])


@pytest.mark.parametrize("mutant_id", ["21:11:compare", "21:25:int-1"])
def test_min_of_empty_ids_is_caught_only_by_empty_inputs(store: ExpectedStore, mutant_id: str) -> None:
    report = judge_problem(PROBLEM, mutant_source(PROBLEM, mutant_id), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["empty_inputs"]
    assert "min()" in failing[0].message


def test_upper_bound_mutants_are_equivalent_because_indexing_checks_it() -> None:
    # The declared equivalents: weight[flat_ids] raises IndexError for any id >= vocab_size.
    for mutant_id in ("23:26:neighbour", "24:29:compare"):
        assert failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id)) == {}
