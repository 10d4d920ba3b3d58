"""Several eps values keyed by name (`eps_<value>` beside the default call): right only for the
default eps."""

from __future__ import annotations

from tests.judge.core.diagnose.factories import diagnoses, kinds, tensor


def test_the_eps_given_is_ignored() -> None:
    # As problem 204's l2norm case: {"y": default eps, "eps_1e-2": eps=1e-2}.
    y, y_eps = tensor(3, 16), tensor(3, 16, seed=1)
    (d, *_) = diagnoses({"y": y, "eps_1e-2": y_eps}, {"y": y, "eps_1e-2": y.clone()})
    assert d.kind == "default_eps_only"
    assert "the result with the default eps (`y`) is right" in d.text.en
    assert "`eps_1e-2` equals the default eps's result exactly" in d.text.en
    assert "默认 eps 的结果（`y`）是对的" in d.text.zh and "没有用上" in d.text.zh


def test_another_eps_moves_the_result_differently() -> None:
    y, y_eps = tensor(3, 16), tensor(3, 16, seed=1)
    (d, *_) = diagnoses({"y": y, "eps=1e-5": y_eps}, {"y": y, "eps=1e-5": y_eps * 1.5})
    assert d.kind == "default_eps_only"
    assert "inside the root" in d.text.en and "equals the default" not in d.text.en


def test_an_explicit_default_key_and_several_values() -> None:
    ys = [tensor(2, 8, seed=i) for i in range(3)]
    want = {"eps_default": ys[0], "eps_1e-3": ys[1], "eps_0.1": ys[2]}
    got = {"eps_default": ys[0], "eps_1e-3": ys[1], "eps_0.1": ys[2] + 1}
    (d, *_) = diagnoses(want, got)
    assert d.kind == "default_eps_only" and "`eps_0.1`" in d.text.en and "`eps_1e-3`" not in d.text.en


def test_not_when_the_default_call_is_wrong_too() -> None:
    y, y_eps = tensor(3, 16), tensor(3, 16, seed=1)
    assert "default_eps_only" not in kinds({"y": y, "eps_1e-2": y_eps}, {"y": y + 1, "eps_1e-2": y_eps + 1})


def test_not_without_a_key_that_names_an_eps_value() -> None:
    # "dim3_eps" (problem 204's parameter table) names no value.
    y, z = tensor(3, 16), tensor(3, 16, seed=1)
    assert "default_eps_only" not in kinds({"y": y, "dim3_eps": z}, {"y": y, "dim3_eps": z + 1})
