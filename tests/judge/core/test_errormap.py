"""The error map: each element's excess over what the case's checker allows, by blocks."""

from __future__ import annotations

import math

import torch

from judge.core.checkers import allclose, distribution, exact, ulp
from judge.core.errormap import error_map, render_text


def test_cells_are_error_over_tolerance() -> None:
    e = torch.ones(2, 3)
    got = e.clone()
    got[1, 2] = 1.3  # allowance 0.1 + 0.1·1 = 0.2
    emap = error_map(e, got, allclose(rtol=0.1, atol=0.1))
    assert emap is not None
    assert emap["cells"] == [[0.0, 0.0, 0.0], [0.0, 0.0, 1.5]]
    assert (emap["rows"], emap["cols"], emap["row_axis"], emap["col_axis"]) == (2, 3, "0..0 (2)", "1 (3)")


def test_blocks_keep_their_worst_element() -> None:
    e = torch.zeros(130, 70)
    got = e.clone()
    got[129, 0] = 1.0
    emap = error_map(e, got, allclose(rtol=0.0, atol=0.5))
    assert emap is not None
    assert (emap["row_block"], emap["col_block"]) == (3, 2)
    assert emap["cells"][43][0] == 2.0 and sum(v for row in emap["cells"] for v in row) == 2.0


def test_ulp_cells_count_ulps_over_the_allowance() -> None:
    e = torch.tensor([1.0, 1.5, 2.0], dtype=torch.bfloat16)
    got = (e.view(torch.int16) + torch.tensor([0, 1, 3], dtype=torch.int16)).view(torch.bfloat16)
    emap = error_map(e, got, ulp(max_ulps=2))
    assert emap is not None and emap["cells"] == [[0.0, 0.5, 1.5]]


def test_exact_and_integer_cells_are_out_or_right() -> None:
    emap = error_map(torch.tensor([1, 2, 3]), torch.tensor([1, 5, 3]), allclose())
    assert emap is not None and emap["cells"] == [[0.0, 2.0, 0.0]]
    e = torch.tensor([math.nan, 1.0, 2.0])
    emap = error_map(e, torch.tensor([math.nan, 1.0, 2.5]), exact())
    assert emap is not None and emap["cells"] == [[0.0, 0.0, 2.0]]


def test_nan_and_inf_where_the_reference_is_finite_are_marked() -> None:
    e = torch.tensor([[1.0, 2.0, math.inf, -math.inf, math.nan]])
    got = torch.tensor([[math.nan, math.inf, math.inf, -1e4, math.nan]])
    emap = error_map(e, got, allclose())
    assert emap is not None
    # A finite value where the reference is -inf (a masked score filled with -1e4) is out.
    assert emap["cells"] == [["nan", "inf", 0.0, 2.0, 0.0]]
    assert render_text(emap, "en").splitlines()[1] == "|NI . |"


def test_no_map_without_an_element_by_element_checker() -> None:
    assert error_map(torch.zeros(4, 4), torch.ones(4, 4), distribution()) is None
    assert error_map(torch.zeros(4), torch.zeros(5), allclose()) is None
