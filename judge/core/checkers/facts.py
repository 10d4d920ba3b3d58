"""Yes-or-no facts about a tensor, computed by the judge and compared with the reference's.

Some promises are about a property, not about values: a fresh layer's weights are finite and
not all equal (any initialisation will do, but all-zero weights never learn), torch's global
generator moved while a module was built. A case must not compute such a fact itself: it runs
in the learner's process, where a patched torch or a module that looks at its caller can make
`bool(torch.isfinite(w).all())` say anything. It returns the tensor instead, and this checker
computes each named fact from the observed tensors, outside that process, for the reference's
tensor and for the learner's, and requires the same answers. (Compared with the reference's
answers, not with fixed ones, so that a listed mistake whose facts a learner shares is still
recognised as that mistake.)

Shape and dtype must match exactly, as for every checker. The facts:

- "finite": every element is finite (no NaN, no inf);
- "varied": the elements are not all equal (all zeros, or one constant everywhere, is not);
- `differs_from=t`: the tensor is not `t` (same shape and dtype, and equal): e.g. the global
  generator's state after building a module differs from its state right after seeding it.
  A tensor of another shape than `t` fails the check instead of counting as different.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import torch

from judge.core.checkers.base import Mismatch, structural_mismatch
from judge.core.texts import Text


def _finite(t: torch.Tensor) -> bool:
    return bool(torch.isfinite(t).all()) if t.is_floating_point() else True


def _varied(t: torch.Tensor) -> bool:
    flat = t.reshape(-1)
    if flat.numel() < 2:
        return False
    # NaN equals nothing, so a tensor holding a NaN counts as varied here; "finite" names it.
    return not bool((flat == flat[0]).all())


# name: (the test, what it says when true, when false), each text in both languages.
FACTS: dict[str, tuple[Callable[[torch.Tensor], bool], Text, Text]] = {
    "finite": (
        _finite,
        Text("每个元素都是有限值", "every element is finite"),
        Text("有 NaN 或 inf", "it holds NaN or inf"),
    ),
    "varied": (
        _varied,
        Text("元素不全相同", "the elements are not all equal"),
        Text("所有元素都相同（比如全是 0）", "every element is the same (all zeros, say)"),
    ),
}


GIVEN = Text("给定的张量", "the given tensor")


@dataclass(frozen=True, eq=False)
class Facts:
    names: tuple[str, ...] = ()
    differs_from: torch.Tensor | None = None
    # What `differs_from` stands for, in both languages ("the state right after seeding").
    differs_what: Text = GIVEN
    name: str = "facts"
    # Not element by element: an element's error means nothing here (for error maps and tools).
    elementwise: ClassVar[bool] = False

    def describe(self) -> str:
        said = list(self.names) + (["differs_from"] if self.differs_from is not None else [])
        return f"facts ({', '.join(said)})"

    def excess(self, expected: torch.Tensor, got: torch.Tensor) -> None:
        return None  # a fact is about the whole tensor, not about any element of it

    def facts(self, t: torch.Tensor) -> list[tuple[str, bool]]:
        out = [(name, FACTS[name][0](t)) for name in self.names]
        if self.differs_from is not None:
            out.append(("differs_from", not torch.equal(t, self.differs_from)))
        return out

    def check(self, path: str, expected: torch.Tensor, got: torch.Tensor) -> Mismatch | None:
        if (m := structural_mismatch(path, expected, got)) is not None:
            return m
        if self.differs_from is not None and (m := structural_mismatch(path, self.differs_from, got)):
            return m
        e, g = expected.detach(), got.detach()
        wrong = [
            (name, want)
            for (name, want), (_, have) in zip(self.facts(e), self.facts(g), strict=True)
            if want != have
        ]
        if not wrong:
            return None
        return Mismatch(path, Text.join([self._said(name, want) for name, want in wrong], sep="; "))

    def _said(self, name: str, want: bool) -> Text:
        if name == "differs_from":
            what = self.differs_what
            if want:
                return Text(
                    f"应与{what.zh}不同，你的与它相同", f"should differ from {what.en}; yours equals it"
                )
            return Text(f"应与{what.zh}相同，你的不同", f"should equal {what.en}; yours differs")
        _, true, false = FACTS[name]
        expected, got = (true, false) if want else (false, true)
        return Text(f"应当{expected.zh}，你的{got.zh}", f"expected: {expected.en}; yours: {got.en}")


def facts(
    *names: str, differs_from: torch.Tensor | None = None, differs_what: tuple[str, str] | None = None
) -> Facts:
    """A checker of yes-or-no facts: `facts("finite", "varied")`, `facts(differs_from=state,
    differs_what=("种子刚设好时的状态", "the state right after seeding"))`."""
    unknown = [n for n in names if n not in FACTS]
    if unknown:
        raise ValueError(f"unknown facts {unknown}: known are {sorted(FACTS)}")
    if not names and differs_from is None:
        raise ValueError("facts() needs at least one fact")
    what = Text(*differs_what) if differs_what is not None else GIVEN
    kept = None if differs_from is None else differs_from.detach().clone()
    return Facts(tuple(names), kept, what)
