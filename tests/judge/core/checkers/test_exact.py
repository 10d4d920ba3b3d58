import torch

from judge.core.checkers import exact


def test_equal_tensors_pass_including_nan_and_signed_zero() -> None:
    a = torch.tensor([1.0, float("nan"), 0.0, float("inf")])
    b = torch.tensor([1.0, float("nan"), -0.0, float("inf")])
    assert exact().check("y", a, b) is None


def test_one_bit_off_fails_and_names_the_index() -> None:
    a = torch.zeros(2, 3)
    b = a.clone()
    b[1, 2] = 1e-30
    m = exact().check("y", a, b)
    assert m is not None
    assert m.path == "y"
    assert "[1, 2]" in m.text.en
    assert "1 / 6" in m.text.en


def test_int_tensors_compare_exactly() -> None:
    assert exact().check("n", torch.tensor([1, 2]), torch.tensor([1, 3])) is not None
    assert exact().check("n", torch.tensor([1, 2]), torch.tensor([1, 2])) is None


def test_shape_and_dtype_are_strict() -> None:
    a = torch.zeros(3)
    shape = exact().check("y", a, torch.zeros(1, 3))
    assert shape is not None and "(3,)" in shape.text.en and "(1, 3)" in shape.text.en
    dtype = exact().check("y", a, torch.zeros(3, dtype=torch.float64))
    assert dtype is not None and "torch.float32" in dtype.text.en and "torch.float64" in dtype.text.en


def test_excess_is_zero_where_equal_and_out_elsewhere() -> None:
    a = torch.tensor([1.0, float("nan"), 0.0, float("inf"), 2.0])
    b = torch.tensor([1.0, float("nan"), -0.0, float("inf"), 2.0 + 1e-6])
    assert exact().excess(a, b).tolist() == [0.0, 0.0, 0.0, 0.0, float("inf")]
    assert exact().excess(torch.tensor([1, 2]), torch.tensor([1, 3])).tolist() == [0.0, float("inf")]
