"""The scratch cell on problem 204 (local backend): the snippet's output, its value, and the
reference's answer to its public-case-like calls; unlike ones get a reason and no reference."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from judge.authoring.package import Problem
from judge.core.checkers import allclose, exact, ulp
from judge.expected import ExpectedStore
from judge.scratch import Profile, admit, allows_error, public_profile, run_scratch
from tests.factories import local_backend
from tests.web.factories import PKG_204

pytestmark = pytest.mark.slow

PROBLEM = Problem(PKG_204)
WRONG = (PKG_204 / "solutions" / "wrong" / "weight_not_plus_one.py").read_text()


def scratch(code: str, snippet: str, store: ExpectedStore) -> dict[str, Any]:
    backend = local_backend()
    expected = store.get(PROBLEM, backend)
    return run_scratch(PROBLEM, code, snippet, backend, expected, 30.0).to_dict()


def test_prints_the_value_and_the_references_answer_beside_the_learners(store: ExpectedStore) -> None:
    snippet = (
        "x = torch.randn(2, 8)\n"
        "print('shape is', tuple(x.shape))\n"
        "m = RMSNorm(8)\n"
        "m.to(torch.bfloat16)(x.bfloat16())\n"
        "l2norm(x.half())\n"
        "RMSNorm(8)(x)\n"
    )
    out = scratch(PROBLEM.reference.source(), snippet, store)
    assert out["status"] == "ok" and out["verdict"] == "AC", out
    assert out["log"] == "shape is (2, 8)\n"
    assert out["value"]["shape"] == [2, 8] and out["value"]["dtype"] == "torch.float32"
    assert out["value"]["repr"].startswith("tensor([[")
    bf16, fp16, fp32 = out["calls"]
    assert bf16["call"] == "RMSNorm(8)(bfloat16[2, 8])" and bf16["match"] is True
    assert bf16["reference"] == bf16["learner"] and "dtype=torch.bfloat16" in bf16["reference"]
    assert "ulp" in bf16["detail"]["en"]  # 204's public bf16 case's checker
    assert fp16["reference"] is None and fp16["match"] is None
    assert fp16["reason"]["en"] == "no public case uses float16 tensors"
    assert fp32["match"] is True and fp32["difference"] == 0.0


def test_a_wrong_solution_mismatches_and_an_error_names_its_line(store: ExpectedStore) -> None:
    snippet = "m = RMSNorm(8)\ny = m(torch.randn(3, 8))\nprint(y.sum())\n1 / 0\n"
    out = scratch(WRONG, snippet, store)
    assert out["status"] == "error" and out["verdict"] == "RE"
    assert out["line"] == 4 and "ZeroDivisionError" in out["message"] and "scratch.py" in out["message"]
    assert out["log"].startswith("tensor(")
    (call,) = out["calls"]
    assert call["match"] is False
    assert call["difference"] is not None and call["difference"] > 0.1  # weight 0 gives zeros
    assert "allclose" in call["detail"]["en"] or "differ" in call["detail"]["en"]


def test_snippet_syntax_errors_and_unloadable_code_are_reported(store: ExpectedStore) -> None:
    out = scratch(PROBLEM.reference.source(), "x = (1,\n", store)
    assert out["status"] == "ce" and out["line"] == 1 and out["calls"] == []
    out = scratch("def broken(:\n", "1 + 1", store)
    assert out["status"] == "load" and out["verdict"] == "CE"


def profile_204(store: ExpectedStore) -> Profile:
    return public_profile(PROBLEM, store.get(PROBLEM, local_backend()))


def test_public_case_like_means_the_public_cases_dtypes_and_sizes(store: ExpectedStore) -> None:
    profile = profile_204(store)
    assert profile.dtypes == {torch.float32, torch.bfloat16}
    assert profile.max_elements == 4 * 8 * 256  # rmsnorm_bf16's result
    entries = PROBLEM.spec.entry_points

    def fn(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"entry": "l2norm", "kind": "function", "args": list(args), "kwargs": kwargs, "out": None}

    assert admit(fn(torch.zeros(4, 16)), entries, profile) is None
    assert admit(fn(torch.zeros(4, 16), eps=1e-2), entries, profile) is None
    assert "larger" in admit(fn(torch.zeros(9000)), entries, profile)["en"]  # type: ignore[index]
    assert "float64" in admit(fn(torch.zeros(4, dtype=torch.float64)), entries, profile)["en"]  # type: ignore[index]
    assert admit({**fn(torch.zeros(2)), "entry": "_normalize_fp32"}, entries, profile) is not None
    # Many small tensors add up.
    assert admit(fn(*[torch.zeros(8192)] * 5), entries, profile) is not None
    module = {
        "entry": "RMSNorm",
        "kind": "module",
        "init": [10**9],
        "init_kwargs": {},
        "state": {},
        "args": [torch.zeros(2, 8)],
        "kwargs": {},
    }
    # A constructor argument that would make the reference allocate a billion weights.
    assert "larger" in admit(module, entries, profile)["en"]  # type: ignore[index]
    assert admit({**module, "init": [8], "state": {"weight": 3}}, entries, profile) is not None
    assert admit({**module, "init": [8], "state": {"weight": torch.zeros(8)}}, entries, profile) is None


def test_a_forbidden_api_and_a_snippet_that_leaves_early_are_named(store: ExpectedStore) -> None:
    out = scratch(PROBLEM.reference.source(), "torch.nn.functional.rms_norm(torch.ones(2, 8), (8,))", store)
    assert out["status"] == "forbidden" and out["verdict"] == "RE"
    assert "rms_norm" in out["text"]["en"] and "forbids" in out["text"]["en"] and "禁止" in out["text"]["zh"]
    out = scratch(PROBLEM.reference.source(), "import os\nos._exit(3)", store)
    assert out["status"] == "stopped" and out["verdict"] == "RE" and out["calls"] == []
    assert "3" in out["text"]["en"]


def test_a_checkers_tolerance_is_asked_of_the_checker_never_of_its_class() -> None:
    """The scratch cell's checker for a float dtype is one that allows some error: told by the
    Checker protocol (`excess`), so a checker of any class, or an exact one under another
    name, is placed alike."""
    assert not allows_error(exact()) and not allows_error(allclose(rtol=0.0, atol=0.0))
    assert allows_error(allclose()) and allows_error(ulp(max_ulps=1))
