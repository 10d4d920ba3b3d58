"""The runner: loads solutions, runs cases, writes observation frames. Runs inside the sandbox.

It is started as `python -m judge.core.runner` with the job on stdin. Before any learner code is
loaded it moves the result stream to a private file descriptor and points fd 1 at stderr,
so the learner's prints cannot interleave with frames. It decides nothing about
correctness: it only reports what each case observed, or how the case failed.

Exit status 0 means the runner finished (whatever the cases did); 70 means the runner
itself failed. That is a system error only if no learner code had started: the runner
announces each solution with a "load" frame of status "started" before executing it, and
code that shares the runner's process can break it (close the result stream, patch a
module it uses), so a failure after that frame is the learner's.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from judge.core.runner.parts import MissingEntryPointError

if TYPE_CHECKING:
    from judge.core.frames import AnyFrame as Frame
    from judge.core.frames import CaseOutcome, Load

EXIT_INTERNAL = 70
_prepared = False


def main() -> int:
    # Move the result stream off fd 1 before anything can print to it.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(result_fd, "wb", buffering=0)
    try:
        return _run(out)
    except Exception as exc:  # the runner's own failure, not the learner's
        import traceback

        with contextlib.suppress(Exception):  # stderr may be gone too
            sys.stderr.write("judge runner internal error:\n" + traceback.format_exc())
            sys.stderr.flush()
        del exc
        return EXIT_INTERNAL


def prepare() -> None:
    """Everything the runner does before it needs a job: import torch and warm it up.

    A warm sandbox calls this ahead of time (once per container, or once in a fork server's
    parent), so that a job pays none of it. Calling it again costs nothing.
    """
    global _prepared
    if _prepared:
        return
    _prepared = True
    # Before torch loads: without numpy (the runtime image and the practice kit's venvs hold
    # none) torch warns about it, and the learner's printed output must not show that.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch

    import judge.core.casekit
    import judge.core.frames
    import judge.core.observations
    import judge.core.protocol
    import judge.core.runner.guards
    import judge.core.runner.job
    import judge.core.runner.parts
    import judge.core.runner.tracebacks  # imported now so that no job pays for it

    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # already set: harmless
        torch.set_num_interop_threads(1)
    # The first backward in a process starts autograd's machinery (about a second here);
    # pay that before "hello", so it is not charged to the learner's time limit.
    # Both paths: a scalar loss, and a tensor output with an explicit gradient (the slow one).
    warm = torch.ones(2, requires_grad=True)
    (warm * warm).sum().backward()  # type: ignore[no-untyped-call]
    (warm * 2).backward(torch.ones(2))  # type: ignore[no-untyped-call]
    # torch imports torch.onnx only when asked, and a problem may forbid an API there (205
    # forbids torch.onnx.ops.rotary_embedding): the guards would import it in every job to
    # find what to replace, 120 ms of each of 205's two jobs. Here it is paid once per
    # sandbox (and shared by every fork server's child).
    import torch.onnx

    # Last: the first backward imports a few hundred more of torch's modules.
    judge.core.runner.guards.index_torch()


def warm() -> Iterator[None]:
    """Job-independent work for a fork server's child to do before its job comes.

    A forked child shares the server's memory until it writes to it; each first write to a
    page copies that page (a fault of some microseconds), and a judgement writes a few
    thousand: reference counts of modules and functions, the allocators' free lists,
    autograd's and the frame encoder's state. What this touches is copied here, off the
    job's clock. It reads and runs nothing of any job (no job exists yet). A step at a time:
    the fork server stops it when the job comes first (jobs back to back).
    """
    import torch

    from judge.core.casekit import Rng
    from judge.core.frames import CaseFrame, CaseOutcome
    from judge.core.observations import encode
    from judge.core.protocol import encode_frame
    from judge.core.runner.guards import index_torch

    # The walks over every loaded module (the guards' index, the course package's finder).
    for _name, _module in list(sys.modules.items()):
        pass
    yield
    # A small case's worth of what every case does: seeded inputs, a module's forward and
    # backward in fp32 and bf16, its observations encoded into a frame.
    torch.default_generator.manual_seed(0)
    rng = Rng(0)
    layer = torch.nn.Linear(8, 8)
    x = rng.normal(2, 8).requires_grad_()
    y = layer(x) * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    y.sum().backward()
    yield
    z = layer.to(torch.bfloat16)(x.detach().to(torch.bfloat16)).float()
    head, tensors = encode({"y": y, "z": z, "grad": x.grad, "n": 1, "f": 0.5, "ok": True, "s": "x"})
    encode_frame(CaseFrame(0, "warm", CaseOutcome("ok", 0.0, head)).to_head(), tensors)
    yield
    index_torch()  # what this imported


def _run(out: BinaryIO) -> int:
    prepare()
    import torch

    from judge.core.frames import CaseFrame, CaseOutcome, Done, Hello
    from judge.core.protocol import PROTOCOL_VERSION, encode_frame
    from judge.core.runner.job import MAX_JOB_BYTES, RunnerJob, load_cases_code

    def emit(frame: Frame, tensors: dict[str, torch.Tensor] | None = None) -> None:
        out.write(encode_frame(frame.to_head(), tensors))

    def emit_case(frame: CaseFrame, tensors: dict[str, torch.Tensor]) -> None:
        """A case's frame; one that cannot be written (a string with a lone surrogate, which is
        not UTF-8) is that case's error, not the runner's failure."""
        try:
            data = encode_frame(frame.to_head(), tensors)
        except (ValueError, TypeError, OverflowError) as exc:
            from judge.core.runner.tracebacks import exception_line

            failed = CaseOutcome("error", frame.outcome.time_ms, message=exception_line(exc))
            data = encode_frame(CaseFrame(frame.solution, frame.case, failed).to_head())
        out.write(data)

    # "hello" comes before the job is read: a warm sandbox waits here with everything loaded,
    # and the job's clock starts when its first byte is written.
    emit(Hello(PROTOCOL_VERSION, torch.__version__, sys.version.split()[0]))
    data = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
    if len(data) > MAX_JOB_BYTES:
        raise ValueError("job is larger than the runner accepts")
    job = RunnerJob.from_bytes(data)
    sys.stdin.close()
    torch.set_num_threads(job.threads)

    from judge.core.casekit import Rng, collect_cases
    from judge.core.runner.guards import Guards
    from judge.core.runner.tracebacks import register_source

    cases_mod = types.ModuleType("cases")
    cases_mod.__file__ = "cases.py"
    sys.modules["cases"] = cases_mod
    register_source("cases.py", job.cases_source)
    exec(load_cases_code(job), cases_mod.__dict__)
    by_name = {c.name: c for c in collect_cases(cases_mod)}
    unknown = [n for n in job.case_names if n not in by_name]
    if unknown:
        raise ValueError(f"job names unknown cases: {unknown}")

    from judge.core.casekit import use_data_dir
    from judge.core.runner.parts import FINDER

    data_dir = _write_data(job.data)
    use_data_dir(data_dir)
    guards = Guards()
    guards.install(job.forbidden)

    # Tracebacks show the learner's frames: their solution's and their own parts' (never a
    # reference part's: that code is the author's).
    own_parts = tuple(p.filename for p in job.parts if p.origin != "reference")
    for index, solution in enumerate(job.solutions):
        FINDER.install(job.parts)
        files = (solution.filename, *own_parts)
        impl = _load_solution(emit, index, solution, job.entry_points, files)
        if impl is None:
            continue
        if job.scratch is not None:  # the scratch cell: a snippet or a replay, no cases
            emit(*_scratch(job, guards, files))
            continue
        for name in job.case_names:
            c = by_name[name]
            if job.record_inputs:  # the public cases' job: what each case drew is shown
                from judge.core.runner.inputs import InputLog, RecordingRng

                drawn = InputLog(job.cases_source.splitlines())
                recording = functools.partial(RecordingRng, log=drawn)
                outcome, tensors = _run_case(c.fn, c.seed, impl, recording, guards, files)
                outcome = replace(outcome, inputs=tuple(drawn.draws))
            else:
                outcome, tensors = _run_case(c.fn, c.seed, impl, Rng, guards, files)
            emit_case(CaseFrame(index, name, outcome), tensors)
    emit(Done())
    out.flush()
    if data_dir is not None:
        import shutil

        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


def _scratch(job: Any, guards: Any, files: tuple[str, ...]) -> tuple[Frame, dict[str, Any]]:
    from judge.core.runner import scratch

    spec, module = job.scratch, sys.modules["solution"]
    if spec.get("role") == "reference":
        return scratch.run_reference(spec, module)
    return scratch.run_learner(str(spec.get("snippet", "")), module, job.entry_points, guards, files)


def _write_data(files: dict[str, bytes]) -> str | None:
    """The package's data files, written under a fresh folder of the job's scratch space."""
    if not files:
        return None
    import tempfile
    from pathlib import Path, PurePosixPath

    root = Path(tempfile.mkdtemp(prefix="judge-data-"))
    for rel, content in files.items():
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
            raise ValueError(f"job data path {rel!r} leaves the data folder")
        target = root.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return str(root)


def _load_solution(
    emit: Callable[[Load], None], index: int, solution: Any, entry_points: list[str], files: tuple[str, ...]
) -> EntryPoints | None:
    """Compile and import one solution; emit its load frame. None when it cannot be used."""
    from judge.core.frames import Load
    from judge.core.runner.parts import FINDER, MissingPartError
    from judge.core.runner.tracebacks import learner_line, learner_traceback, register_source

    register_source(solution.filename, solution.source)
    emit(Load(index, "started"))
    try:
        code = compile(solution.source, solution.filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", str(exc))
        text = (getattr(exc, "text", None) or "").rstrip()
        detail = f"第 {line} 行 line {line}: {msg}" if line else str(msg)
        if text:
            detail += f"\n    {text}"
        emit(Load(index, "ce", f"{type(exc).__name__}: {detail}", line=line))
        return None
    module_name = "solution" if index == 0 else f"solution_{index}"
    module = types.ModuleType(module_name)
    module.__file__ = solution.filename
    sys.modules[module_name] = module
    try:
        exec(code, module.__dict__)
    except MissingPartError as exc:
        emit(Load(index, "missing_part", str(exc), missing_part=(exc.problem, exc.module)))
        return None
    except BaseException as exc:
        message = learner_traceback(exc, files)
        emit(Load(index, _failure_status(exc), message, line=learner_line(exc, files)))
        return None
    missing = [n for n in entry_points if n not in module.__dict__]
    if len(missing) == len(entry_points):  # nothing to judge: the file is not this problem's
        emit(Load(index, "ce", missing=tuple(missing)))  # the judge words it (execution)
        return None
    present = [n for n in entry_points if n not in missing]
    not_callable = [n for n in present if not callable(module.__dict__[n])]
    if not_callable:
        emit(Load(index, "ce", not_callable=tuple(not_callable)))
        return None
    # Some entry points missing: the cases that use one fail (`EntryPoints`), the others count.
    emit(Load(index, "ok", parts=tuple(FINDER.used), missing=tuple(missing)))
    return EntryPoints(missing, **{n: module.__dict__[n] for n in present})


class EntryPoints(types.SimpleNamespace):
    """The solution's entry points as the cases see them (`impl.route`). One the solution does not
    define raises MissingEntryPointError when a case reaches for it, so that only the cases that
    use it fail."""

    def __init__(self, missing: list[str], **present: Any) -> None:
        super().__init__(**present)
        object.__setattr__(self, "_missing", frozenset(missing))

    def __getattr__(self, name: str) -> Any:  # only for names the namespace does not hold
        if name in object.__getattribute__(self, "_missing"):
            raise MissingEntryPointError(name)
        raise AttributeError(name)


def _run_case(
    fn: Callable[..., Any], seed: int, impl: Any, rng_cls: Any, guards: Any, learner_files: tuple[str, ...]
) -> tuple[CaseOutcome, dict[str, Any]]:
    import torch

    from judge.core.casekit import CaseSetupError
    from judge.core.frames import CaseOutcome
    from judge.core.observations import ObservationError, encode
    from judge.core.protocol import unsendable
    from judge.core.runner.guards import ForbiddenAPIError
    from judge.core.runner.parts import MissingPartError
    from judge.core.runner.tracebacks import exception_line, learner_line, learner_traceback

    # The CPU generator alone: torch.manual_seed also queues seeds for every accelerator
    # type, formatting a stack trace for each, which costs more than a small case.
    torch.default_generator.manual_seed(seed)
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    guards.reset()
    start = time.perf_counter()
    failed: CaseOutcome | None = None  # its time is set below
    try:
        value = fn(impl, rng_cls(seed))
    except ForbiddenAPIError as exc:
        failed = CaseOutcome("forbidden", api=exc.api)
    except MissingEntryPointError as exc:  # the judge words it (judge.core.execution.case_run)
        failed = CaseOutcome("error", message=str(exc), missing_entry=exc.name)
    except CaseSetupError as exc:
        failed = CaseOutcome("error", message=str(exc))
    except BaseException as exc:
        # A part imported inside the case that nobody provided: named, so the judge can say
        # which problem to solve first.
        part = (exc.problem, exc.module) if isinstance(exc, MissingPartError) else None
        failed = CaseOutcome(
            _failure_status(exc),
            message=learner_traceback(exc, learner_files),
            line=learner_line(exc, learner_files),
            missing_part=part,
        )
    elapsed_ms = round((time.perf_counter() - start) * 1000.0, 3)
    if guards.calls:
        failed = CaseOutcome("forbidden", api=guards.calls[0])
    if failed is not None:
        return replace(failed, time_ms=elapsed_ms), {}
    try:
        obs, tensors = encode(value)
    except (ObservationError, RuntimeError, TypeError) as exc:
        # A sparse or jagged tensor fails in the encoder itself: say what it is, if that is why.
        what = _first_unsendable(value)
        if what is not None:
            return _unreturnable(what, elapsed_ms), {}
        return CaseOutcome("error", elapsed_ms, message=exception_line(exc)), {}
    # The encoder's plain copies: a dtype the stream cannot carry (float8, uint16, complex, ...)
    # would otherwise fail the runner while it writes the frame.
    for t in tensors.values():
        what = unsendable(t)
        if what is not None:
            return _unreturnable(what, elapsed_ms), {}
    return CaseOutcome("ok", elapsed_ms, obs), tensors


def _unreturnable(what: str, time_ms: float) -> CaseOutcome:
    """A case whose value holds a tensor the stream cannot carry: the judge words the message
    from `unreturnable` (judge.core.execution.case_run)."""
    from judge.core.frames import CaseOutcome

    return CaseOutcome("error", time_ms, message=f"a tensor of {what} cannot be returned", unreturnable=what)


def _first_unsendable(value: Any) -> str | None:
    """The first tensor in what a case returned that the stream cannot carry, walked as the
    encoder walks it (dicts, lists, tuples; as deep and as many as it takes); None if none."""
    import torch

    from judge.core.observations import MAX_DEPTH, MAX_NODES
    from judge.core.protocol import unsendable

    pending: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    try:
        while pending and seen < MAX_NODES:
            item, depth = pending.pop()
            seen += 1
            if isinstance(item, torch.Tensor):
                what = unsendable(item)
                if what is not None:
                    return what
            elif depth < MAX_DEPTH and isinstance(item, dict):
                pending.extend((v, depth + 1) for v in reversed(list(item.values())))
            elif depth < MAX_DEPTH and isinstance(item, (list, tuple)):
                pending.extend((v, depth + 1) for v in reversed(item))
    except Exception:  # a tensor subclass of the learner's may raise on any attribute
        return None
    return None


def _failure_status(exc: BaseException) -> Literal["memory", "error"]:
    if isinstance(exc, MemoryError):
        return "memory"
    text = str(exc)
    if isinstance(exc, RuntimeError) and ("can't allocate memory" in text or "not enough memory" in text):
        return "memory"
    return "error"


if __name__ == "__main__":
    sys.exit(main())
