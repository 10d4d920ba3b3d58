"""facts(): yes-or-no properties computed by the judge from the observed tensors."""

import pytest
import torch

from judge.core.checkers import Mismatch, facts

USABLE = facts("finite", "varied")


def test_facts_are_compared_with_the_references_not_values() -> None:
    ref = torch.randn(24, 8)
    assert USABLE.check("w", ref, torch.rand(24, 8)) is None  # another init: fine
    zeros = USABLE.check("w", ref, torch.zeros(24, 8))
    assert zeros is not None and "every element is the same" in zeros.text.en
    assert "不全相同" in zeros.text.zh
    const = USABLE.check("w", ref, torch.full((24, 8), 0.01))
    assert const is not None
    nan = torch.randn(24, 8)
    nan[3, 3] = float("inf")
    m = USABLE.check("w", ref, nan)
    assert m is not None and "NaN or inf" in m.text.en


def test_a_listed_mistake_matches_a_learner_who_shares_its_facts() -> None:
    # The hint matcher compares a wrong solution's observation (as expected) with the learner's.
    assert USABLE.check("w", torch.zeros(24, 8), torch.zeros(24, 8)) is None


def test_shape_and_dtype_are_strict() -> None:
    ref = torch.randn(24, 8)
    assert "shape" in _en(USABLE.check("w", ref, torch.randn(8, 24)))
    assert "dtype" in _en(USABLE.check("w", ref, torch.randn(24, 8).double()))


def test_a_constant_offset_of_zeros_is_still_constant() -> None:
    # The offset diagnoser shifts a failing tensor by a constant: "varied" cannot be made true
    # that way (a "not all zero" fact could, and would have named a constant term that is not there).
    ref, zeros = torch.randn(24, 8), torch.zeros(24, 8)
    assert USABLE.check("w", ref, zeros - (zeros - ref).mean()) is not None


def test_differs_from_a_given_tensor() -> None:
    seeded = torch.Generator().manual_seed(203).get_state()
    moved_gen = torch.Generator().manual_seed(203)
    torch.rand(3, generator=moved_gen)
    moved = moved_gen.get_state()
    check = facts(differs_from=seeded, differs_what=("种子刚设好时的状态", "the state right after seeding"))
    assert check.check("g", moved, moved.clone()) is None
    m = check.check("g", moved, seeded.clone())
    assert m is not None and "should differ from the state right after seeding" in m.text.en
    # Another shape than the given tensor fails instead of counting as different.
    assert check.check("g", moved[:-1], moved[:-1].clone()) is not None


def test_unknown_facts_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown facts"):
        facts("positive")
    with pytest.raises(ValueError):
        facts()


def _en(m: Mismatch | None) -> str:
    assert m is not None
    return m.text.en
