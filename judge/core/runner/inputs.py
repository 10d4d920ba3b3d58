"""The inputs a case drew from its `Rng`, recorded in the public cases' job only (the job says
`record_inputs`), so a learner can see what a failing public case fed their code.

A case builds its inputs inside its function; what it draws from the seeded generator is what
varies from case to case, so that is what is recorded: each draw's name as the case's source
spells it (`x = rng.normal(...)` gives "x", `weight=rng.normal(...)` gives "weight",
`y.backward(rng.normal(...))` gives "y.backward(…)"), its shape, its dtype and, when small, its
values. Runs inside the sandbox: imports torch and the case kit only.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import torch

from judge.core.casekit import Rng

MAX_INPUTS = 12  # draws recorded per case
MAX_VALUES = 16  # a draw with more elements is shown by its shape and dtype only
MAX_NAME = 64

_TARGETS = re.compile(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=\s*$")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\($")
_DRAW = re.compile(r"\brng\.(?:normal|uniform|integers)\(")


def _value(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.4g}") if v == v and abs(v) != float("inf") else str(v)
    return v


class InputLog:
    """The draws of one case, in order."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.draws: list[dict[str, Any]] = []
        self._seen: dict[int, int] = {}  # line -> draws taken on it so far

    def record(self, tensor: torch.Tensor, line: int) -> None:
        if len(self.draws) >= MAX_INPUTS:
            return
        nth = self._seen.get(line, 0)
        self._seen[line] = nth + 1
        entry: dict[str, Any] = {
            "name": self._name(line, nth) or f"#{len(self.draws) + 1}",
            "shape": list(tensor.shape),
            "dtype": str(tensor.dtype).removeprefix("torch."),
        }
        if tensor.numel() <= MAX_VALUES:
            entry["values"] = [_value(x) for x in tensor.detach().float().reshape(-1).tolist()]
            if not tensor.is_floating_point():
                entry["values"] = [int(x) for x in tensor.reshape(-1).tolist()]
        self.draws.append(entry)

    def _name(self, line: int, nth: int) -> str | None:
        """The name the case's source gives the `nth` draw on `line` (None if it gives none)."""
        if not 0 < line <= len(self.lines):
            return None
        text = self.lines[line - 1]
        starts = [m.start() for m in _DRAW.finditer(text)]
        if nth >= len(starts):
            return None
        prefix = text[: starts[nth]]
        targets = _TARGETS.match(text)
        if targets is not None:
            names = [n.strip() for n in targets.group(1).split(",")]
            after = prefix[targets.end() :]
            if len(names) == len(starts) and len(names) > 1:
                return names[nth][:MAX_NAME]  # x1, x2 = rng.normal(...), rng.normal(...)
            if len(names) == 1 and not after.strip():
                return names[0][:MAX_NAME]
        keyword = _KEYWORD.search(prefix)
        if keyword is not None:
            return keyword.group(1)[:MAX_NAME]
        call = _CALL.search(prefix.rstrip())
        if call is not None:
            return f"{call.group(1)}(…)"[:MAX_NAME]
        return None


class RecordingRng(Rng):
    """An `Rng` whose draws go into `log` too; the values drawn are the same as an `Rng`'s."""

    def __init__(self, seed: int, log: InputLog) -> None:
        super().__init__(seed)
        self.log = log

    def _caller_line(self) -> int:
        """The line of cases.py that drew (0 when the draw came from another file)."""
        frame = sys._getframe(2)
        return frame.f_lineno if frame.f_code.co_filename == "cases.py" else 0

    def normal(self, *shape: int, **kw: Any) -> torch.Tensor:
        t = super().normal(*shape, **kw)
        self.log.record(t, self._caller_line())
        return t

    def uniform(self, *shape: int, **kw: Any) -> torch.Tensor:
        t = super().uniform(*shape, **kw)
        self.log.record(t, self._caller_line())
        return t

    def integers(self, low: int, high: int, *shape: int) -> torch.Tensor:
        t = super().integers(low, high, *shape)
        self.log.record(t, self._caller_line())
        return t
