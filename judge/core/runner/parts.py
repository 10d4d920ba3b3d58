"""The course package inside the runner: a job's parts become importable modules (qwen.norm, ...).

A meta-path finder serves each part's source from the job, so `from qwen.norm import RMSNorm`
in a solution runs the code the judge chose for that part (the learner's own accepted
solution on the site), and any package above it (`qwen`) is an empty package made on the
fly. Nothing is written to disk and no installed module can stand in for a part: the finder
comes first on sys.meta_path. Which parts a solution imported is recorded, so the report can
say whose code the model was built from.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.core.runner.job import PartSource


class MissingPartError(ImportError):
    """A solution imported a part whose problem the learner has not solved yet."""

    def __init__(self, part: PartSource) -> None:
        super().__init__(
            f"第 {part.problem} 题的零件 {part.module} 还没有通过的解答 / "
            f"part {part.module} (problem {part.problem}) has no accepted solution yet"
        )
        self.problem = part.problem
        self.module = part.module


class _PartLoader(importlib.abc.Loader):
    def __init__(self, finder: PartFinder, name: str) -> None:
        self.finder = finder
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        part = self.finder.parts.get(self.name)
        if part is None:  # a package above the parts: nothing to run
            return
        if part.source is None:
            raise MissingPartError(part)
        self.finder.used.append(part.problem)
        code = compile(part.source, part.filename, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class PartFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.parts: dict[str, PartSource] = {}
        self.packages: set[str] = set()
        self.used: list[str] = []  # problem ids, in the order their modules were imported

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in self.parts:
            part = self.parts[fullname]
            spec = importlib.machinery.ModuleSpec(fullname, _PartLoader(self, fullname), origin=part.filename)
            spec.has_location = True  # __file__ is the part's course path, as tracebacks show it
            return spec
        if fullname in self.packages:
            return importlib.machinery.ModuleSpec(fullname, _PartLoader(self, fullname), is_package=True)
        return None

    def install(self, parts: Sequence[PartSource]) -> None:
        """Serve `parts` from now on, forgetting any module of the course package a previous
        solution of the same job imported (each solution gets its parts fresh)."""
        from judge.core.runner.tracebacks import register_source

        names = {p.module for p in parts}
        packages = {p.module.rsplit(".", i)[0] for p in parts for i in range(1, p.module.count(".") + 1)}
        course = names | packages | set(self.parts)
        if course:
            below = tuple(n + "." for n in course)
            for name in [n for n in sys.modules if n in course or n.startswith(below)]:
                del sys.modules[name]
        self.parts = {p.module: p for p in parts}
        self.packages = packages
        self.used = []
        for part in parts:
            if part.source is not None:
                register_source(part.filename, part.source)
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)


FINDER = PartFinder()


class MissingEntryPointError(BaseException):
    """A case used an entry point the solution does not define. A BaseException: a case that
    expects the learner's code to raise (`except Exception`) must not take it for that."""

    def __init__(self, name: str) -> None:
        super().__init__(f"missing entry point: {name}")  # Python's own kind of words
        self.name = name
