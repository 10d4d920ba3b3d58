"""A checker that is not one of ours gets a true error map and true diagnoses from the Checker
protocol alone: nothing may read a checker's name or tolerances."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.casekit import Case
from judge.core.checkers import Checker, Mismatch
from judge.core.diagnose import Probe, diagnose_case
from judge.core.errormap import error_map
from judge.core.texts import Text


@dataclass(frozen=True)
class Banded:
    """|got - expected| <= width, NaN matching nothing. Named and shaped like none of ours on
    purpose; the tolerances it would have had by default (allclose's) are far tighter."""

    width: float
    name: str = "banded"
    elementwise: ClassVar[bool] = True

    def describe(self) -> str:
        return f"banded (±{self.width:g})"

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
        err = (got.to(torch.float64) - expected.to(torch.float64)).abs() / self.width
        return err.nan_to_num(nan=math.inf)

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        if got.shape != expected.shape or got.dtype != expected.dtype:
            return Mismatch(path, Text("形状或类型不同", "shape or dtype differs"))
        if bool((self.excess(expected, got) > 1).any()):
            return Mismatch(path, Text(f"超出 ±{self.width:g}", f"beyond ±{self.width:g}"))
        return None


BAND = Banded(0.1)


def _case(checker: Checker) -> Case:
    return Case(name="c", fn=lambda impl, rng: None, points=1, public=True, checker=checker, seed=0)


def test_it_satisfies_the_protocol() -> None:
    checker: Checker = BAND  # mypy checks the protocol here
    assert checker.elementwise


def test_its_error_map_is_its_own_excess() -> None:
    e = torch.zeros(2, 4)
    got = e.clone()
    got[0, 1], got[1, 3] = 0.05, 0.3  # half the band; three times it
    emap = error_map(e, got, BAND)
    assert emap is not None
    assert emap["cells"] == [[0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0]]


def test_its_error_map_marks_nan_and_draws_out_by_any_measure_as_out() -> None:
    e = torch.tensor([[0.0, math.nan, 1.0]])
    got = torch.tensor([[math.nan, math.nan, 1.0]])
    emap = error_map(e, got, BAND)
    assert emap is not None
    # NaN where the reference is finite is marked; its NaN against NaN is out (inf) by its rule.
    assert emap["cells"] == [["nan", 2.0, 0.0]]


def test_the_probe_reads_wrong_elements_from_its_excess() -> None:
    e = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    got = e + torch.tensor([[0.05, -0.09, 0.0], [0.2, 0.0, -0.5]])
    probe = Probe("y", e, got, BAND)
    assert probe.bad().tolist() == [[False, False, False], [True, False, True]]
    assert probe.close(e, e + 0.05) and not probe.close(e, e + 0.2)


def test_a_diagnosis_follows_its_band() -> None:
    # Off everywhere by less than the band, and wrong only where the reference is 0: only a
    # probe that asks this checker sees that the zeros alone are wrong.
    e = torch.randn(4, 16, generator=torch.Generator().manual_seed(0))
    e[:, 12:] = 0.0
    got = e + 0.05
    got[:, 12:] = 0.5
    assert diagnose_case(_case(BAND), {"y": e}, {"y": got})[0].kind == "wrong_where_zero"


def test_a_relation_is_confirmed_by_its_check() -> None:
    e = torch.randn(4, 16, generator=torch.Generator().manual_seed(1))
    got = 2.0 * e + 0.01
    assert diagnose_case(_case(BAND), {"y": e}, {"y": got})[0].kind == "scaled"
