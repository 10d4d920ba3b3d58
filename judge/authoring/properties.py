"""Properties of a package's cases (issue 28): what the cases must make a solution do, so that
passing them means the code is right and not only right on the shapes the author tried.

    arguments       every argument of every entry point (constructor and call) takes a value
                    other than its default in a hidden case, and some case changes it between
                    two calls of one object (for a constructor: between two objects one case makes)
    repeated_calls  a case calls one object several times with different shapes, dtypes (of an
                    input, or of the module's parameters converted between two calls) and
                    argument values, and observes the output of every call
    param_edit      a case edits a module's parameters in place after its first call
                    (`p.add_(...)` under no_grad, `load_state_dict`, `load_params`) and observes
                    the next call
    non_contiguous  a case passes a non-contiguous tensor (a transposed, sliced or expanded view)
    batch           a case passes an input whose first axis (its batch) is more than 1
    length_one      a case passes an input with a size-1 axis (a single token, row or step)
    two_instances   a case makes two objects of one entry point and interleaves their calls,
                    observing the call after the other object's

How they are found. The reference and cases.py are the author's trusted code, so `analyse` runs
every case on the reference in this process (its parts served as modules, as the runner serves
them), with each entry point wrapped: a function records its calls; a class is subclassed, so
that its constructor and its public methods (`__call__` as `forward` for an nn.Module) record
theirs; an nn.Module that a function entry point returns (problem 217's `load_model`) gets the
same subclass, for its calls. Only the case's own calls are recorded: a call an entry point
makes inside another (moe_block calling route, cached_attention calling cache.update) is part of
that call. A torch function mode follows the data at the case's level: what each call returned,
and every tensor computed from it, carries the call's number, so the tensors a case returns say
which calls it observed. Each property is then a small function of these records (`decide`).

Records, per case (`CaseRecord`): the objects (`Obj`: an instance an entry class made, an
nn.Module a function returned, or a function's calls in this case) and every call in order
(`Call`, constructions included): its arguments bound to the signature (`Arg`: a summary, a
value key, whether the case passed it and whether it equals the default), its tensors
(`TensorArg`: path, shape, dtype, stride, contiguity), the other objects it was passed, the
parameters of its object edited in place (or replaced) since that object's previous call, how
many tensors it returned and whether the case's observations hold one of them (or a tensor
computed from one), and what it raised.

The shapes are read by a rule, not from the statement: an input is a call's first tensor
argument; its first axis is the batch when it has two or more; a size-1 axis is a length-1
input except the batch axis of a tensor of rank 3 or more. A package whose statement rules a
property out waives it in problem.toml with the reason (`[waivers]`, shown on the admin page).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any, Literal

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from judge.authoring.package import PROPERTY_NAMES, Problem
from judge.core import casekit
from judge.core.casekit import Case, Rng
from judge.core.runner.parts import PartFinder

Role = Literal["constructor", "function", "method"]
Status = Literal["met", "gap", "waived", "n/a"]

# What each property asks, as the JSON report gives it.
DESCRIPTIONS = {
    "arguments": "every argument takes a non-default value in a hidden case and changes between two "
    "calls of one object",
    "repeated_calls": "a case calls one object several times with different shapes, dtypes and "
    "argument values and observes every call",
    "param_edit": "a case edits a module's parameters in place after its first call and observes "
    "the next call",
    "non_contiguous": "a case passes a non-contiguous input (a transposed, sliced or expanded view)",
    "batch": "a case passes an input with a batch (first axis) > 1",
    "length_one": "a case passes a length-1 input (a size-1 axis)",
    "two_instances": "a case makes two objects of one entry point and interleaves their calls",
}
assert tuple(DESCRIPTIONS) == PROPERTY_NAMES
ARGUMENT_WAIVER = "arguments:"  # + an argument's id: `arguments:RMSNorm.eps`

_SHOWN = 6  # examples or gaps listed per property before "and N more"
_MAX_TENSORS = 512  # tensors recorded per call (a state dict's are enough to see their layouts)
_LOCK = threading.Lock()  # the analysis swaps process-wide state: one package at a time


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Param:
    name: str
    default: str | None  # the default's summary; None when the argument is required


@dataclass(frozen=True)
class Signature:
    """One callable of an entry point: `RMSNorm` (its constructor), `RMSNorm.forward`, `l2norm`,
    `load_model().forward` (a method of the module load_model returns)."""

    callable: str
    entry: str
    role: Role
    params: tuple[Param, ...]


@dataclass(frozen=True)
class Arg:
    name: str
    value: str  # a summary: `1e-05`, `tensor(2, 5, 32) float32`, `KVCache #2`
    key: str  # equal keys, equal values (tensors by shape, dtype and bytes; objects by identity)
    explicit: bool  # the case passed it
    default: bool  # it equals the signature's default (never for a required argument)


@dataclass(frozen=True)
class TensorArg:
    path: str  # `x`, `xs[1]`, `state_dict['embed.weight']`
    shape: tuple[int, ...]
    dtype: str
    stride: tuple[int, ...]
    contiguous: bool
    direct: bool  # an argument itself, not a tensor inside a list or dict


@dataclass
class Call:
    seq: int  # its place in the case, constructions included
    callable: str
    obj: int  # the object called (a function's calls in one case are one object)
    args: tuple[Arg, ...] | None  # None when they do not bind to the signature
    tensors: tuple[TensorArg, ...]
    uses: tuple[int, ...]  # other objects passed to it
    edited: tuple[str, ...] = ()  # parameters edited in place since the object's previous call
    replaced: tuple[str, ...] = ()  # parameters replaced or converted since then
    converted: tuple[str, ...] = ()  # of those, the ones now of another dtype (`module.to(bf16)`)
    outputs: int = 0  # tensors in what it returned
    observed: bool = False  # the case's observations hold one of them or a tensor computed from one
    raised: str = ""  # the class of what it raised


@dataclass
class Obj:
    number: int
    entry: str
    kind: Literal["instance", "result", "function"]
    type: str
    module: bool
    parameters: int = 0


@dataclass
class CaseRecord:
    name: str
    public: bool
    objects: list[Obj] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    error: str = ""  # what the case raised here, where it passes in the runner


@dataclass
class Records:
    problem: str
    signatures: dict[str, Signature]
    cases: list[CaseRecord]


# ---------------------------------------------------------------- the analysis


def analyse(problem: Problem) -> Records:
    """Every case of the package run on its reference in this process, with its calls recorded."""
    with _LOCK, _reference(problem) as module, _data_dir(problem), _torch_state():
        recorder = _Recorder()
        impl = recorder.impl(module, problem.spec.entry_points)
        for c in problem.cases:
            recorder.run_case(c, impl)
    return Records(problem.id, dict(recorder.signatures), recorder.cases)


@contextlib.contextmanager
def _reference(problem: Problem) -> Iterator[types.ModuleType]:
    """The reference as a module of this process, its parts served as the runner serves them."""
    finder = PartFinder()
    parts = problem.reference_parts()
    name = f"judge_properties_reference_{problem.id}"
    module = types.ModuleType(name)
    module.__file__ = str(problem.reference.path)
    sys.modules[name] = module  # dataclasses and typing look a class's module up by name
    if parts:
        finder.install(parts)
    try:
        exec(compile(problem.reference.source(), str(problem.reference.path), "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(name, None)
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        if parts:
            course = {p.module.split(".")[0] for p in parts}
            for mod in [n for n in sys.modules if n.split(".")[0] in course]:
                del sys.modules[mod]


@contextlib.contextmanager
def _data_dir(problem: Problem) -> Iterator[None]:
    """`casekit.data_path` finds the package's data files where they are, in the package."""
    before = casekit._data_dir
    casekit.use_data_dir(str(problem.root) if problem.spec.data else None)
    try:
        yield
    finally:
        casekit.use_data_dir(before)


@contextlib.contextmanager
def _torch_state() -> Iterator[None]:
    rng, dtype, grad = torch.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_rng_state(rng)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


class _Flow(TorchFunctionMode):
    """Which calls' outputs each tensor of the case holds: a tensor a call computed carries the
    call's number, and one computed from such tensors at the case's level carries theirs."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        rec = self.recorder
        if rec.busy:
            return out
        rec.busy = True
        try:
            if rec.depth > 0:
                rec.tag(out, {rec.current})
            else:
                found = rec.tags_of((args, kwargs))
                if found:
                    rec.tag(out, found)
                    name = getattr(func, "__name__", "")
                    if (name.endswith("_") and not name.endswith("__")) or name == "__setitem__":
                        rec.tag(args[0] if args else None, found)
                    if "out" in kwargs:
                        rec.tag(kwargs["out"], found)
        finally:
            rec.busy = False
        return out


class _Recorder:
    def __init__(self) -> None:
        self.signatures: dict[str, Signature] = {}
        self.cases: list[CaseRecord] = []
        self.case: CaseRecord | None = None
        self.depth = 0  # > 0 inside a recorded call: its own calls are part of it
        self.current = 0  # the recorded call under way
        self.busy = False  # the recorder's own tensor work: not the case's data
        self.tags: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._numbers: dict[int, int] = {}
        self._alive: list[Any] = []  # what the case's objects are, kept so that their ids stay theirs
        self._params: dict[int, dict[str, tuple[int, int, int, torch.dtype, tuple[int, ...]]]] = {}
        self._proxies: dict[tuple[type, str], type] = {}
        self._binders: dict[str, inspect.Signature] = {}  # by callable id, without `self`
        self._default_keys: dict[tuple[str, str], str] = {}

    # ------------------------------------------------ wrapping

    def impl(self, module: types.ModuleType, entry_points: Sequence[str]) -> types.SimpleNamespace:
        wrapped: dict[str, Any] = {}
        for name in entry_points:
            value = module.__dict__[name]
            if inspect.isclass(value):
                wrapped[name] = self._proxy(value, name, name, construct=True)
            elif callable(value):
                wrapped[name] = self._function(value, name)
            else:  # not callable: the runner refuses it; the reference passed, so it cannot be
                wrapped[name] = value
        return types.SimpleNamespace(**wrapped)

    def _function(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        sig = self._signature(name, name, "function", fn, drop_self=False)
        recorder = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if recorder.depth > 0 or recorder.case is None:
                return fn(*args, **kwargs)
            number = recorder.number(fn, name, "function", type(fn).__name__)
            out = recorder.call(sig, number, None, lambda: fn(*args, **kwargs), args, kwargs)
            if isinstance(out, nn.Module) and id(out) not in recorder._numbers:
                recorder.track_result(out, name)
            return out

        return wrapper

    def _proxy(self, cls: type, entry: str, prefix: str, construct: bool) -> type:
        """A subclass of `cls` whose constructor (when `construct`) and public methods record
        their calls at the case's level; `__call__` of an nn.Module records as `forward`."""
        known = self._proxies.get((cls, prefix))
        if known is not None:
            return known
        recorder = self
        namespace: dict[str, Any] = {"__module__": cls.__module__, "__doc__": cls.__doc__}
        if construct:
            init: Callable[..., None] = inspect.getattr_static(cls, "__init__")
            init_sig = self._signature(prefix, entry, "constructor", init, drop_self=True)

            def __init__(inst: Any, *args: Any, **kwargs: Any) -> None:
                if recorder.depth > 0 or recorder.case is None:
                    init(inst, *args, **kwargs)
                    return
                number = recorder.number(inst, entry, "instance", cls.__name__)
                recorder.call(init_sig, number, inst, lambda: init(inst, *args, **kwargs), args, kwargs)

            namespace["__init__"] = __init__
        for name, func in _public_methods(cls).items():
            sig = self._signature(f"{prefix}.{name}", entry, "method", func, drop_self=True)
            namespace[name] = self._method(func, sig, entry, cls)
        if issubclass(cls, nn.Module) and "forward" in namespace:
            forward_sig = self.signatures[f"{prefix}.forward"]

            def __call__(inst: Any, *args: Any, **kwargs: Any) -> Any:
                call = functools.partial(nn.Module.__call__, inst)
                if recorder.depth > 0 or recorder.case is None:
                    return call(*args, **kwargs)
                number = recorder.number(inst, entry, "instance", cls.__name__)
                return recorder.call(forward_sig, number, inst, lambda: call(*args, **kwargs), args, kwargs)

            namespace["__call__"] = __call__
        elif not issubclass(cls, nn.Module) and inspect.isfunction(own_call := _own_call(cls)):
            call_sig = self._signature(f"{prefix}.__call__", entry, "method", own_call, drop_self=True)
            namespace["__call__"] = self._method(own_call, call_sig, entry, cls)
        proxy = types.new_class(cls.__name__, (cls,), exec_body=lambda ns: ns.update(namespace))
        proxy.__qualname__ = cls.__qualname__
        self._proxies[(cls, prefix)] = proxy
        return proxy

    def _method(self, func: Callable[..., Any], sig: Signature, entry: str, cls: type) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(func)
        def method(inst: Any, *args: Any, **kwargs: Any) -> Any:
            if recorder.depth > 0 or recorder.case is None:
                return func(inst, *args, **kwargs)
            number = recorder.number(inst, entry, "instance", cls.__name__)
            return recorder.call(sig, number, inst, lambda: func(inst, *args, **kwargs), args, kwargs)

        return method

    def track_result(self, module: nn.Module, entry: str) -> None:
        """An nn.Module a function entry point returned: its calls are recorded from now on."""
        cls = type(module)
        self.number(module, entry, "result", cls.__name__)
        with contextlib.suppress(TypeError):  # a class whose layout cannot take a subclass stays untracked
            module.__class__ = self._proxy(cls, entry, f"{entry}()", construct=False)

    def _signature(
        self, callable_id: str, entry: str, role: Role, fn: Callable[..., Any], drop_self: bool
    ) -> Signature:
        params: list[Param] = []
        try:
            found = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            found = []
        found = found[1:] if drop_self else found
        for p in found:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            params.append(Param(p.name, None if p.default is p.empty else _summary(p.default, self)))
            if p.default is not p.empty:
                self._default_keys[(callable_id, p.name)] = _key(p.default, None)
        sig = Signature(callable_id, entry, role, tuple(params))
        self.signatures[callable_id] = sig
        self._binders[callable_id] = inspect.Signature(found)
        return sig

    # ------------------------------------------------ objects and calls

    def number(
        self, obj: Any, entry: str, kind: Literal["instance", "result", "function"], type_name: str
    ) -> int:
        assert self.case is not None
        known = self._numbers.get(id(obj))
        if known is not None:
            return known
        n = len(self.case.objects) + 1
        self._numbers[id(obj)] = n
        self._alive.append(obj)
        self.case.objects.append(Obj(n, entry, kind, type_name, isinstance(obj, nn.Module)))
        return n

    def call(
        self,
        sig: Signature,
        number: int,
        target: Any,
        run: Callable[[], Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        assert self.case is not None
        self.busy = True
        try:
            record = self._record(sig, number, target, args, kwargs)
        finally:
            self.busy = False
        self.case.calls.append(record)
        outer = self.current
        self.depth += 1
        self.current = record.seq
        try:
            out = run()
        except BaseException as exc:
            record.raised = type(exc).__name__
            raise
        finally:
            self.depth -= 1
            self.current = outer
            self.busy = True
            try:
                self._snapshot(target, number, sig.role != "constructor")
            finally:
                self.busy = False
        self.busy = True
        try:
            record.outputs = self.tag(out, {record.seq})
        finally:
            self.busy = False
        return out

    def _record(
        self, sig: Signature, number: int, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Call:
        assert self.case is not None
        seq = len(self.case.calls) + 1
        bound: dict[str, Any] | None
        try:
            binding = self._binders[sig.callable].bind(*args, **kwargs)
            bound = dict(binding.arguments)
        except TypeError:
            bound = None
        record_args: tuple[Arg, ...] | None = None
        values: list[tuple[str, Any]]
        if bound is not None:
            out = []
            for p in sig.params:
                explicit = p.name in bound
                if explicit:
                    value = bound[p.name]
                    key = _key(value, self)
                    is_default = key == self._default_keys.get((sig.callable, p.name))
                else:
                    value, key, is_default = None, self._default_keys[(sig.callable, p.name)], True
                out.append(
                    Arg(
                        p.name,
                        _summary(value, self) if explicit else str(p.default),
                        key,
                        explicit,
                        is_default,
                    )
                )
            record_args = tuple(out)
            values = list(bound.items())
        else:
            values = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
        tensors: list[TensorArg] = []
        uses: list[int] = []
        for name, value in values:
            self._walk(name, value, tensors, uses, direct=True, depth=0)
        edited, replaced, converted = self._param_changes(target, number)
        return Call(
            seq,
            sig.callable,
            number,
            record_args,
            tuple(tensors),
            tuple(u for u in dict.fromkeys(uses) if u != number),
            edited,
            replaced,
            converted,
        )

    def _walk(
        self, path: str, value: Any, tensors: list[TensorArg], uses: list[int], direct: bool, depth: int
    ) -> None:
        if len(tensors) >= _MAX_TENSORS or depth > 6:
            return
        if isinstance(value, torch.Tensor):
            layout_ok = value.layout == torch.strided and not value.is_meta
            tensors.append(
                TensorArg(
                    path,
                    tuple(value.shape),
                    str(value.dtype).removeprefix("torch."),
                    tuple(value.stride()) if layout_ok else (),
                    bool(value.is_contiguous()) if layout_ok else True,
                    direct,
                )
            )
        elif id(value) in self._numbers:
            uses.append(self._numbers[id(value)])
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                self._walk(f"{path}[{i}]", item, tensors, uses, False, depth + 1)
        elif isinstance(value, dict):
            for k, item in value.items():
                self._walk(f"{path}[{k!r}]", item, tensors, uses, False, depth + 1)

    def _snapshot(self, target: Any, number: int, called: bool) -> None:
        """The parameters after a call (the next call's edits are counted from here); after the
        constructor, only how many there are: an edit before the first call is no edit after it."""
        if not isinstance(target, nn.Module):
            return
        params = {
            name: (id(p), p._version, p.data_ptr(), p.dtype, tuple(p.shape))
            for name, p in target.named_parameters()
        }
        if called:
            self._params[number] = params
        assert self.case is not None
        obj = self.case.objects[number - 1]
        obj.parameters = max(obj.parameters, len(params))

    def _param_changes(
        self, target: Any, number: int
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The parameters edited in place, replaced, and converted to another dtype since the
        object's previous call."""
        before = self._params.get(number)
        if before is None or not isinstance(target, nn.Module):
            return (), (), ()
        now = {name: p for name, p in target.named_parameters()}
        edited, replaced, converted = [], [], []
        for name in sorted(set(before) | set(now)):
            was, p = before.get(name), now.get(name)
            if was is None or p is None:
                replaced.append(name)
                continue
            same = (id(p), p.data_ptr(), p.dtype, tuple(p.shape)) == (was[0], was[2], was[3], was[4])
            if not same:
                replaced.append(name)
                if p.dtype != was[3]:
                    converted.append(name)
            elif p._version != was[1]:
                edited.append(name)
        return tuple(edited), tuple(replaced), tuple(converted)

    # ------------------------------------------------ data flow

    def tag(self, value: Any, found: set[int] | frozenset[int], depth: int = 0) -> int:
        """Mark the tensors in `value` as holding these calls' outputs; how many there were."""
        if isinstance(value, torch.Tensor):
            if isinstance(value, nn.Parameter):
                return 0  # `w.float()` of an fp32 weight is the weight: not the call's output
            known = self.tags.get(value)  # type: ignore[no-untyped-call]
            self.tags[value] = frozenset(found) | known if known else frozenset(found)
            return 1
        if depth > 4 or value is None:
            return 0
        if isinstance(value, (list, tuple)):
            return sum(self.tag(v, found, depth + 1) for v in value)
        if isinstance(value, dict):
            return sum(self.tag(v, found, depth + 1) for v in value.values())
        return 0

    def tags_of(self, value: Any, depth: int = 0) -> set[int]:
        if isinstance(value, torch.Tensor):
            return set(self.tags.get(value) or ())  # type: ignore[no-untyped-call]
        found: set[int] = set()
        if depth > 8:
            return found
        if isinstance(value, (list, tuple)):
            for v in value:
                found |= self.tags_of(v, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                found |= self.tags_of(v, depth + 1)
        return found

    # ------------------------------------------------ cases

    def run_case(self, c: Case, impl: types.SimpleNamespace) -> None:
        record = CaseRecord(c.name, c.public)
        self.cases.append(record)
        self.case, self.depth, self.current = record, 0, 0
        self.tags = WeakIdKeyDictionary()
        self._numbers, self._alive, self._params = {}, [], {}
        torch.default_generator.manual_seed(c.seed)  # as the runner does before each case
        torch.set_default_dtype(torch.float32)
        torch.set_grad_enabled(True)
        value: Any = None
        try:
            with _Flow(self):
                value = c.fn(impl, Rng(c.seed))
        except Exception as exc:  # the reference passed this case in the runner: say what differs here
            record.error = f"{type(exc).__name__}: {exc}"[:300]
        observed = self.tags_of(value)
        for call in record.calls:
            call.observed = call.seq in observed
        self.case = None
        self.tags = WeakIdKeyDictionary()
        self._numbers, self._alive, self._params = {}, [], {}


def _public_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The methods a case may call on an instance: public, defined by the author's classes (not
    nn.Module's own, such as `to` or `extra_repr`, which torch calls on its own)."""
    found: dict[str, Callable[..., Any]] = {}
    for klass in cls.__mro__:
        if klass is object or klass.__module__.startswith("torch"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in found:
                continue
            if name != "forward" and hasattr(nn.Module, name):
                continue
            if inspect.isfunction(value):
                found[name] = value
    return found


def _own_call(cls: type) -> Any:
    """The `__call__` a plain class defines, if any (instances of it are called like functions)."""
    return next((vars(k)["__call__"] for k in cls.__mro__ if "__call__" in vars(k)), None)


def _summary(value: Any, recorder: _Recorder | None) -> str:
    if isinstance(value, torch.Tensor):
        shape = ", ".join(str(s) for s in value.shape)
        return f"tensor({shape}) {str(value.dtype).removeprefix('torch.')}"
    if recorder is not None and id(value) in recorder._numbers and recorder.case is not None:
        obj = recorder.case.objects[recorder._numbers[id(value)] - 1]
        return f"{obj.type} #{obj.number}"
    if value is None or isinstance(value, (bool, int, float, complex, str, torch.dtype, torch.device)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(value, (list, tuple, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def _key(value: Any, recorder: _Recorder | None, depth: int = 0) -> str:
    """Equal for equal values: tensors by shape, dtype and bytes, plain values by repr, the case's
    objects and anything else by identity."""
    raw = _raw_key(value, recorder, depth)
    return raw if len(raw) <= 64 else hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


def _raw_key(value: Any, recorder: _Recorder | None, depth: int) -> str:
    if isinstance(value, torch.Tensor):
        return "T" + _tensor_key(value)
    if recorder is not None and id(value) in recorder._numbers:
        return f"O{recorder._numbers[id(value)]}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"N{float(value)!r}"  # gain=1 is the default gain=1.0
    if value is None or isinstance(
        value, (bool, int, float, complex, str, bytes, torch.dtype, torch.device, torch.Size, PurePath)
    ):
        return f"V{type(value).__name__}:{value!r}"
    if depth < 6 and isinstance(value, (list, tuple)):
        return f"L{type(value).__name__}(" + ",".join(_key(v, recorder, depth + 1) for v in value) + ")"
    if depth < 6 and isinstance(value, dict):
        return "D(" + ",".join(f"{k!r}={_key(v, recorder, depth + 1)}" for k, v in value.items()) + ")"
    return f"I{type(value).__qualname__}@{id(value)}"


def _tensor_key(t: torch.Tensor) -> str:
    head = f"{tuple(t.shape)}|{t.dtype}"
    try:
        data = t.detach().cpu().contiguous().reshape(-1)
        if data.numel() == 0:
            return head
        digest = hashlib.blake2b(data.view(torch.uint8).numpy().tobytes(), digest_size=12).hexdigest()
    except (RuntimeError, TypeError, ValueError):
        return f"{head}@{id(t)}"
    return f"{head}|{digest}"


# ---------------------------------------------------------------- the properties


@dataclass
class Finding:
    """What one property's function says of the records, before any waiver."""

    applies: bool
    met: bool
    detail: str  # the evidence when met, what is missing when not, why it does not apply
    gaps: dict[str, str] = field(default_factory=dict)  # for arguments: argument id -> what is missing


@dataclass
class PropertyResult:
    name: str
    status: Status
    detail: str
    gaps: dict[str, str] = field(default_factory=dict)  # still open
    waived: dict[str, str] = field(default_factory=dict)  # waiver key -> its reason


@dataclass
class PropertyReport:
    results: list[PropertyResult] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # waivers that waive nothing
    error: str = ""  # the analysis could not run
    case_errors: dict[str, str] = field(default_factory=dict)  # cases that raised in the analysis

    def gaps(self) -> list[PropertyResult]:
        return [r for r in self.results if r.status == "gap"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "properties": {
                r.name: {
                    "description": DESCRIPTIONS[r.name],
                    **{k: v for k, v in asdict(r).items() if k != "name"},
                }
                for r in self.results
            },
            "gaps": [r.name for r in self.gaps()],
            "waived": sorted({k for r in self.results for k in r.waived}),
            "stale_waivers": self.stale,
            "case_errors": self.case_errors,
            "error": self.error,
        }


def decide(records: Records, waivers: Mapping[str, str]) -> PropertyReport:
    """Each property of the records, with the package's waivers applied."""
    report = PropertyReport(case_errors={c.name: c.error for c in records.cases if c.error})
    used: set[str] = set()
    for name in PROPERTY_NAMES:
        finding = PROPERTIES[name](records)
        if not finding.applies:
            report.results.append(PropertyResult(name, "n/a", finding.detail))
            continue
        if finding.met:
            report.results.append(PropertyResult(name, "met", finding.detail))
            continue
        whole = waivers.get(name)
        if whole is not None:
            used.add(name)
            report.results.append(PropertyResult(name, "waived", finding.detail, {}, {name: whole}))
            continue
        open_gaps, waived = dict(finding.gaps), {}
        for arg in list(open_gaps):
            reason = waivers.get(ARGUMENT_WAIVER + arg)
            if reason is not None:
                used.add(ARGUMENT_WAIVER + arg)
                waived[ARGUMENT_WAIVER + arg] = reason
                del open_gaps[arg]
        if finding.gaps and not open_gaps:
            report.results.append(PropertyResult(name, "waived", finding.detail, {}, waived))
        else:
            detail = _gap_detail(open_gaps) if finding.gaps else finding.detail
            report.results.append(PropertyResult(name, "gap", detail, open_gaps, waived))
    report.stale = sorted(k for k in waivers if k not in used)
    return report


def _gap_detail(gaps: Mapping[str, str]) -> str:
    shown = [f"{arg} {why}" for arg, why in list(gaps.items())[:_SHOWN]]
    more = f"; and {len(gaps) - _SHOWN} more" if len(gaps) > _SHOWN else ""
    return "; ".join(shown) + more


def _calls(records: Records) -> Iterator[tuple[CaseRecord, Call]]:
    for c in records.cases:
        for call in c.calls:
            yield c, call


def _role(records: Records, call: Call) -> Role:
    return records.signatures[call.callable].role


def _arguments(records: Records) -> Finding:
    gaps: dict[str, str] = {}
    total = 0
    for sig in records.signatures.values():
        calls = [(c, call) for c, call in _calls(records) if call.callable == sig.callable]
        for p in sig.params:
            total += 1
            arg_id = f"{sig.callable}.{p.name}"
            if not calls:
                gaps[arg_id] = "is never passed: no case calls " + _callable_text(sig)
                continue
            values = [(c, call, _arg(call, p.name)) for c, call in calls]
            # A call that raised (a refusal the case checks) computed nothing with its value.
            hidden = [a for c, call, a in values if not c.public and a is not None and not call.raised]
            missing = []
            if not any(not a.default for a in hidden):
                if p.default is None:
                    missing.append("is never passed in a hidden case")
                else:
                    missing.append(f"never takes a non-default value in a hidden case (always {p.default})")
            if not _changes(sig, values):
                missing.append(
                    "never differs between two objects one case makes"
                    if sig.role == "constructor"
                    else "never changes between two calls of one object in a case"
                )
            if missing:
                gaps[arg_id] = " and ".join(missing)
    if not total:
        return Finding(False, False, "the entry points take no arguments")
    if gaps:
        return Finding(True, False, _gap_detail(gaps), gaps)
    return Finding(
        True, True, f"all {total} arguments take non-default values in hidden cases and change between calls"
    )


def _callable_text(sig: Signature) -> str:
    return f"{sig.callable}(...)" if sig.role != "method" else sig.callable


def _arg(call: Call, name: str) -> Arg | None:
    if call.args is None:
        return None
    return next((a for a in call.args if a.name == name), None)


def _changes(sig: Signature, values: list[tuple[CaseRecord, Call, Arg | None]]) -> bool:
    """Whether one case gives the argument two values: in two calls of one object, or for a
    constructor in two of the objects it makes."""
    seen: dict[tuple[str, int], set[str]] = {}
    for c, call, a in values:
        if a is None or call.raised:
            continue
        group = (c.name, 0 if sig.role == "constructor" else call.obj)
        seen.setdefault(group, set()).add(a.key)
    return any(len(keys) > 1 for keys in seen.values())


def _repeated_calls(records: Records) -> Finding:
    groups: dict[tuple[str, int, str], list[Call]] = {}
    for c, call in _calls(records):
        if _role(records, call) == "constructor" or call.raised or not call.tensors:
            continue
        groups.setdefault((c.name, call.obj, call.callable), []).append(call)
    if not groups:
        return Finding(False, False, "no entry point takes a tensor")
    best: tuple[int, str] | None = None
    for (case_name, _obj, callable_id), calls in groups.items():
        if len(calls) < 2:
            continue
        sig = records.signatures[callable_id]
        shapes = _varies(calls, lambda t: t.shape)
        # A dtype changes with an input's, or with the module's own (`model.to(bf16)` between
        # two calls: a model whose only input is token ids changes dtype this way).
        dtypes = _varies(calls, lambda t: t.dtype) or any(call.converted for call in calls[1:])
        others = _other_arguments_change(sig, calls)
        unobserved = [call.seq for call in calls if call.outputs and not call.observed]
        what = f"case {case_name} calls {callable_id} {len(calls)} times"
        if shapes and dtypes and others and not unobserved:
            return Finding(
                True, True, f"{what} with different shapes, dtypes and arguments, and observes each"
            )
        lacking = [
            text
            for ok, text in (
                (shapes, "the shapes do not change"),
                (dtypes, "the dtypes do not change"),
                (others, "the other arguments do not change"),
                (not unobserved, f"{len(unobserved)} of its outputs are not observed"),
            )
            if not ok
        ]
        score = 4 - len(lacking)
        if best is None or score > best[0]:
            best = (score, f"{what} but " + " and ".join(lacking))
    closest = f" (closest: {best[1]})" if best else " (no case calls one object twice)"
    return Finding(
        True,
        False,
        "no case calls one object several times with different shapes, dtypes and argument values "
        "and observes every call" + closest,
    )


def _varies(calls: list[Call], read: Callable[[TensorArg], object]) -> bool:
    """Whether one tensor argument (by its path) has two shapes or two dtypes over the calls: a
    state passed from the second call on is a new argument, not a new shape."""
    seen: dict[str, set[object]] = {}
    for call in calls:
        for t in call.tensors:
            seen.setdefault(t.path, set()).add(read(t))
    return any(len(values) > 1 for values in seen.values())


def _other_arguments_change(sig: Signature, calls: list[Call]) -> bool:
    """Whether an argument besides the input (the first tensor argument) changes between calls;
    true for a callable that takes nothing else."""
    first_tensor = next((t.path for call in calls for t in call.tensors if t.direct), None)
    others = [p.name for p in sig.params if p.name != first_tensor]
    if not others:
        return True
    for name in others:
        keys = {a.key for call in calls if (a := _arg(call, name)) is not None}
        if len(keys) > 1:
            return True
    return False


def _param_edit(records: Records) -> Finding:
    modules = [o for c in records.cases for o in c.objects if o.module and o.parameters]
    if not modules:
        return Finding(False, False, "no entry point makes a module with parameters")
    near = ""
    for c, call in _calls(records):
        if not call.edited or _role(records, call) == "constructor":
            continue
        name = f"{call.callable} (#{call.obj})"
        edited = ", ".join(call.edited[:3]) + (" ..." if len(call.edited) > 3 else "")
        if call.raised:
            continue
        if call.observed or not call.outputs:
            return Finding(
                True,
                True,
                f"case {c.name} edits {edited} in place after a call of {name} and observes the next call",
            )
        near = (
            near
            or f" (case {c.name} edits {edited} between calls of {name} but does not observe the next call)"
        )
    return Finding(
        True,
        False,
        "no case edits a module's parameters in place after its first call and observes the next call" + near,
    )


def _non_contiguous(records: Records) -> Finding:
    if not any(call.tensors for _c, call in _calls(records)):
        return Finding(False, False, "no entry point takes a tensor")
    for c, call in _calls(records):
        for t in call.tensors:
            if not t.contiguous:
                return Finding(
                    True,
                    True,
                    f"case {c.name} passes {call.callable}'s {t.path} of shape {list(t.shape)} "
                    f"with strides {list(t.stride)}",
                )
    return Finding(
        True, False, "no case passes a non-contiguous tensor (a transposed, sliced or expanded view)"
    )


def _inputs(records: Records) -> Iterator[tuple[CaseRecord, Call, TensorArg]]:
    """Each call's input: its first tensor argument (not one inside a list or a dict)."""
    for c, call in _calls(records):
        first = next((t for t in call.tensors if t.direct), None)
        if first is not None:
            yield c, call, first


def _batch(records: Records) -> Finding:
    inputs = [(c, call, t) for c, call, t in _inputs(records) if len(t.shape) >= 2]
    if not inputs:
        return Finding(False, False, "no call takes a tensor of rank 2 or more as an argument of its own")
    for c, call, t in inputs:
        if t.shape[0] > 1:
            return Finding(
                True, True, f"case {c.name} passes {call.callable}'s {t.path} of shape {list(t.shape)}"
            )
    return Finding(True, False, "no case passes an input whose first axis (its batch) is more than 1")


def _length_one(records: Records) -> Finding:
    inputs = list(_inputs(records))
    if not inputs:
        return Finding(
            False, False, "no call takes a tensor as an argument of its own (only in a list or dict)"
        )
    for c, call, t in inputs:
        if 1 in _length_axes(t):
            return Finding(
                True, True, f"case {c.name} passes {call.callable}'s {t.path} of shape {list(t.shape)}"
            )
    return Finding(True, False, "no case passes an input with a size-1 axis (a single token, row or step)")


def _length_axes(t: TensorArg) -> tuple[int, ...]:
    """The sizes that count as a length: of a tensor of rank 3 or more every axis but the batch;
    of a matrix of ids (integers) its columns, of a float matrix its rows (tokens or rows of
    logits); of a vector its one axis."""
    if len(t.shape) >= 3:
        return t.shape[1:]
    if len(t.shape) == 2:
        integer = not any(t.dtype.startswith(f) for f in ("float", "bfloat", "complex"))
        return (t.shape[1],) if integer else (t.shape[0],)
    return t.shape


def _two_instances(records: Records) -> Finding:
    kinds = {o.entry for c in records.cases for o in c.objects if o.kind != "function"}
    makers = {s.entry for s in records.signatures.values() if s.role == "constructor"}
    if not kinds and not makers:
        return Finding(
            False, False, "the entry points are functions that return no module: nothing has instances"
        )
    near = ""
    for c in records.cases:
        uses: dict[int, list[Call]] = {}
        for call in c.calls:
            if _role(records, call) == "constructor":
                continue
            for n in {call.obj, *call.uses}:
                uses.setdefault(n, []).append(call)
        objects = [o for o in c.objects if o.kind != "function" and o.number in uses]
        for a in objects:
            for b in objects:
                if a.entry != b.entry or a.number == b.number:
                    continue
                found = _interleaved(uses[a.number], uses[b.number])
                if found is None:
                    continue
                if found.observed or not found.outputs:
                    return Finding(
                        True,
                        True,
                        f"case {c.name} interleaves the calls of two {a.type} objects "
                        f"(#{a.number}, #{b.number})",
                    )
                near = (
                    near
                    or f" (case {c.name} interleaves two {a.type} objects but does not observe "
                    "the call after)"
                )
        near = near or _two_made(c)
    return Finding(
        True, False, "no case makes two objects of one entry point and interleaves their calls" + near
    )


def _interleaved(a: list[Call], b: list[Call]) -> Call | None:
    """A call of `a` after a call of `b` that came after a call of `a` (the last of the three, an
    observed one if there is one), or None."""
    first_a = min(call.seq for call in a)
    after_b = [call.seq for call in b if call.seq > first_a]
    if not after_b:
        return None
    later = [call for call in a if call.seq > min(after_b)]
    return next((call for call in later if call.observed), later[0] if later else None)


def _two_made(c: CaseRecord) -> str:
    counts: dict[str, int] = {}
    for o in c.objects:
        if o.kind != "function":
            counts[o.entry] = counts.get(o.entry, 0) + 1
    two = sorted(e for e, n in counts.items() if n > 1)
    return f" (case {c.name} makes two {two[0]} objects but does not interleave their calls)" if two else ""


PROPERTIES: dict[str, Callable[[Records], Finding]] = {
    "arguments": _arguments,
    "repeated_calls": _repeated_calls,
    "param_edit": _param_edit,
    "non_contiguous": _non_contiguous,
    "batch": _batch,
    "length_one": _length_one,
    "two_instances": _two_instances,
}
assert tuple(PROPERTIES) == PROPERTY_NAMES


def check(problem: Problem) -> PropertyReport:
    """The properties of a package's cases, with its waivers applied; an analysis that cannot
    run is reported as such (the reference passed its cases in the runner, so this is rare)."""
    try:
        records = analyse(problem)
    except Exception as exc:  # the author's code, run here: any failure is a finding, not a crash
        return PropertyReport(error=f"{type(exc).__name__}: {exc}"[:500])
    return decide(records, problem.spec.waivers)


def render(report: PropertyReport, enforced: bool) -> str:
    """The check's detail: a summary line, then one line per property (`!` marks a gap that is
    only a warning while the properties are not enforced)."""
    if report.error:
        return f"the cases could not be analysed on the reference in this process: {report.error}"
    count = {s: sum(r.status == s for r in report.results) for s in ("met", "waived", "gap", "n/a")}
    gaps = f"{count['gap']} gap" + ("" if count["gap"] == 1 else "s")
    head = f"{count['met']} met, {count['waived']} waived, {gaps}, {count['n/a']} not applicable"
    if not enforced and (count["gap"] or report.stale):
        head += " (warnings: not enforced yet, issue 28)"
    mark = {"met": "✓", "waived": "~", "gap": "✗" if enforced else "!", "n/a": "-"}
    lines = [head]
    for r in report.results:
        if r.status == "waived":
            reasons = "; ".join(f"{k}: {v}" for k, v in r.waived.items())
            lines.append(f"{mark[r.status]} {r.name}: waived ({reasons})")
            continue
        if r.status == "gap" and r.gaps:
            lines.append(
                f"{mark[r.status]} {r.name}: {len(r.gaps)} argument{'s' * (len(r.gaps) != 1)} "
                "not varied as the property asks:"
            )
            lines.extend(f"    {arg} {why}" for arg, why in r.gaps.items())
        else:
            lines.append(f"{mark[r.status]} {r.name}: {r.detail}")
        if r.status == "gap" and r.waived:
            lines.append("    waived: " + "; ".join(f"{k}: {v}" for k, v in r.waived.items()))
    lines.extend(
        f"{'✗' if enforced else '!'} waiver of {k} waives nothing (the property is met, does not apply, or "
        "the argument is not a gap): remove it"
        for k in report.stale
    )
    lines.extend(
        f"! case {name} raised in the analysis: {error}" for name, error in report.case_errors.items()
    )
    return "\n".join(lines)
