"""What a problem's `cases.py` is written with: the `@case` decorator, `Rng`, and helpers.

A case is a function of `(impl, rng)` that builds inputs, calls the solution's entry points
(`impl.RMSNorm`, `impl.l2norm`, ...) and returns observations: tensors, numbers, bools,
strings, dtypes and lists/tuples/dicts of them. The same function runs on the reference (in
a trusted run) and on the learner's code (in the sandbox); the judge compares the two sets
of observations outside the sandbox.

    from judge.core.casekit import case, load_params
    from judge.core.checkers import ulp

    @case(points=10, public=True, checker=ulp(max_ulps=1, max_fraction=0.01))
    def bf16_forward(impl, rng):
        "bf16 输入：统计量须在 fp32 中计算 / bf16 input: statistics in fp32"
        m = impl.RMSNorm(64)
        load_params(m, weight=rng.normal(64, std=0.1))
        return {"y": m(rng.normal(4, 64, std=3.0, dtype=torch.bfloat16))}

This module is imported inside the sandbox, so it depends only on torch and `judge.core.checkers`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from judge.core.checkers import Checker, allclose
from judge.core.texts import EMPTY, Text, parse_author_text

CaseFn = Callable[[Any, "Rng"], Any]


@dataclass(frozen=True)
class Case:
    name: str
    fn: CaseFn
    points: int
    public: bool
    checker: Checker
    # Checkers for particular observations, by path ("y", "grads.weight"); others use `checker`.
    checkers: Mapping[str, Checker] = field(default_factory=dict)
    seed: int = 0
    # The docstring, "中文 / English", parsed where the case is declared (parse_author_text).
    description: Text = EMPTY

    def checker_for(self, path: str) -> Checker:
        # The longest prefix wins: "grads" covers "grads.weight" unless that is named itself.
        best, best_len = self.checker, -1
        for prefix, chk in self.checkers.items():
            if (path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")) and len(
                prefix
            ) > best_len:
                best, best_len = chk, len(prefix)
        return best


_data_dir: str | None = None


def use_data_dir(path: str | None) -> None:
    """Where the runner wrote this job's data files (called by the runner, not by cases)."""
    global _data_dir
    _data_dir = path


def data_path(name: str) -> Path:
    """A file or folder the package declares in problem.toml's `data`, as the cases see it in
    the sandbox: e.g. `data_path("checkpoint")` for a checkpoint folder shipped with the job."""
    if _data_dir is None:
        raise CaseSetupError(
            f"this job carries no data files (asked for {name!r}): declare it in problem.toml"
        )
    path = Path(_data_dir, name)
    if not path.exists():
        raise CaseSetupError(f"data file {name!r} is not in this job: declare it in problem.toml's data")
    return path


def case_seed(name: str) -> int:
    """A fixed seed per case name, the same in every process and on every machine."""
    return zlib.crc32(name.encode("utf-8"))


def case(
    *,
    points: int,
    public: bool = False,
    checker: Checker | None = None,
    checkers: Mapping[str, Checker] | None = None,
    seed: int | None = None,
) -> Callable[[CaseFn], CaseFn]:
    """Declare a case. The function's name is the case's name; its docstring its description."""
    if not isinstance(points, int) or points < 0:
        raise ValueError("case points must be a non-negative integer")

    def register(fn: CaseFn) -> CaseFn:
        fn.__judge_case__ = Case(  # type: ignore[attr-defined]
            name=fn.__name__,
            fn=fn,
            points=points,
            public=public,
            checker=checker if checker is not None else allclose(),
            checkers=dict(checkers or {}),
            seed=case_seed(fn.__name__) if seed is None else seed,
            description=parse_author_text(" ".join((fn.__doc__ or "").split())),
        )
        return fn

    return register


def collect_cases(module: ModuleType) -> list[Case]:
    """The cases a module declares, in the order they are defined."""
    found = [v.__judge_case__ for v in vars(module).values() if hasattr(v, "__judge_case__")]
    names = [c.name for c in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate case names: {', '.join(dupes)}")
    return found


class Rng:
    """Seeded random inputs for one case. Learner code never sees this generator."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.generator = torch.Generator().manual_seed(seed)

    def normal(
        self, *shape: int, std: float = 1.0, mean: float = 0.0, dtype: torch.dtype = torch.float32
    ) -> torch.Tensor:
        t = torch.randn(shape, generator=self.generator, dtype=torch.float32) * std + mean
        return t.to(dtype)

    def uniform(
        self, *shape: int, low: float = 0.0, high: float = 1.0, dtype: torch.dtype = torch.float32
    ) -> torch.Tensor:
        t = torch.rand(shape, generator=self.generator, dtype=torch.float32) * (high - low) + low
        return t.to(dtype)

    def integers(self, low: int, high: int, *shape: int) -> torch.Tensor:
        return torch.randint(low, high, shape, generator=self.generator)


class CaseSetupError(Exception):
    """The learner's objects do not have what the case needs (for example a parameter name)."""


def load_params(module: torch.nn.Module, **values: torch.Tensor) -> torch.nn.Module:
    """Copy values into the module's parameters by name, with a clear error for a wrong name or shape."""
    params = dict(module.named_parameters())
    for name, value in values.items():
        if name not in params:
            have = ", ".join(sorted(params)) or "none"
            raise CaseSetupError(
                f"你的模块没有名为 '{name}' 的参数 / "
                f"your module has no parameter named '{name}' (it has: {have})"
            )
        p = params[name]
        if p.shape != value.shape:
            raise CaseSetupError(
                f"参数 '{name}' 的形状是 {tuple(p.shape)}，应为 {tuple(value.shape)} / "
                f"parameter '{name}' has shape {tuple(p.shape)}, expected {tuple(value.shape)}"
            )
        with torch.no_grad():
            p.copy_(value.to(p.dtype))
    return module


def param_table(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter by name, detached: for checking names, shapes, dtypes and initial values."""
    return {name: p.detach().clone() for name, p in module.named_parameters()}


# What a call that may refuse its input did, as an observation compared exactly: the class of
# the exception it raised, or that it returned. One spelling for every package, so that the
# judge can say what went wrong (judge.core.diagnose.refusals) without knowing the package.
RETURNED = "returned normally"
RAISED = "raised "


def outcome(call: Callable[[], object], expected: type[Exception] = ValueError) -> str:
    """`"raised ValueError"`, `"raised RuntimeError"`, ... or `"returned normally"`. A subclass
    of `expected` (a learner's `class CacheFull(ValueError)`) is named as `expected` is."""
    try:
        call()
    except expected:
        return RAISED + expected.__name__
    except Exception as exc:  # any class is an answer to compare, not a crash of the case
        return RAISED + type(exc).__name__
    return RETURNED


def read_outcome(observed: object) -> tuple[bool, str] | None:
    """(raised, exception class name or "") for an `outcome()` string; None for anything else."""
    if observed == RETURNED:
        return False, ""
    if isinstance(observed, str) and observed.startswith(RAISED) and observed[len(RAISED) :].isidentifier():
        return True, observed[len(RAISED) :]
    return None
