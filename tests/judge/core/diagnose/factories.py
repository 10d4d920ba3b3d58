"""Cases and tensors for the diagnosers' tests."""

from __future__ import annotations

from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.checkers import Checker, allclose
from judge.core.diagnose import Diagnosis, diagnose_case


def make_case(checker: Checker | None = None, checkers: dict[str, Checker] | None = None) -> Case:
    return Case(
        name="c",
        fn=lambda impl, rng: None,
        points=1,
        public=True,
        checker=checker or allclose(),
        checkers=checkers or {},
        seed=0,
    )


def tensor(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def kinds(expected: Any, got: Any, case: Case | None = None) -> list[str]:
    return [d.kind for d in diagnose_case(case or make_case(), expected, got)]


def diagnoses(expected: Any, got: Any, case: Case | None = None) -> list[Diagnosis]:
    return diagnose_case(case or make_case(), expected, got)
