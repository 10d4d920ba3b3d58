"""Problem 215 beyond validate: nn.Module.load_state_dict is refused, and the guard never leaks."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from judge.casekit import Rng
from judge.expected import ExpectedStore
from judge.package import Problem
from judge.runner.guards import ForbiddenAPIError
from judge.verdicts import Verdict
from tests.factories import failing_cases, judge_problem, mutant_source, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "215-load-checkpoint")

BUILTIN = """
def load_checkpoint(model, state_dict, prefix="model.", tied=None, strict=True):
    sd = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in state_dict.items()}
    if "lm_head.weight" not in sd:
        sd["lm_head.weight"] = sd["embed_tokens.weight"]
    try:
        result = model.load_state_dict(sd, strict=strict)
    except RuntimeError:
        ON_ERROR
    return {"loaded": sorted(sd), "missing": [], "unexpected": [], "mismatched": []}
"""


@pytest.mark.slow
def test_builtin_load_state_dict_is_forbidden_even_if_the_error_is_caught(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, BUILTIN.replace("ON_ERROR", "pass"), store)
    case = next(c for c in report.cases if c.name == "full_load_bf16")
    assert case.verdict == Verdict.WA
    assert "torch.nn.Module.load_state_dict" in case.message


def test_guard_is_lifted_after_the_call() -> None:
    cases = PROBLEM.cases_module
    original = nn.Module.__dict__["load_state_dict"]

    class Cheat:
        @staticmethod
        def load_checkpoint(model, state_dict, **kwargs):  # type: ignore[no-untyped-def]
            model.load_state_dict({}, strict=False)

    with pytest.raises(ForbiddenAPIError):
        cases.full_load_bf16(Cheat, Rng(0))
    assert nn.Module.__dict__["load_state_dict"] is original
    assert nn.Module.__dict__["_load_from_state_dict"] is not None
    # The case's own model still loads normally once the learner's call is over.
    m = cases.Toy()
    m.load_state_dict(m.state_dict())


def test_statement_example_matches_the_reference() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ref215", PROBLEM.file("reference.py"))
    assert spec and spec.loader
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed_tokens = nn.Embedding(4, 2)
            self.norm = nn.LayerNorm(2)
            self.lm_head = nn.Linear(2, 4, bias=False)
            self.lm_head.weight = self.embed_tokens.weight

    m = Tiny()
    sd = {
        "model.embed_tokens.weight": torch.randn(4, 2, dtype=torch.bfloat16),
        "model.norm.weight": torch.ones(3),
        "model.extra.bias": torch.zeros(2),
    }
    assert ref.load_checkpoint(m, sd, strict=False) == {
        "loaded": ["embed_tokens.weight", "lm_head.weight"],
        "missing": ["norm.bias"],
        "unexpected": ["extra.bias"],
        "mismatched": ["norm.weight: (3,) vs (2,)"],
    }
    assert m.embed_tokens.weight.dtype == torch.float32 and m.lm_head.weight is m.embed_tokens.weight
    with pytest.raises(ValueError) as exc:
        ref.load_checkpoint(m, sd)
    assert all(name in str(exc.value) for name in ("norm.bias", "extra.bias", "norm.weight"))


def test_strict_raises_on_a_single_kind_of_problem() -> None:
    """`missing and unexpected and mismatched` raised only when all three kinds were present."""
    source = mutant_source(PROBLEM, "47:19:boolop")
    assert set(failing_cases(PROBLEM, source)) == {"strict_single_problem"}
    case = next(c for c in PROBLEM.cases if c.name == "strict_single_problem")
    expected = case.fn(source_module("reference", PROBLEM.reference.source()), Rng(case.seed))
    got = case.fn(source_module("mutant", source), Rng(case.seed))
    for kind in ("only_missing", "only_unexpected", "only_mismatched"):
        assert expected[kind]["raised_value_error"] and expected[kind]["model_changed"] == "none", kind
        assert not got[kind]["raised_value_error"] and got[kind]["model_changed"] != "none", kind


def test_state_dict_without_keep_vars_is_declared_equivalent() -> None:
    """Detached views share the parameters' storage: copy_ into them loads the same model."""
    assert failing_cases(PROBLEM, mutant_source(PROBLEM, "15:41:bool")) == {}
    assert {e.id for e in PROBLEM.spec.mutants.equivalent} == {"15:41:bool"}
