import math

import pytest
import torch

from judge.core.observations import MAX_DEPTH, ObservationError, Unobservable, decode, encode


def test_round_trip_of_a_mixed_tree() -> None:
    value = {
        "y": torch.ones(2, 3),
        "n": 3,
        "f": float("nan"),
        "b": True,
        "s": "hi",
        "d": torch.bfloat16,
        "none": None,
        "seq": [torch.zeros(1), (1, 2.5)],
    }
    node, tensors = encode(value)
    back = decode(node, tensors)
    assert torch.equal(back["y"], value["y"])
    assert back["n"] == 3 and back["b"] is True and back["s"] == "hi" and back["none"] is None
    assert math.isnan(back["f"]) and back["d"] is torch.bfloat16
    assert back["seq"][1] == (1, 2.5)


def test_views_and_autograd_are_not_carried() -> None:
    base = torch.arange(12.0, requires_grad=True)
    node, tensors = encode({"v": base.reshape(3, 4)[:, 1]})
    t = tensors[node["v"][0][1]["k"]]
    assert not t.requires_grad and t.is_contiguous() and t.tolist() == [1.0, 5.0, 9.0]


def test_unknown_types_become_unobservable() -> None:
    node, tensors = encode({"x": object()})
    assert decode(node, tensors) == {"x": Unobservable("builtins.object")}


def test_too_deep_is_refused() -> None:
    v: list[object] = []
    for _ in range(MAX_DEPTH + 2):
        v = [v]
    with pytest.raises(ObservationError):
        encode(v)


@pytest.mark.parametrize(
    "node",
    [
        {"t": "tensor", "k": "9"},
        {"t": "int", "v": "3"},
        {"t": "float", "v": "1e999x"},
        {"t": "dict", "v": [["a", {"t": "none"}], ["a", {"t": "none"}]]},
        {"t": "dict", "v": [[1, {"t": "none"}]]},
        {"t": "dtype", "v": "torch.nn"},
        {"t": "pickle", "v": "..."},
        "not a node",
    ],
)
def test_malformed_manifests_are_refused(node: object) -> None:
    with pytest.raises(ObservationError):
        decode(node, {})


def test_unreferenced_tensors_are_refused() -> None:
    with pytest.raises(ObservationError):
        decode({"t": "none"}, {"0": torch.ones(1)})
