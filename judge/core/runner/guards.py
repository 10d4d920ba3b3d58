"""Forbidden APIs: replace each named function or class with a guard that records the call.

A problem that asks the learner to write RMSNorm forbids `torch.nn.functional.rms_norm`
and `torch.nn.RMSNorm`. Every alias of the object under `torch` is replaced (for example
`torch.nn.RMSNorm` and `torch.nn.modules.normalization.RMSNorm`). A call raises
`ForbiddenAPIError` and is also recorded, so that a solution that swallows the exception
still fails the case. The operator of the same name in `torch.ops.aten` is guarded too.

The guards keep no path back to what they replace (no `__wrapped__`, no closure over the
original, a guarded class is not its subclass), but torch keeps doors of its own that no
guard can close (`torch._C._VariableFunctions`, whose attributes are read-only). This is a
teaching guard that stops the ordinary calls, not a security boundary.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


class ForbiddenAPIError(RuntimeError):
    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is forbidden in this problem")
        self.api = name


# id(object) -> every (module, attribute) under torch that holds it. Built once per process,
# before any job (a warm sandbox builds it ahead of time): finding the aliases of a forbidden
# object is then a lookup, not a walk over a few thousand modules.
_Index = dict[int, list[tuple[Any, str]]]
_index: _Index | None = None
_indexed_modules: set[str] = set()
_names_seen: set[str] = set()  # every name in sys.modules at the last scan


def index_torch() -> _Index:
    """Index the torch modules loaded now (and any loaded since the last call)."""
    global _index
    if _index is None:
        _index = {}
    for mod_name in _added_modules():
        module = sys.modules.get(mod_name)
        if mod_name in _indexed_modules or not (mod_name == "torch" or mod_name.startswith("torch.")):
            continue
        _indexed_modules.add(mod_name)
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in items:
            _index.setdefault(id(value), []).append((module, attr))
    return _index


def _added_modules() -> list[str]:
    """The names sys.modules gained since the last call (all of them at the first).

    A job's rescan looks at the newest entries only: a dict keeps its insertion order, so
    what was imported since the last scan is at its end. Walking all of a few thousand
    modules would write each one's reference count, and in a fork server's child every such
    write copies a page of the server's memory (4 ms of faults in a judgement of 20 ms).
    When the count does not add up (a module was removed, or removed and imported again),
    it looks at everything.
    """
    added = []
    for name in reversed(sys.modules):
        if name in _names_seen:
            break
        added.append(name)
    if len(sys.modules) != len(_names_seen) + len(added):
        _names_seen.clear()
        added = list(sys.modules)
    _names_seen.update(added)
    return added


class Guards:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def reset(self) -> None:
        self.calls.clear()

    def _record(self, name: str) -> None:
        if name not in self.calls:
            self.calls.append(name)

    def install(self, dotted_names: list[str]) -> None:
        originals = []
        for dotted in dotted_names:
            try:
                original = resolve(dotted)
            except (ImportError, AttributeError):
                # Not in this torch (the kit runs on torch 2.1+; rms_norm came in 2.4): nothing
                # to call, so nothing to forbid. `judge validate` checks the names exist here.
                continue
            originals.append((dotted, original))
        index = index_torch()  # after resolving: that may have imported more of torch
        for dotted, original in originals:
            guarded = self._guard(dotted, original)
            for module, attr in index.get(id(original), []):
                # The index may be older than a module's attribute: replace only what still
                # holds the original.
                if getattr(module, attr, None) is original:
                    setattr(module, attr, guarded)
            if not isinstance(original, type):
                _guard_aten(dotted, guarded)

    def _guard(self, dotted: str, original: Any) -> Any:
        """A stand-in that records the call and raises. It keeps no path back to the original:
        no `__wrapped__` (as functools.wraps would set, and inspect.unwrap follows), no
        closure over it, and a guarded class is not a subclass of the original (whose
        `__mro__` would hand it back)."""
        guards = self

        if isinstance(original, type):

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                guards._record(dotted)
                raise ForbiddenAPIError(dotted)

            namespace = {"__init__": __init__, "__module__": original.__module__, "__doc__": original.__doc__}
            # The original's own bases and metaclass: isinstance(m, torch.nn.Module) still holds.
            guarded: type = type(original)(original.__name__, original.__bases__, namespace)
            guarded.__qualname__ = original.__qualname__
            return guarded

        def forbidden(*args: Any, **kwargs: Any) -> Any:
            guards._record(dotted)
            raise ForbiddenAPIError(dotted)

        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            value = getattr(original, attr, None)
            if isinstance(value, str):
                setattr(forbidden, attr, value)
        return forbidden


def _guard_aten(dotted: str, guarded: Any) -> None:
    """The operator of the same name in torch.ops.aten (torch.rms_norm -> aten.rms_norm) is the
    same kernel one attribute away: guard it too. (torch._C._VariableFunctions holds the
    kernels as well, but its attributes are read-only: that door stays open.)"""
    import torch

    name = dotted.rsplit(".", 1)[-1]
    try:
        packet = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return
    if isinstance(packet, torch._ops.OpOverloadPacket):
        setattr(torch.ops.aten, name, guarded)


def resolve(dotted: str) -> Any:
    """Import `a.b.c.name` by importing the longest module prefix, then following attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve forbidden API {dotted!r}")
