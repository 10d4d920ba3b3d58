"""What a diagnoser looks at: one failing tensor, the reference's, and the case's notion of close.

Diagnosers run in the judge (outside the learner's process), from the expected and the got
tensor alone. A relation between them ("got is expected shifted by one") holds when the
case's own checker accepts the transformed tensor: the tolerance that failed the case is the
one that confirms the explanation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from judge.core.checkers import Checker
from judge.core.checkers.base import FLOAT_DTYPES, exact_excess
from judge.core.texts import Text

FLOATS = FLOAT_DTYPES
# Relations are tried on tensors up to this size; larger ones are sampled by the checkers anyway.
MAX_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class Diagnosis:
    kind: str  # "shifted", "scaled", ...: stable, for the page's icons and for counting
    strength: float  # 0..1: how specific the evidence is; the strongest are shown first
    text: Text  # the sentence with its evidence, in both languages


@dataclass
class Probe:
    path: str
    expected: torch.Tensor
    got: torch.Tensor
    checker: Checker
    # The rest of the learner's observations, by path (for "equals the input x" and the like).
    others: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"`{self.path}`" if self.path else "the output"

    def close(self, expected: torch.Tensor, got: torch.Tensor) -> bool:
        """The case's checker accepts `got` for `expected` (same shape and dtype needed)."""
        if got.shape != expected.shape:
            return False
        if got.dtype != expected.dtype:
            got = got.to(expected.dtype)
        return self.checker.check(self.path, expected.contiguous(), got.contiguous()) is None

    def bad(self) -> torch.Tensor:
        """Element by element, where got is out of what the checker allows (same shapes only);
        for a checker that does not judge element by element, where got is not equal."""
        e, g = self.expected, self.got.to(self.expected.dtype)
        excess = self.checker.excess(e, g)
        return (exact_excess(e, g) if excess is None else excess) > 1

    def usable(self) -> bool:
        return 0 < self.expected.numel() <= MAX_ELEMENTS
