"""The state operators of issue 28: each makes the mistake it stands for (a value memoised across
calls, an argument's default used instead of it, `.view` for `.reshape`, batch row 0 for every
row, a result cached by shape), the mutant runs, and `judge validate` does not enforce them yet."""

from __future__ import annotations

import textwrap
import types

import pytest
import torch

from judge.authoring.mutation import operators
from judge.authoring.mutation.generate import Mutant, generate, generate_state
from judge.authoring.mutation.run import MutantResult, MutationScore
from judge.authoring.package import Problem
from tests.factories import source_module
from tests.paths import REPO_ROOT

NORM = """
import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 + self.weight
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * scale
"""

ROPE = """
import torch


def angles(seq: int, dim: int, theta: float = 10000.0) -> torch.Tensor:
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    return torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)


def rotate(x: torch.Tensor, theta: float = 10000.0) -> torch.Tensor:
    table = angles(x.shape[-2], x.shape[-1], theta)
    return x * table.repeat(1, 2).cos()
"""


def state_mutants(source: str, operator: str) -> list[Mutant]:
    return [m for m in generate_state(textwrap.dedent(source)) if m.operator == operator]


def only(source: str, operator: str) -> Mutant:
    found = state_mutants(source, operator)
    assert len(found) == 1, [(m.id, m.change) for m in found]
    return found[0]


def load(source: str, name: str = "mutant") -> types.ModuleType:
    return source_module(name, textwrap.dedent(source))


# ---------------------------------------------------------------- enforcement and ids


def test_enforced_by_default_and_separable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: validate (generate with its default) makes both groups; `state=False` the
    single-change group alone, generate_state the state group alone; the flag still rules."""
    assert operators.NEW_OPERATORS_ENFORCED is True
    source = textwrap.dedent(NORM)
    single, state = generate(source, state=False), generate_state(source)
    assert state and not {m.operator for m in single} & {m.operator for m in state}
    both = generate(source)
    assert [m.id for m in both] == [m.id for m in generate(source, state=True)]
    assert {m.id for m in both} == {m.id for m in single} | {m.id for m in state}
    monkeypatch.setattr(operators, "NEW_OPERATORS_ENFORCED", False)
    assert [m.id for m in generate(source)] == [m.id for m in single]


def test_feedback_is_counted_per_operator_group() -> None:
    """validate's report says how many state mutants die with a word for the learner."""
    source = textwrap.dedent(NORM)
    mutants = generate(source)
    results = [MutantResult(m, killed=i % 2 == 0) for i, m in enumerate(mutants)]
    score = MutationScore(results, equivalent={})
    groups = score.groups()
    assert groups["single"].generated + groups["state"].generated == len(mutants)
    assert groups["state"].generated == len(generate_state(source))
    assert groups["single"].killed + groups["state"].killed == len(score.killed)
    # A killed mutant without case results stopped its run: the verdict (TLE, a crash) says why.
    assert groups["state"].with_feedback == groups["state"].killed
    assert score.feedback()["by_group"]["state"]["generated"] == groups["state"].generated


def test_ids_are_stable() -> None:
    source = (REPO_ROOT / "problems" / "218-gated-deltanet" / "reference.py").read_text()
    first, second = generate_state(source), generate_state(source)
    assert [(m.id, m.source) for m in first] == [(m.id, m.source) for m in second]


def test_every_state_mutant_of_the_shipped_references_imports() -> None:
    """A mutant that cannot import is no mistake: each one loads with the package's parts and
    still has the package's entry points. Ids are `place:operator` (issue 32), unique."""
    for path in sorted((REPO_ROOT / "problems").glob("*/reference.py")):
        problem = Problem(path.parent)
        mutants = generate_state(path.read_text())
        assert len({m.id for m in mutants}) == len(mutants)
        for m in mutants:
            place, operator = m.id.split("#")[0].rsplit(":", 1)
            assert (place, operator) == (m.place, m.operator)
            assert operator in operators.STATE_OPERATOR_NAMES and "\n" not in m.change
            module = source_module(f"mutant_{problem.id}", m.source, problem.reference_parts())
            missing = [e for e in problem.spec.entry_points if not callable(getattr(module, e, None))]
            assert not missing, (problem.id, m.id, missing)


# ---------------------------------------------------------------- memo


def test_memo_keeps_the_first_calls_value_after_the_weight_changes() -> None:
    m = only(NORM, "memo")
    assert (m.id, m.line, m.col) == ("Norm.forward/0:memo", 13, 16)
    assert m.change == "1.0 + self.weight memoised: the first call's value, kept in self._memo_13_16, reused"
    reference, mutant = load(NORM, "reference"), load(m.source)
    x = torch.randn(2, 3, 4)
    for module in (reference, mutant):
        torch.manual_seed(0)
        norm = module.Norm(4)
        before = norm(x)
        with torch.no_grad():
            norm.weight.add_(1.0)
        after = norm(x)
        if module is reference:
            assert not torch.equal(after, before)
        else:
            torch.testing.assert_close(after, before)  # stale: the scale of the first call
            assert "_memo_13_16" not in dict(norm.named_parameters())  # kept, not registered
    # A fresh module computes its own, so a case calling each module once cannot tell.
    torch.testing.assert_close(mutant.Norm(4)(x), reference.Norm(4)(x))


def test_memo_of_a_function_keeps_a_table_built_from_its_first_arguments() -> None:
    found = state_mutants(ROPE, "memo")
    table = next(m for m in found if m.change.startswith("torch.outer(torch.arange(seq"))
    assert "kept in a module-level" in table.change and "_mutant_memo = {}" in table.source
    reference, mutant = load(ROPE, "reference"), load(table.source)
    torch.testing.assert_close(mutant.angles(4, 6), reference.angles(4, 6))
    assert mutant.angles(8, 6).shape == (4, 3)  # the table of the first call, whatever seq is now


def test_memo_takes_values_of_state_and_sizes_never_of_the_input_data() -> None:
    source = """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            seq = x.shape[1]
            mask = torch.ones(seq, seq, dtype=torch.bool).tril()
            w = self.proj.weight.t()
            h = x.float() @ w
            outputs = []
            for t in range(seq):
                outputs.append(h[:, t].exp())
            return torch.stack(outputs, 1).masked_fill(~mask[-1], 0.0) + torch.finfo(torch.float32).min
    """
    changes = [m.change for m in state_mutants(source, "memo")]
    assert len(changes) == 2, changes  # MEMO_PER_FUNCTION, the largest first
    assert changes[0].startswith("torch.ones(seq, seq, dtype=torch.bool).tril() memoised")
    assert changes[1].startswith("self.proj.weight.t() memoised")


# ---------------------------------------------------------------- default-arg


def test_default_arg_ignores_the_eps_the_constructor_was_given() -> None:
    m = only(NORM, "default-arg")
    assert (m.id, m.line, m.col) == ("Norm.__init__/2:default-arg", 10, 19) and m.change.startswith(
        "eps → 1e-06"
    )
    reference, mutant = load(NORM, "reference"), load(m.source)
    x = torch.full((1, 4), 1e-2)
    assert reference.Norm(4, eps=1e-3).eps == 1e-3 and mutant.Norm(4, eps=1e-3).eps == 1e-6
    torch.testing.assert_close(mutant.Norm(4, eps=1e-3)(x), reference.Norm(4)(x))
    assert not torch.allclose(reference.Norm(4, eps=1e-3)(x), reference.Norm(4)(x))


def test_default_arg_ignores_a_call_argument_passed_on() -> None:
    m = next(m for m in state_mutants(ROPE, "default-arg") if m.line == 11)
    assert "angles(x.shape[-2], x.shape[-1], 10000.0)" in m.source
    reference, mutant = load(ROPE, "reference"), load(m.source)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(mutant.rotate(x, theta=50.0), reference.rotate(x))
    assert not torch.allclose(reference.rotate(x, theta=50.0), reference.rotate(x))


def test_a_none_default_is_put_where_it_is_tested_or_passed_on_only() -> None:
    source = """
    def attend(q, k, mask=None, cache=None):
        if mask is not None:
            k = k.masked_fill(mask[:, None], 0.0)
        out = helper(q, k, cache=cache)
        return out.float(), mask
    """
    changes = sorted(m.change.split(":")[0] for m in state_mutants(source, "default-arg"))
    # tested (`mask is not None`) and passed on (`cache=cache`); not `mask[:, None]`, and not the
    # tuple, where None fails or is a different result rather than the argument ignored
    assert changes == ["cache → None", "mask → None"]


def test_default_arg_takes_the_first_reads_of_each_argument() -> None:
    source = """
    def scaled(x, t=2.0):
        return x / t + x / t + x / t
    """
    found = state_mutants(source, "default-arg")
    assert [m.col for m in found] == [15, 23]  # READS_PER_ARGUMENT of the three


def test_no_default_arg_in_a_private_helper_whose_callers_never_pass_it() -> None:
    source = """
    def _norm(x, eps=1e-6, dim=-1):
        return x / (x.abs().sum(dim) + eps)

    def f(x):
        return _norm(x, dim=0) + _norm(x)
    """
    assert [m.change.split(":")[0] for m in state_mutants(source, "default-arg")] == ["dim → -1"]


# ---------------------------------------------------------------- reshape-view


def test_view_for_reshape_fails_on_a_non_contiguous_tensor() -> None:
    source = """
    import torch

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(x.shape[0], -1)

    def flat(x: torch.Tensor) -> torch.Tensor:
        return torch.reshape(x, (-1,))
    """
    found = state_mutants(source, "reshape-view")
    assert [m.change for m in found] == [
        "x.transpose(1, 2).reshape(x.shape[0], -1) → x.transpose(1, 2).view(x.shape[0], -1)",
        "torch.reshape(x, (-1,)) → x.view((-1,))",
    ]
    mutant = load(found[0].source)
    with pytest.raises(RuntimeError, match="view"):
        mutant.heads(torch.randn(2, 3, 4))
    torch.testing.assert_close(load(found[1].source).flat(torch.ones(2, 3)), torch.ones(6))


def test_reshape_view_is_capped_by_an_evenly_spaced_sample() -> None:
    lines = "\n".join(f"    x{i} = x.reshape(-1, {i + 1})" for i in range(20))
    source = f"def f(x):\n{lines}\n    return x\n"
    found = state_mutants(source, "reshape-view")
    assert len(found) == operators.STATE_CAP
    assert [m.line for m in found] == [2, 4, 7, 9, 12, 14, 17, 19]


# ---------------------------------------------------------------- batch0


def test_batch0_gives_every_row_the_first_rows_result() -> None:
    source = """
    import torch

    def moe(x: torch.Tensor, w_proj: torch.Tensor, gate: torch.Tensor, cos: torch.Tensor, top_k: int):
        return (x @ w_proj) * gate.sum() + cos.sum() * top_k
    """
    m = only(source, "batch0")  # x only: a weight, a parameter after it, a table, an int
    assert (m.id, m.line, m.col) == ("moe/def:batch0", 4, 8)
    assert m.change == "x → x[:1].expand_as(x) at the start of moe: batch row 0 used for every row"
    reference, mutant = load(source, "reference"), load(m.source)
    x, w, g, c = torch.randn(3, 4), torch.randn(4, 5), torch.randn(2), torch.randn(2)
    got, want = mutant.moe(x, w, g, c, 2), reference.moe(x, w, g, c, 2)
    torch.testing.assert_close(got, want[:1].expand_as(want))
    assert not torch.allclose(got, want)
    torch.testing.assert_close(mutant.moe(x[:1], w, g, c, 2), reference.moe(x[:1], w, g, c, 2))


def test_batch0_in_a_method_and_on_an_optional_per_batch_mask() -> None:
    source = """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def forward(self, x, mask=None, eps=1e-6):
            '''x: (batch, seq, dim).'''
            if mask is not None:
                x = x.masked_fill(mask[..., None], 0.0)
            return x.cumsum(1) + eps
    """
    found = state_mutants(source, "batch0")
    assert [m.change.split(" →")[0] for m in found] == ["x", "mask"]
    mutant = load(found[1].source).Attention()
    reference = load(source, "reference").Attention()
    x = torch.randn(2, 3, 4)
    mask = torch.tensor([[True, False, False], [False, False, True]])
    torch.testing.assert_close(mutant(x, mask), reference(x, mask[:1].expand(2, 3)))
    torch.testing.assert_close(mutant(x), reference(x))  # no mask: nothing to get wrong
    # put after the docstring, which stays the docstring
    assert load(found[0].source).Attention.forward.__doc__ == "x: (batch, seq, dim)."


# ---------------------------------------------------------------- shape-cache


def test_shape_cache_returns_the_first_result_for_any_input_of_that_shape() -> None:
    source = """
    import torch

    def scale(x: torch.Tensor, by: float = 2.0) -> torch.Tensor:
        return x * by

    def count(x):
        print(x)
    """
    m = only(source, "shape-cache")  # `count` returns nothing: no cache
    assert (m.id, m.line, m.col) == ("scale/def:shape-cache", 4, 0) and m.change.startswith(
        "scale cached in a module-level dict"
    )
    mutant = load(m.source)
    a, b = torch.ones(2, 3), torch.zeros(2, 3)
    torch.testing.assert_close(mutant.scale(a), a * 2)
    torch.testing.assert_close(mutant.scale(b), a * 2)  # other values, same shape: stale
    torch.testing.assert_close(mutant.scale(b.double(), by=5.0), a * 2)  # dtype, argument ignored
    torch.testing.assert_close(mutant.scale(torch.ones(4)), torch.ones(4) * 2)  # a new shape


def test_shape_cache_shared_by_every_instance_of_a_module() -> None:
    m = next(m for m in state_mutants(NORM, "shape-cache") if "forward" in m.change)
    mutant = load(m.source)
    one, two = mutant.Norm(4), mutant.Norm(4)
    with torch.no_grad():
        two.weight.fill_(1.0)
    x = torch.randn(2, 4)
    torch.testing.assert_close(two(x), one(x))  # the other instance's result: same shape
    reference = load(NORM, "reference")
    other = reference.Norm(4)
    with torch.no_grad():
        other.weight.fill_(1.0)
    torch.testing.assert_close(other(x), 2 * reference.Norm(4)(x))
