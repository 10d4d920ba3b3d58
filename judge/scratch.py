"""The scratch cell: a learner's code on inputs they write, run in the sandbox and never scored.

Two runs, in two runner processes (`judge.core.runner.scratch`):
1. the learner's: their solution loads, then their snippet runs with its names in scope; the
   frame brings back what the last expression was (as text), and the calls the snippet made
   to the problem's entry points, with their inputs and results, as an observation tree;
2. the reference's, for the calls that look like the public cases (this module decides,
   outside the sandbox, from what it parsed with the protocol's caps): the same entry point,
   tensors of the dtypes the public cases' results have (and integer or boolean ones: indices
   and masks), none larger than the largest tensor of a public result, plain numbers no larger
   than that either, at most `MAX_CALLS` calls. The reference replays only those inputs (data,
   never code) and its results are compared with the learner's by the checker the public
   cases use for a result of that dtype.

The snippet never runs in the reference's process, and nothing of the reference's enters the
learner's. The printed output is the learner run's log, capped like a Run's (`output_kb`).
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from judge.authoring.package import Problem
from judge.core.backend import Backend, Limits
from judge.core.casekit import Case
from judge.core.checkers import Checker, allclose, exact
from judge.core.compare import compare
from judge.core.execution import LOG_TAIL, classify_stop, interpret, limits_for
from judge.core.frames import MAX_REPR, Replayed, ScratchFrame, ScratchRefFrame, ShownValue
from judge.core.messages import msg
from judge.core.observations import ObservationError, Unobservable, decode, encode
from judge.core.protocol import Frame, ParsedStream, StreamLimits, parse_stream, save_safetensors
from judge.core.results import Expected
from judge.core.runner.job import PartSource, RunnerJob, SolutionSource, marshalled_cases
from judge.core.runner.scratch import MAX_CALLS, MAX_SNIPPET
from judge.core.texts import Text
from judge.core.verdicts import Verdict

# Indices and masks: whole numbers carry no precision question, whatever the public cases hold.
ALWAYS_ADMITTED = (torch.int64, torch.int32, torch.bool)
MAX_PLAIN = 64  # plain values (numbers, strings) in one call's arguments
MAX_STR = 64

NO_CASES = "# a scratch job carries no cases\n"

TEXTS = {
    "not_entry": Text("这个调用不是题目的入口", "this call is not one of the problem's entry points"),
    "too_many": Text(
        f"只有前 {MAX_CALLS} 次调用会和参考答案比较",
        f"only the first {MAX_CALLS} calls are compared with the reference",
    ),
    "dtype": Text("公开用例里没有 {dtype} 的张量", "no public case uses {dtype} tensors"),
    "too_large": Text(
        "张量有 {n} 个元素，比公开用例里最大的张量（{most} 个）还大",
        "a tensor of {n} elements is larger than the largest of the public cases ({most})",
    ),
    "big_number": Text(
        "参数 {value} 比公开用例里最大的张量（{most} 个元素）还大",
        "the argument {value} is larger than the largest tensor of the public cases ({most} elements)",
    ),
    "odd_value": Text(
        "参数里有参考答案无法接收的值（{kind}）",
        "an argument is of a kind the reference cannot be given ({kind})",
    ),
    "state": Text(
        "你的模块的参数名与参考答案不同（多出：{unknown}；缺少：{lacking}）",
        "your module's parameters are named differently from the reference's "
        "(extra: {unknown}; missing: {lacking})",
    ),
    "ref_error": Text("参考答案在这组输入上出错：{error}", "the reference raised on these inputs: {error}"),
    "ref_failed": Text("参考答案没有运行完：{why}", "the reference did not finish: {why}"),
    "match": Text("与参考答案一致（{rule}）", "matches the reference ({rule})"),
    "budget": Text(
        "这道题你近期请参考答案比较的次数已用完（{limit} 次 / {hours} 小时），稍后再试；你的结果照常显示",
        "you have used this problem's comparisons with the reference for now ({limit} per {hours} h); "
        "try again later. Your own result is shown as usual",
    ),
    "no_calls": Text(
        "代码没有调用题目的入口（{entries}），所以没有可比较的参考答案结果",
        "the snippet called none of the problem's entry points ({entries}), "
        "so there is no reference result to compare",
    ),
}


def text(key: str, **params: object) -> dict[str, str]:
    t = TEXTS[key]
    return {"zh": t.zh.format(**params), "en": t.en.format(**params)}


@dataclass(frozen=True)
class Budget:
    """The reference's answers a learner has left on a problem: `left` of `limit` per
    `window_s` seconds (counted by the caller, which keeps the runs)."""

    left: int
    limit: int
    window_s: float


@dataclass(frozen=True)
class Profile:
    """What the public cases' results look like: the yardstick for "public-case-like"."""

    dtypes: frozenset[torch.dtype]
    max_elements: int
    checkers: dict[torch.dtype, Checker] = field(default_factory=dict)

    def checker_for(self, dtype: torch.dtype) -> Checker:
        found = self.checkers.get(dtype)
        if found is not None:
            return found
        return allclose() if dtype.is_floating_point else exact()


def _tensors(tree: Any, path: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(tree, torch.Tensor):
        yield path, tree
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _tensors(v, f"{path}.{k}" if path else str(k))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _tensors(v, f"{path}[{i}]")


def allows_error(checker: Checker) -> bool:
    """Whether `checker` allows a float any error at all, as its own `excess` says of one unit in
    the last place at 1.0 (never its class or name: a checker of any kind answers alike). The
    exact checker allows none."""
    one = torch.ones(1)
    excess = checker.excess(one, torch.nextafter(one, torch.full_like(one, 2.0)))
    return excess is not None and bool((excess <= 1).all())


def public_profile(problem: Problem, expected: Expected) -> Profile:
    """The dtypes and the largest size of the public cases' reference results, and for each
    dtype the checker those cases use for it (one that allows no error, for floats, only when
    no case checks that dtype with a tolerance: exact checks there compare initial parameters)."""
    dtypes: set[torch.dtype] = set()
    most = 1
    checkers: dict[torch.dtype, Checker] = {}
    for case in problem.select_cases("public"):
        run = expected.reference.cases.get(case.name)
        if run is None or run.status != "ok":
            continue
        for path, t in _tensors(run.observations):
            dtypes.add(t.dtype)
            most = max(most, t.numel())
            chk = case.checker_for(path)
            if not chk.elementwise:  # a statistic of random draws says nothing of one call's result
                continue
            have = checkers.get(t.dtype)
            if have is None or (not allows_error(have) and allows_error(chk)):
                checkers[t.dtype] = chk
    for dtype, chk in list(checkers.items()):
        if dtype.is_floating_point and not allows_error(chk):
            checkers[dtype] = allclose()
    return Profile(frozenset(dtypes), most, checkers)


def admit(call: Any, entry_points: Sequence[str], profile: Profile) -> dict[str, str] | None:
    """Why a recorded call is not public-case-like (a text in both languages), or None."""
    if not isinstance(call, dict) or call.get("entry") not in entry_points:
        return text("not_entry")
    kind = call.get("kind")
    parts = [call.get("args"), call.get("kwargs")]
    if kind == "module":
        parts += [call.get("init"), call.get("init_kwargs"), call.get("state")]
    elif kind != "function":
        return text("not_entry")
    if not isinstance(call.get("args"), list) or not isinstance(call.get("kwargs"), dict):
        return text("odd_value", kind="arguments")
    if kind == "module" and not (
        isinstance(call.get("init"), list)
        and isinstance(call.get("init_kwargs"), dict)
        and isinstance(call.get("state"), dict)
    ):
        return text("odd_value", kind="module")
    if kind == "module" and not all(isinstance(v, torch.Tensor) for v in call["state"].values()):
        return text("odd_value", kind="state_dict")
    total = 0
    plain = 0
    for value in _leaves(parts):
        if isinstance(value, torch.Tensor):
            if value.dtype not in profile.dtypes and value.dtype not in ALWAYS_ADMITTED:
                return text("dtype", dtype=str(value.dtype).removeprefix("torch."))
            if value.numel() > profile.max_elements:
                return text("too_large", n=value.numel(), most=profile.max_elements)
            total += value.numel()
            continue
        plain += 1
        if isinstance(value, Unobservable):
            return text("odd_value", kind=value.type_name[:80])
        if isinstance(value, bool) or value is None or isinstance(value, torch.dtype):
            continue
        if isinstance(value, int) and abs(value) > profile.max_elements:
            return text("big_number", value=value, most=profile.max_elements)
        if isinstance(value, float) and (not math.isfinite(value) or abs(value) > 1e6):
            return text("big_number", value=value, most=profile.max_elements)
        if isinstance(value, str) and len(value) > MAX_STR:
            return text("odd_value", kind="str")
    if plain > MAX_PLAIN or total > 4 * profile.max_elements:
        return text("too_large", n=total, most=profile.max_elements)
    return None


def _leaves(tree: Any, depth: int = 0) -> Iterator[Any]:
    if isinstance(tree, dict):
        for v in tree.values():
            yield from _leaves(v, depth + 1)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            yield from _leaves(v, depth + 1)
    else:
        yield tree


def show(value: Any) -> str:
    """A value as the learner reads it in Python (torch's repr summarises a large tensor)."""
    if isinstance(value, Unobservable):
        return f"<{value.type_name}>"
    return repr(value)[:MAX_REPR]


def signature(call: dict[str, Any]) -> str:
    """`RMSNorm(8)(bfloat16[2, 8])`: the call as the learner wrote it, tensors as dtype[shape]."""

    def arg(v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return f"{str(v.dtype).removeprefix('torch.')}[{', '.join(map(str, v.shape))}]"
        if isinstance(v, (list, tuple)):
            inner = ", ".join(arg(x) for x in v)
            return f"[{inner}]" if isinstance(v, list) else f"({inner})"
        return show(v)[:40]

    def args(pos: list[Any], kw: dict[str, Any]) -> str:
        return ", ".join([arg(v) for v in pos] + [f"{k}={arg(v)}" for k, v in kw.items()])

    head = str(call["entry"])
    if call["kind"] == "module":
        head += f"({args(call['init'], call['init_kwargs'])})"
    return f"{head}({args(call['args'], call['kwargs'])})"


def _signature_or_name(call: Any) -> str:
    if not isinstance(call, dict):
        return "?"
    try:
        return signature(call)
    except (KeyError, TypeError, AttributeError):
        return str(call.get("entry", "?"))[:80]


def max_difference(expected: Any, got: Any) -> float | None:
    worst: float | None = None
    pairs = zip(list(_tensors(expected)), list(_tensors(got)), strict=False)
    for (_, e), (_, g) in pairs:
        if e.shape != g.shape or e.numel() == 0:
            continue
        d = (e.double() - g.double()).abs()
        d = d[torch.isfinite(d)]
        if d.numel():
            worst = max(worst or 0.0, float(d.max()))
    return worst


@dataclass
class Scratch:
    """One scratch run's outcome, as stored (texts in both languages) and shown."""

    verdict: Verdict
    status: str  # ok, error, memory, forbidden, ce (the snippet), load (the solution), stopped
    message: str = ""
    text: dict[str, str] | None = None  # the judge's own words, where the message is not a traceback
    line: int | None = None
    log: str = ""
    value: ShownValue | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    note: dict[str, str] | None = None
    skipped: int = 0
    time_ms: float = 0.0
    elapsed_ms: float = 0.0
    replayed: int = 0  # calls the reference answered: what the reveal budget counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "scratch",
            "verdict": self.verdict.value,
            "score": 0,
            "max_score": 0,
            "status": self.status,
            "message": self.message,
            "text": self.text,
            "line": self.line,
            "log": self.log,
            "value": self.value.to_dict() if self.value is not None else None,
            "calls": self.calls,
            "note": self.note,
            "skipped": self.skipped,
            "time_ms": self.time_ms,
            "elapsed_ms": self.elapsed_ms,
            "replayed": self.replayed,
        }


def _job(
    problem: Problem, solution: SolutionSource, scratch: dict[str, Any], parts: Sequence[PartSource]
) -> RunnerJob:
    # No cases module at all, public or hidden: a snippet replays on the reference only inputs
    # the learner wrote, never values a case made (a hidden case's function called from the
    # snippet was an oracle for that case's expected outputs).
    return RunnerJob(
        problem=problem.id,
        entry_points=list(problem.spec.entry_points),
        cases_source=NO_CASES,
        cases_code=marshalled_cases(NO_CASES),
        case_names=[],
        solutions=[solution],
        forbidden=list(problem.spec.forbidden),
        parts=list(parts),
        data=dict(problem.data()),  # raw, after the job's JSON (judge.core.runner.job)
        scratch=scratch,
    )


def _run(backend: Backend, job: RunnerJob, limits: Limits, kind: str) -> tuple[Any, Frame | None]:
    """Run a scratch job; (the interpreted load and stop, the scratch frame if one came)."""
    outcome = backend.run(job.to_bytes(), limits)
    parsed = parse_stream(outcome.result, StreamLimits(max_bytes=limits.result_bytes))
    mine = [f for f in parsed.frames if f.kind == kind]
    rest = [f for f in parsed.frames if f.kind != kind]
    result = interpret(ParsedStream(rest, parsed.error), outcome, 1, limits)
    if len(mine) > 1 and result.stop is None:  # learner code wrote frames of its own
        result.stop = classify_stop(outcome, True, True, "more than one scratch frame", limits, True)
    return result, (mine[0] if len(mine) == 1 else None)


def run_scratch(
    problem: Problem,
    code: str,
    snippet: str,
    backend: Backend,
    expected: Expected,
    startup_s: float,
    parts: Sequence[PartSource] = (),
    reference_parts: Sequence[PartSource] = (),
    budget: Budget | None = None,
) -> Scratch:
    """`budget`: how many calls the reference may still answer for this learner and problem
    (None: no bound, for an author's own runs). Each answer reveals the reference's outputs on
    inputs of the learner's choosing, so the site bounds them over time (web.scratch)."""
    started = time.perf_counter()
    limits = limits_for(problem, startup_s)
    job = _job(
        problem,
        SolutionSource("solution", code),
        {"role": "learner", "snippet": snippet[:MAX_SNIPPET]},
        parts,
    )
    result, frame = _run(backend, job, limits, "scratch")
    log = result.log[-(limits.log_bytes or LOG_TAIL) :]
    run = result.solutions[0]

    def done(s: Scratch) -> Scratch:
        s.log = log
        s.elapsed_ms = round((time.perf_counter() - started) * 1000.0, 1)
        return s

    if run.load_status not in (None, "ok", "started"):
        verdict = Verdict.CE if run.load_status in ("ce", "missing_part") else Verdict.RE
        return done(Scratch(verdict, "load", message=run.load_message))
    if result.stop is not None:
        return done(Scratch(result.stop.verdict, "stopped", text=result.stop.text.to_dict()))
    if frame is None:
        # The runner ended without its frame (a snippet that left early): classify_stop
        # always has a reason when the run did not finish.
        stop = classify_stop(result.outcome, True, False, "no scratch frame", limits, True)
        return done(Scratch(Verdict.RE, "stopped", text=stop.text.to_dict() if stop else None))
    try:
        scratch, calls = _read_learner(frame)
    except (ObservationError, ValueError, TypeError) as exc:
        stop = classify_stop(result.outcome, True, True, str(exc)[:200], limits, True)
        return done(Scratch(Verdict.RE, "stopped", text=stop.text.to_dict() if stop else None))
    scratch.calls, scratch.replayed = _compare_calls(
        problem, calls, backend, expected, limits, reference_parts, budget
    )
    if not calls and scratch.status == "ok":
        scratch.note = text("no_calls", entries=", ".join(problem.spec.entry_points))
    if scratch.skipped:
        scratch.note = text("too_many")
    return done(scratch)


def _read_learner(frame: Frame) -> tuple[Scratch, list[Any]]:
    """The learner's frame (ScratchFrame.parse checks it field by field: it was written by a
    process that ran their code) and the calls it recorded, decoded with the protocol's caps."""
    head = ScratchFrame.parse(frame.head)
    words = None
    if head.status == "forbidden":
        words = msg("forbidden", api=head.api if head.api is not None else "?").to_dict()
    calls = decode(head.obs, frame.tensors)
    if not isinstance(calls, list):
        raise ValueError("recorded calls are not a list")
    skipped = head.skipped
    if len(calls) > MAX_CALLS:
        skipped += len(calls) - MAX_CALLS
        calls = calls[:MAX_CALLS]
    verdict = {"ok": Verdict.AC, "ce": Verdict.CE, "memory": Verdict.MLE}.get(head.status, Verdict.RE)
    found = Scratch(verdict, head.status, message=head.message, text=words, line=head.line, value=head.value)
    found.skipped, found.time_ms = skipped, head.time_ms
    return found, calls


def _compare_calls(
    problem: Problem,
    calls: list[Any],
    backend: Backend,
    expected: Expected,
    limits: Limits,
    reference_parts: Sequence[PartSource],
    budget: Budget | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Each call as shown, and how many the reference answered."""
    profile = public_profile(problem, expected)
    entries = list(problem.spec.entry_points)
    shown: list[dict[str, Any]] = []
    admitted: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for call in calls:
        reason = admit(call, entries, profile)
        row: dict[str, Any] = {
            "reference": None,
            "match": None,
            "difference": None,
            "detail": None,
            "reason": reason,
        }
        if isinstance(call, dict) and reason is None:
            row["call"] = signature(call)
            row["learner"] = show(call.get("out"))
            if budget is not None and len(admitted) >= budget.left:  # the reveal budget is spent
                row["reason"] = text("budget", limit=budget.limit, hours=f"{budget.window_s / 3600:g}")
            else:
                admitted.append((call, row))
        else:
            row["call"] = _signature_or_name(call)
            row["learner"] = show(call.get("out")) if isinstance(call, dict) else ""
        shown.append(row)
    if admitted:
        _replay(problem, admitted, backend, profile, limits, reference_parts)
    return shown, sum(1 for _, row in admitted if row["reference"] is not None)


def _replay(
    problem: Problem,
    admitted: list[tuple[dict[str, Any], dict[str, Any]]],
    backend: Backend,
    profile: Profile,
    limits: Limits,
    reference_parts: Sequence[PartSource],
) -> None:
    """The reference on the admitted inputs, in a runner process of its own (trusted code and
    data only); each row gets its result and the comparison."""
    inputs = [{k: v for k, v in call.items() if k != "out"} for call, _ in admitted]
    manifest, tensors = encode(inputs)
    blob = base64.b64encode(save_safetensors(tensors) if tensors else b"").decode("ascii")
    ref = problem.reference
    job = _job(
        problem,
        SolutionSource("reference", ref.source(), "reference.py"),
        {"role": "reference", "calls": manifest, "blob": blob},
        reference_parts,
    )
    result, frame = _run(backend, job, limits, "scratch_ref")
    failed = None
    if result.stop is not None:
        why = result.stop.text
        failed = {
            "zh": TEXTS["ref_failed"].zh.format(why=why.zh[:300]),
            "en": TEXTS["ref_failed"].en.format(why=why.en[:300]),
        }
    elif frame is None or result.solutions[0].load_status != "ok":
        failed = text("ref_failed", why=result.solutions[0].load_message[:300] or "no result")
    results: list[Replayed] = []
    if failed is None and frame is not None:
        trees = decode(ScratchRefFrame.parse(frame.head).obs, frame.tensors)
        results = [Replayed.from_tree(t) for t in trees] if isinstance(trees, list) else []
    for i, (call, row) in enumerate(admitted):
        if failed is not None or i >= len(results):
            row["reason"] = failed or text("ref_failed", why="no result")
            continue
        res = results[i]
        if res.status == "state":
            row["reason"] = text(
                "state", unknown=", ".join(res.unknown) or "-", lacking=", ".join(res.lacking) or "-"
            )
            continue
        if res.status != "ok":
            row["reason"] = text("ref_error", error=res.message[:300])
            continue
        want, got = res.out, call.get("out")
        row["reference"] = show(want)
        first = next(_tensors(want), None)
        checker = profile.checker_for(first[1].dtype) if first else exact()
        case = Case("scratch", lambda impl, rng: None, 0, True, checker)
        mismatches = compare(case, want, got)
        row["match"] = not mismatches
        row["difference"] = max_difference(want, got)
        row["detail"] = mismatches[0].text.to_dict() if mismatches else text("match", rule=checker.describe())
        if mismatches and mismatches[0].path:
            path = mismatches[0].path
            row["detail"] = {k: f"{path}: {v}" for k, v in row["detail"].items()}
