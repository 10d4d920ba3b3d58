"""Problem 206 through the real judge: case counts, the bf16 gradient case, transformers' own
block accepted as it is (issue 29: no checks or conversions beyond it), initialisation and state
across calls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_case_names, failing_cases, judge_problem, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "206-swiglu")


def test_case_counts() -> None:
    cases = PROBLEM.cases
    assert [c.name for c in cases if c.public] == ["parameters", "worked_example", "forward_fp32"]
    assert sum(not c.public for c in cases) >= 6
    # Rules of this problem alone, which production code failed, are gone (issue 29).
    assert not {"bad_sizes_rejected", "wrong_hidden_rejected", "input_dtype_converted"} & {
        c.name for c in cases
    }


def test_transformers_own_block_passes_every_case() -> None:
    src = (
        "import torch.nn as nn\n"
        "from transformers import Qwen3_5TextConfig\n"
        "from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5MLP\n\n"
        "class SwiGLU(Qwen3_5MLP):\n"
        "    def __init__(self, hidden_size, intermediate_size):\n"
        "        config = Qwen3_5TextConfig(hidden_size=hidden_size, hidden_act='silu')\n"
        "        super().__init__(config, intermediate_size)\n"
    )
    assert failing_cases(PROBLEM, src) == {}


@pytest.mark.slow
def test_fp32_output_from_a_bf16_module_is_a_dtype_error(store: ExpectedStore) -> None:
    # Computing in fp32 is fine; forgetting to round back to the module's dtype is not.
    src = PROBLEM.reference.source().replace(
        "        shape = x.shape\n",
        "        xf = x.float()\n"
        "        g = F.linear(xf, self.gate_proj.weight.float())\n"
        "        u = F.linear(xf, self.up_proj.weight.float())\n"
        "        return F.linear(F.silu(g) * u, self.down_proj.weight.float())\n"
        "        shape = x.shape\n",
    )
    assert "xf = x.float()" in src
    report = judge_problem(PROBLEM, src, store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    assert set(failing) == {"forward_bf16", "backward_bf16", "one_module_many_calls"}
    assert "dtype" in failing["backward_bf16"].message


INIT_LINE = "        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)\n"


@pytest.mark.parametrize(
    ("init", "fails"),
    [
        ("nn.init.normal_(layer.weight, std=0.02)", False),  # Qwen's initializer_range: any init will do
        ("nn.init.xavier_uniform_(layer.weight)", False),
        ("nn.init.zeros_(layer.weight)", True),
        ("nn.init.constant_(layer.weight, 0.01)", True),  # as symmetric as zeros
    ],
)
def test_any_initialisation_of_finite_varied_weights_is_right(init: str, fails: bool) -> None:
    src = PROBLEM.reference.source().replace(
        INIT_LINE,
        INIT_LINE
        + f"        for layer in (self.gate_proj, self.up_proj, self.down_proj):\n            {init}\n",
    )
    assert init in src
    failing = failing_cases(PROBLEM, src)
    assert list(failing) == (["parameters"] if fails else [])
    if fails:
        assert all("not all equal" in m for m in failing["parameters"])


@pytest.fixture
def tensor_any_restored() -> Iterator[None]:
    """The cheating wrong solution replaces Tensor.any when loaded in this process."""
    saved = torch.Tensor.__dict__.get("any")
    try:
        yield
    finally:
        if saved is not None:
            torch.Tensor.any = saved  # type: ignore[method-assign]
        elif "any" in torch.Tensor.__dict__:
            del torch.Tensor.any


# The check of version 2, which computed the flag itself, in the learner's process.
OLD_PARAMETERS = """
import torch

def initialised(impl):
    a, b = impl.SwiGLU(8, 24), impl.SwiGLU(16, 40)
    return all(bool(torch.isfinite(p).all()) and bool((p != 0).any()) for m in (a, b) for p in m.parameters())
"""


def test_all_zero_weights_that_answer_their_caller_no_longer_pass(tensor_any_restored: None) -> None:
    old_case: dict[str, object] = {}
    exec(compile(OLD_PARAMETERS, "cases.py", "exec"), old_case)  # the cheat looks for calls from cases.py
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "init_zeros")
    cheat = source_module("init_zeros", wrong.source())
    assert old_case["initialised"](cheat) is True  # type: ignore[operator]
    # Now the case returns the weights and the judge finds them all equal.
    failing = failing_cases(PROBLEM, wrong.source())
    assert list(failing) == ["parameters"]


@pytest.mark.slow
def test_all_zero_weights_get_their_hint(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "init_zeros")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = [c for c in report.cases if c.verdict != Verdict.AC]
    assert [c.name for c in failing] == ["parameters"] and report.score == 92
    assert failing[0].hint == wrong.hint()


# ---------------------------------------------------------------- state across calls (version 4)

FORWARD_HEAD = "        shape = x.shape\n"
STATE_CASES = (
    "one_module_many_calls",
    "weights_edited_between_calls",
    "non_contiguous_input",
    "two_modules_interleaved",
)


@pytest.mark.parametrize(
    ("change", "cases"),
    [
        # A flattening .view needs a contiguous x: the transposed and sliced views raise.
        ("        x = x.view(-1, x.shape[-1]).view(x.shape)\n", ["non_contiguous_input"]),
        # The gate's weight copied on the first call and kept: stale after the optimiser step,
        # load_state_dict and .to(torch.bfloat16).
        (
            "        if '_w_gate' not in self.__dict__:\n"
            "            self.__dict__['_w_gate'] = 1.0 * self.gate_proj.weight\n"
            "        gate = F.linear(x, self.__dict__['_w_gate'])\n"
            "        return self.down_proj(F.silu(gate) * self.up_proj(x))\n",
            ["one_module_many_calls", "weights_edited_between_calls"],
        ),
        # The result kept per input shape and returned for any later input of that shape.
        (
            "        _SEEN = globals().setdefault('_SEEN', {})\n"
            "        if x.shape[:-1] in _SEEN:\n"
            "            return _SEEN[x.shape[:-1]]\n"
            "        _SEEN[x.shape[:-1]] = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))\n",
            ["weights_edited_between_calls", "non_contiguous_input", "two_modules_interleaved"],
        ),
    ],
)
def test_state_mistakes_fail_their_cases(change: str, cases: list[str]) -> None:
    src = PROBLEM.reference.source().replace(FORWARD_HEAD, change + FORWARD_HEAD)
    assert change in src
    assert failing_case_names(PROBLEM, src, STATE_CASES) == cases


@pytest.mark.slow
def test_weights_cached_on_the_first_call_get_their_hint(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "weights_cached_first_call")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    assert set(failing) == {"one_module_many_calls", "weights_edited_between_calls"}
    assert failing["weights_edited_between_calls"].hint == wrong.hint()
