"""Problem 203 through the real judge: forbidden lookups are named, precise mistakes fail precise
cases, and the init's distribution is judged from the observed table, outside the learner's process."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
import torch

from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.checkers.distribution import ks_statistic
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source, package_module, source_module
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
    assert any("global_generator_after_init" in m for m in failing["init"])


def test_the_reference_draws_what_the_statement_promises() -> None:
    """The init case compares a learner's table with the reference's sample, so the reference's
    draw itself must be N(0, 0.02²): one-sample tests against the promise, at 6 standard errors."""
    init = next(c for c in PROBLEM.cases if c.name == "init")
    w = (
        init.fn(package_module(PROBLEM, "reference.py", "reference"), Rng(init.seed))["weight"]
        .double()
        .reshape(-1)
    )
    n = w.numel()
    assert abs(float(w.mean())) < 6 * 0.02 / math.sqrt(n)
    assert abs(float(w.std()) - 0.02) < 6 * 0.02 / math.sqrt(2 * n)
    # A "sample" of the exact N(0, 0.02²) quantiles; the one-sample bound at the same tail (DKW).
    p = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    quantiles = 0.02 * math.sqrt(2.0) * torch.erfinv(2 * p - 1)
    assert ks_statistic(w, quantiles)[0] < 3.22 * math.sqrt(1 / n)


@pytest.fixture
def torch_methods_restored() -> Iterator[None]:
    """The cheating wrong solutions replace Tensor methods when loaded in this process."""
    saved = {
        name: torch.Tensor.__dict__[name] for name in ("mean", "std", "any") if name in torch.Tensor.__dict__
    }
    try:
        yield
    finally:
        for name in ("mean", "std", "any"):
            if name in saved:
                setattr(torch.Tensor, name, saved[name])
            elif name in torch.Tensor.__dict__:
                delattr(torch.Tensor, name)


# The init case of version 2, which computed the statistics itself, in the learner's process.
OLD_INIT = """
import torch

def init(impl):
    torch.manual_seed(203)
    m = impl.TiedEmbedding(1000, 64)
    wf = dict(m.named_parameters())["weight"].detach().double()
    return {
        "mean_to_3_decimals": round(float(wf.mean()), 3) + 0.0,
        "std_to_3_decimals": round(float(wf.std()), 3),
        "bell_shaped": 0.66 < float((wf.abs() < 0.02).double().mean()) < 0.705,
    }
"""


@pytest.mark.parametrize("stem", ["init_std_one", "init_zeros"])
def test_a_module_that_answers_its_callers_fooled_statistics_computed_in_the_case(
    stem: str, torch_methods_restored: None
) -> None:
    old_case: dict[str, object] = {}
    exec(compile(OLD_INIT, "cases.py", "exec"), old_case)  # the cheats look for calls from cases.py
    cheat = source_module(stem, _wrong(stem))
    said = old_case["init"](cheat)  # type: ignore[operator]
    assert said == {"mean_to_3_decimals": 0.0, "std_to_3_decimals": 0.02, "bell_shaped": True}
    # What the case observes now is the table itself: std 1 or all zeros, whatever it is asked.
    init = next(c for c in PROBLEM.cases if c.name == "init")
    weight = init.fn(cheat, Rng(init.seed))["weight"]
    assert float(weight.std()) > 0.9 if stem == "init_std_one" else bool((weight == 0).all())


@pytest.mark.parametrize("stem", ["init_std_one", "init_zeros"])
def test_a_module_that_answers_its_callers_fails_init_with_its_hint(store: ExpectedStore, stem: str) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem)
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["init"] and report.score == 92
    assert "weight" in failing[0].message and failing[0].hint == wrong.hint()


@pytest.mark.parametrize("mutant_id", ["TiedEmbedding.embed/0:compare", "TiedEmbedding.embed/0:int-1"])
def test_min_of_empty_ids_is_caught_only_by_empty_inputs(store: ExpectedStore, mutant_id: str) -> None:
    report = judge_problem(PROBLEM, mutant_source(PROBLEM, mutant_id), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["empty_inputs"]
    assert "min()" in failing[0].message


def test_upper_bound_mutants_are_equivalent_because_indexing_checks_it() -> None:
    # The declared equivalents: weight[flat_ids] raises IndexError for any id >= vocab_size.
    for mutant_id in ("TiedEmbedding.embed/0.1:neighbour", "TiedEmbedding.embed/0.2:compare#2"):
        assert failing_cases(PROBLEM, mutant_source(PROBLEM, mutant_id)) == {}
