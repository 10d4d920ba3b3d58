"""The scratch cell in the runner: a learner's snippet run after their solution, or the
reference replayed on the inputs that snippet recorded. Runs inside the sandbox.

Two roles, never in one process:
- "learner": the snippet runs with the solution module's names in scope (and `torch`). Calls
  it makes to the problem's entry points (a function, or an `nn.Module` built by an entry
  point class) are recorded: their inputs and, for a module, its state at the call, copied
  at the call, and what they returned. One "scratch" frame carries the value of the last
  expression (as text) and the recorded calls as an observation tree. Nothing here decides
  what the judge may do with them; the judge checks every recorded call again.
- "reference": the trusted run. The job holds the calls the judge admitted (an observation
  tree and its tensors, decoded with the protocol's caps); the reference replays each one and
  one "scratch_ref" frame carries what it returned. No snippet and no learner code is in it.
"""

from __future__ import annotations

import ast
import base64
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from judge.core.frames import MAX_REPR, Replayed, ScratchFrame, ScratchRefFrame, ShownValue

SNIPPET_FILE = "scratch.py"
MAX_CALLS = 8  # recorded; the judge admits no more either
MAX_SNIPPET = 8000


def _copy(value: Any, depth: int = 0) -> Any:
    """A copy taken at the call: tensors cloned (the snippet may change them afterwards),
    containers rebuilt, anything else kept as it is (it is then sent as "other")."""
    if depth > 8:
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor).clone()
    if isinstance(value, tuple):
        return tuple(_copy(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [_copy(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v, depth + 1) for k, v in value.items()}
    return value


class Recorder:
    """Wraps the entry points the snippet sees; the solution module's own names stay as they
    are, so calls the solution makes internally are not recorded."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.skipped = 0

    def _add(self, call: dict[str, Any]) -> None:
        if len(self.calls) < MAX_CALLS:
            self.calls.append(call)
        else:
            self.skipped += 1

    def function(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            inputs = _copy((list(args), kwargs))
            out = fn(*args, **kwargs)
            self._add(
                {"entry": name, "kind": "function", "args": inputs[0], "kwargs": inputs[1], "out": _copy(out)}
            )
            return out

        recorded.__name__ = recorded.__qualname__ = name
        recorded.__doc__ = fn.__doc__
        return recorded

    def module_class(self, name: str, cls: type[torch.nn.Module]) -> Callable[..., Any]:
        recorder = self

        def construct(*args: Any, **kwargs: Any) -> Any:
            module = cls(*args, **kwargs)
            init = _copy((list(args), kwargs))
            pending: list[dict[str, Any]] = []

            def before(mod: torch.nn.Module, a: tuple[Any, ...], kw: dict[str, Any]) -> None:
                state = {k: v.detach().clone() for k, v in mod.state_dict().items()}
                pending.append({"args": _copy(list(a)), "kwargs": _copy(kw), "state": state})

            def after(mod: torch.nn.Module, a: tuple[Any, ...], kw: dict[str, Any], out: Any) -> None:
                if pending:
                    call = pending.pop()
                    recorder._add(
                        {
                            "entry": name,
                            "kind": "module",
                            "init": init[0],
                            "init_kwargs": init[1],
                            **call,
                            "out": _copy(out),
                        }
                    )

            module.register_forward_pre_hook(before, with_kwargs=True)
            module.register_forward_hook(after, with_kwargs=True)
            return module

        construct.__name__ = construct.__qualname__ = name
        construct.__doc__ = cls.__doc__
        return construct


def _split_last(snippet: str) -> tuple[Any, Any]:
    """The snippet's statements and its last expression (None when it ends with a statement)."""
    tree = ast.parse(snippet, SNIPPET_FILE, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body[-1].value)
        tree.body.pop()
    body = compile(tree, SNIPPET_FILE, "exec", dont_inherit=True)
    return body, (compile(last, SNIPPET_FILE, "eval", dont_inherit=True) if last is not None else None)


def _snippet_line(exc: BaseException) -> int | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SNIPPET_FILE]
    return frames[-1].lineno if frames else None


def describe_value(value: Any) -> ShownValue:
    """The last expression's value as the learner reads it: torch's own repr (which summarises
    a large tensor), and for a tensor its shape and dtype."""
    try:
        text = repr(value)
    except Exception as exc:  # a repr of the learner's own class may raise
        text = f"<repr raised {type(exc).__name__}>"
    kind = f"{type(value).__module__}.{type(value).__qualname__}"[:200]
    if isinstance(value, torch.Tensor):
        return ShownValue(kind, text[:MAX_REPR], tuple(value.shape)[:16], str(value.dtype))
    return ShownValue(kind, text[:MAX_REPR])


def _missing_entry(name: str) -> Any:
    """What the snippet sees for an entry point the solution lacks: calling it raises the
    runner's MissingEntryPointError, the error a case that uses it fails with."""
    from judge.core.runner.parts import MissingEntryPointError

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise MissingEntryPointError(name)

    missing.__name__ = missing.__qualname__ = name
    return missing


def run_learner(
    snippet: str, module: Any, entry_points: list[str], guards: Any, files: tuple[str, ...]
) -> tuple[ScratchFrame, dict[str, torch.Tensor]]:
    """Run the snippet after the solution `module` loaded; the "scratch" frame and its tensors."""
    from judge.core.observations import ObservationError, encode
    from judge.core.runner.guards import ForbiddenAPIError
    from judge.core.runner.tracebacks import learner_traceback, register_source

    recorder = Recorder()
    scope: dict[str, Any] = dict(module.__dict__)
    scope["__name__"] = "__scratch__"
    scope.setdefault("torch", torch)
    for name in entry_points:
        obj = module.__dict__.get(name)
        if name not in module.__dict__:  # loaded without it: calling it says so, as a case does
            scope[name] = _missing_entry(name)
        elif isinstance(obj, type) and issubclass(obj, torch.nn.Module):
            scope[name] = recorder.module_class(name, obj)
        elif callable(obj) and not isinstance(obj, type):
            scope[name] = recorder.function(name, obj)
    register_source(SNIPPET_FILE, snippet)
    torch.default_generator.manual_seed(0)
    torch.set_grad_enabled(True)
    guards.reset()
    start = time.perf_counter()
    value: Any = None
    try:
        body, last = _split_last(snippet[:MAX_SNIPPET])
    except SyntaxError as exc:
        message = f"SyntaxError: {exc.msg} ({SNIPPET_FILE}, line {exc.lineno})"
        return ScratchFrame(0, "ce", message=message, line=exc.lineno, obs=encode([])[0]), {}
    frame: ScratchFrame
    try:
        exec(body, scope)
        value = eval(last, scope) if last is not None else None
        frame = ScratchFrame(0, "ok")
    except ForbiddenAPIError as exc:
        frame = ScratchFrame(0, "forbidden", api=exc.api)
    except BaseException as exc:
        memory = isinstance(exc, MemoryError) or "can't allocate memory" in str(exc)
        frame = ScratchFrame(
            0,
            "memory" if memory else "error",
            message=learner_traceback(exc, (*files, SNIPPET_FILE)),
            line=_snippet_line(exc),
        )
    frame = replace(frame, time_ms=round((time.perf_counter() - start) * 1000.0, 3))
    if guards.calls:
        frame = replace(frame, status="forbidden", api=guards.calls[0])
    if frame.status == "ok" and last is not None:
        frame = replace(frame, value=describe_value(value))
    try:
        obs, tensors = encode(recorder.calls)
        return replace(frame, skipped=recorder.skipped, obs=obs), tensors
    except (ObservationError, RuntimeError, TypeError):
        skipped = recorder.skipped + len(recorder.calls)
        return replace(frame, skipped=skipped, obs=encode([])[0]), {}


def run_reference(
    job_scratch: dict[str, Any], module: Any
) -> tuple[ScratchRefFrame, dict[str, torch.Tensor]]:
    """Replay the admitted calls on the reference `module` (a trusted run: no learner code)."""
    from judge.core.observations import decode, encode
    from judge.core.protocol import StreamLimits, parse_safetensors
    from judge.core.runner.tracebacks import exception_line

    blob = base64.b64decode(job_scratch.get("blob", ""))
    tensors, _ = parse_safetensors(blob, StreamLimits()) if blob else ({}, 0)
    calls = decode(job_scratch["calls"], tensors)
    results: list[Replayed] = []
    for call in calls[:MAX_CALLS]:
        torch.default_generator.manual_seed(0)
        try:
            entry = getattr(module, call["entry"])
            if call["kind"] == "module":
                m = entry(*call["init"], **call["init_kwargs"])
                own = dict(m.named_parameters())
                own.update(dict(m.named_buffers()))
                unknown = sorted(set(call["state"]) - set(own))
                lacking = sorted(set(own) - set(call["state"]))
                if unknown or lacking:
                    named = Replayed("state", unknown=tuple(unknown[:20]), lacking=tuple(lacking[:20]))
                    results.append(named)
                    continue
                for key, value in call["state"].items():
                    if own[key].shape != value.shape:
                        raise ValueError(f"{key}: shape {tuple(value.shape)} is not {tuple(own[key].shape)}")
                    own[key].data = value.clone()  # its dtype too: the learner's module may be bf16
                out = m(*call["args"], **call["kwargs"])
            else:
                out = entry(*call["args"], **call["kwargs"])
            results.append(Replayed("ok", out))
        except Exception as exc:
            results.append(Replayed("error", message=exception_line(exc)))
    obs, out_tensors = encode([r.to_tree() for r in results])
    return ScratchRefFrame(0, obs), out_tensors
