"""`judge validate`: proves a package sound, or says exactly what to fix.

A sound package: problem.toml is valid; statements render; the cases load and their points
add up; the reference passes every case and gives identical observations in two separate
runs; no case returns a fact it computed in the learner's process; the starter does not pass;
every accepted solution passes; every wrong solution fails at least one case and its own hint
is the one a learner with its outputs would see; and the cases kill every mutant of the
reference (judge.authoring.mutation) that the package does not declare equivalent, with at least
MIN_MUTANTS of them and at most MAX_EQUIVALENT declared.

All of the author's solutions run in two runner processes and the mutants in a few more (they
are trusted code), so a package validates in seconds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from judge.authoring.mutation.run import MutationScore, score_mutants
from judge.authoring.package import PackageError, Problem, SolutionFile
from judge.authoring.properties import PropertyReport
from judge.authoring.properties import check as check_properties
from judge.authoring.properties import render as render_properties
from judge.authoring.solutions import notes_check
from judge.authoring.statement import problems_in
from judge.core.backend import Backend
from judge.core.checkers import exact
from judge.core.compare import compare
from judge.core.execution import batch_limits, limits_for, run_solutions
from judge.core.grading import attach_hints, grade_solution
from judge.core.results import Expected, RunResult, WrongSolution
from judge.core.runner.job import SolutionSource
from judge.core.verdicts import Verdict, worst
from judge.settings import JudgeSettings

# The bar a package must clear before learners see it (docs/authoring.md says why): enough
# public cases to learn from, enough hidden ones that passing means the work is right, a second
# correct formulation (so the cases do not demand the reference's exact ops), and enough known
# mistakes that the hints cover what learners really get wrong.
MIN_PUBLIC = 2
MIN_HIDDEN = 6
MIN_ACCEPTED = 1
MIN_WRONG = 3
# Mutation testing (docs/authoring.md): enough single-change mutants of the reference that
# killing them all means the cases check what the statement promises, and few declared
# equivalent, so that a declaration cannot stand in for a missing case.
MIN_MUTANTS = 25
MAX_EQUIVALENT = 0.15
# Feedback (docs/authoring.md): of the killed mutants, at least this share must leave the learner
# with a reason (a diagnosis, a listed mistake's hint, or a verdict that names its cause), not
# numbers alone. Each one below it is listed, so the author sees which mistakes teach nothing.
MIN_FEEDBACK = 0.8
SHOWN_UNEXPLAINED = 8
# Properties of the cases (judge.authoring.properties, issue 28): every argument varied in a hidden case,
# one object called several times, parameters edited between calls, non-contiguous, batched
# and length-1 inputs, two instances interleaved. Each package is reported now, and a property
# neither met nor waived in problem.toml's [waivers] is printed as a warning. This turns on (the
# check then fails on such a gap, or on a waiver that waives nothing) once the packages carry the
# property cases (issue 28).
ENFORCE_PROPERTIES = True


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Validation:
    path: str
    checks: list[Check] = field(default_factory=list)
    # What the package holds: public and hidden cases, accepted and wrong solutions.
    counts: dict[str, int] = field(default_factory=dict)
    mutants: MutationScore | None = None
    properties: PropertyReport | None = None

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(Check(name, ok, detail))
        return ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "counts": self.counts,
            "checks": [asdict(c) for c in self.checks],
            "mutants": self.mutants.to_dict() if self.mutants is not None else None,
            "feedback": self.mutants.feedback() if self.mutants is not None else None,
            "properties": (
                {"enforced": ENFORCE_PROPERTIES, **self.properties.to_dict()}
                if self.properties is not None
                else None
            ),
        }


def validate_package(
    path: Path, backend: Backend, settings: JudgeSettings, min_mutants: int = MIN_MUTANTS
) -> Validation:
    """Every check of the package; `min_mutants` is lowered only by tests of tiny packages."""
    v = Validation(str(path))
    try:
        problem = Problem(path)
    except PackageError as exc:
        v.add("problem.toml", False, str(exc))
        return v
    try:
        cases = problem.cases
    except PackageError as exc:
        v.add("problem.toml", True, f"valid (id {problem.id})")
        v.add("cases", False, str(exc))
        return v
    total = sum(c.points for c in cases)
    placeholder = "TODO" in problem.spec.chapter
    v.add(
        "problem.toml",
        not placeholder,
        f"valid (id {problem.id}, version {problem.spec.version})"
        + ("; chapter is still TODO: name the chapter this problem belongs to" if placeholder else ""),
    )
    v.add(
        "cases",
        total == problem.spec.points and any(c.public for c in cases),
        f"{len(cases)} cases, {sum(c.public for c in cases)} public, {total} points"
        + ("" if total == problem.spec.points else f" but problem.toml says points = {problem.spec.points}")
        + ("" if any(c.public for c in cases) else "; make at least one case public (public=True)"),
    )
    _check_statements(v, problem)
    _check_forbidden(v, problem)
    _check_facts_in_cases(v, problem)
    if problem.spec.parts:
        try:
            uses = ", ".join(f"{p.id} ({p.module_name})" for p in problem.part_problems)
        except PackageError as exc:
            v.add("parts", False, str(exc))
            return v
        v.add("parts", True, f"solutions may import {uses}; judged here with the parts' references")

    wrong = problem.solutions("wrong")
    accepted = problem.solutions("accepted")
    v.add(
        "solutions",
        bool(wrong) and all(w.hint() for w in wrong),
        f"{len(accepted)} accepted, {len(wrong)} wrong"
        + ("" if wrong else "; add known mistakes under solutions/wrong/ (module docstring = hint)")
        + "".join(f"; {w.name} has no docstring hint" for w in wrong if not w.hint()),
    )
    v.add("notes", *notes_check(problem))
    v.add("changes", *change_note_check(problem))
    v.counts = {
        "public": sum(c.public for c in cases),
        "hidden": sum(not c.public for c in cases),
        "accepted": len(accepted),
        "wrong": len(wrong),
    }
    _check_coverage(v)

    files = [problem.reference, problem.starter, *accepted, *wrong]
    names = [c.name for c in cases]
    limits = batch_limits(limits_for(problem, settings.startup_s), len(files))
    parts = problem.reference_parts()
    first = run_solutions(problem, [_source(f) for f in files], names, backend, limits, parts)
    second = run_solutions(
        problem, [_source(problem.reference)], names, backend, batch_limits(limits, 1), parts
    )
    if not _runs_cleanly(v, first) or not _runs_cleanly(v, second):
        return v

    ref = first.solutions[0]
    ref_failures = [f"{n}: {c.message or c.status}" for n, c in ref.cases.items() if c.status != "ok"]
    if ref.load_status != "ok":
        v.add("reference", False, f"does not load: {ref.load_message}")
        return v
    if not v.add(
        "reference",
        not ref_failures and len(ref.cases) == len(cases),
        f"passes all {len(cases)} cases" if not ref_failures else "fails:\n" + "\n".join(ref_failures),
    ):
        return v
    _check_determinism(v, problem, first, second)
    _check_properties(v, problem)

    expected = Expected(
        reference=ref,
        wrong=[
            WrongSolution(f.name, f.hint(), r)
            for f, r in zip(wrong, first.solutions[-len(wrong) :], strict=True)
        ]
        if wrong
        else [],
    )
    for f, run in zip(files[1:], first.solutions[1:], strict=True):
        results = grade_solution(cases, run, None, expected)
        verdict = worst([r.verdict for r in results])
        failing = [r for r in results if r.verdict != Verdict.AC]
        if f.kind == "starter":
            v.add(
                "starter",
                verdict != Verdict.AC,
                f"does not pass ({verdict} on {len(failing)} cases)"
                if verdict != Verdict.AC
                else "passes every case: the starter must leave the work to the learner",
            )
        elif f.kind == "accepted":
            v.add(f.name, verdict == Verdict.AC, "AC" if verdict == Verdict.AC else _failures(failing))
        else:
            _check_wrong(v, f, cases, results, run, expected)
    reference_s = sum(c.time_ms for c in ref.cases.values()) / 1000
    v.mutants = score_mutants(problem, backend, expected, reference_s, settings.startup_s)
    _check_mutants(v, v.mutants, min_mutants)
    return v


def _check_mutants(v: Validation, score: MutationScore, min_mutants: int) -> None:
    problems: list[str] = []
    if score.generated < min_mutants:
        problems.append(
            f"only {score.generated} mutants (at least {min_mutants}): the reference is too short to "
            "show that the cases are strong; write it out as a learner would"
        )
    declared = len(score.declared_survivors)
    if declared > MAX_EQUIVALENT * max(score.generated, 1):
        problems.append(
            f"{declared} of {score.generated} declared equivalent (at most {MAX_EQUIVALENT:.0%}): "
            "add cases that tell them apart instead"
        )
    problems.extend(
        f"survivor {r.mutant.id}: line {r.mutant.line}: {r.mutant.change}" for r in score.survivors
    )
    problems.extend(
        f"declared equivalent but not a surviving mutant (killed, or gone with an edit of the "
        f"reference): {stale}"
        for stale in score.stale
    )
    explained = len(score.with_feedback)
    if score.killed and explained < MIN_FEEDBACK * len(score.killed):
        problems.append(
            f"only {explained} of {len(score.killed)} killed mutants come with feedback (at least "
            f"{MIN_FEEDBACK:.0%}): a learner who makes one of these mistakes sees numbers only; add the "
            "mistake under solutions/wrong/ with a hint, or a case whose failure a diagnoser can name"
        )
        problems.extend(
            f"no feedback: {r.mutant.id}: line {r.mutant.line}: {r.mutant.change}"
            for r in score.unexplained[:SHOWN_UNEXPLAINED]
        )
    state = score.groups()["state"]
    summary = (
        f"{score.generated} generated, {len(score.killed)} killed, {declared} equivalent, "
        f"{len(score.survivors)} survived; {explained} of {len(score.killed)} killed come with feedback "
        f"(a diagnosis, a hint or a verdict that says why); of them from the state operators: "
        f"{state.generated} generated, {state.killed} killed, {state.equivalent} equivalent, "
        f"{state.with_feedback} of {state.killed} killed with feedback"
    )
    if score.survivors:
        summary += (
            ": each survivor is a change of the reference that every case accepts; add a case "
            "that checks the promise it breaks, or declare it equivalent in problem.toml if no "
            "input can tell it apart"
        )
    unspecific = [
        f"unspecific hint, shown for {u['mutants']} mutants: {u['hint']}" for u in score.unspecific_hints()
    ]
    v.add("mutants", not problems, "\n".join([summary, *problems, *unspecific]))


def _check_properties(v: Validation, problem: Problem) -> None:
    """The properties of the cases (judge.authoring.properties), run on the reference in this process; a
    gap fails the check only with ENFORCE_PROPERTIES, and is a warning until then."""
    report = check_properties(problem)
    v.properties = report
    broken = bool(report.error or report.gaps() or report.stale)
    v.add("properties", not (ENFORCE_PROPERTIES and broken), render_properties(report, ENFORCE_PROPERTIES))


def _check_forbidden(v: Validation, problem: Problem) -> None:
    """A misspelt forbidden name would forbid nothing (the runner skips names this torch lacks)."""
    from judge.core.runner.guards import resolve

    missing = []
    for dotted in problem.spec.forbidden:
        try:
            resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(dotted)
    if problem.spec.forbidden:
        v.add(
            "forbidden",
            not missing,
            f"{len(problem.spec.forbidden)} APIs guarded"
            if not missing
            else "not found in this torch (misspelt?): " + ", ".join(missing),
        )


def _check_coverage(v: Validation) -> None:
    n = v.counts
    short = [
        f"{what}: {have} < {need}"
        for what, have, need in (
            ("public cases", n["public"], MIN_PUBLIC),
            ("hidden cases", n["hidden"], MIN_HIDDEN),
            ("accepted alternatives (solutions/accepted/)", n["accepted"], MIN_ACCEPTED),
            ("wrong solutions (solutions/wrong/)", n["wrong"], MIN_WRONG),
        )
        if have < need
    ]
    summary = (
        f"{n['public']} public and {n['hidden']} hidden cases, {n['accepted']} accepted, {n['wrong']} wrong"
    )
    v.add("coverage", not short, summary + ("" if not short else "; too few " + "; ".join(short)))


def _source(f: SolutionFile) -> SolutionSource:
    return SolutionSource(f.name, f.source(), f"{f.name}.py")


def _runs_cleanly(v: Validation, result: RunResult) -> bool:
    if result.stop is None:
        return True
    v.add(
        "runner",
        False,
        f"the author's solutions did not run to the end: {result.stop.message}\n{result.log[-2000:]}",
    )
    return False


def change_note_check(problem: Problem) -> tuple[bool, str]:
    """A version after the first says what it changed: a learner accepted on an older version
    reads the note beside the problem (issue 29)."""
    version = problem.spec.version
    if version == 1:
        return True, "version 1: nothing changed yet"
    note = problem.spec.changes.get(str(version))
    if note is None:
        return False, (
            f"version {version} has no change note: add [changes.{version}] with zh and en, "
            "one line each saying what this version changed"
        )
    return True, f"version {version}: {note.en}"


def _check_statements(v: Validation, problem: Problem) -> None:
    notes: list[str] = []
    ok = True
    for name in ("statement.zh.md", "statement.en.md"):
        if not problem.file(name).exists():
            continue
        found = problems_in(problem.read(name))
        ok = ok and not found
        notes.extend(f"{name}: {p}" for p in found)
    langs = "zh" + (", en" if problem.file("statement.en.md").exists() else "")
    v.add("statements", ok, f"{langs} render" if ok else "\n".join(notes))


def _check_determinism(v: Validation, problem: Problem, first: RunResult, second: RunResult) -> None:
    strict = exact()
    diffs = []
    for c in problem.cases:
        a, b = first.solutions[0].cases.get(c.name), second.solutions[0].cases.get(c.name)
        if a is None or b is None:
            diffs.append(f"{c.name}: missing in one run")
            continue
        strict_case = replace(c, checker=strict, checkers={})
        diffs.extend(f"{c.name}: {m}" for m in compare(strict_case, a.observations, b.observations)[:1])
    v.add(
        "deterministic",
        not diffs,
        "two reference runs give identical observations"
        if not diffs
        else "the reference gives different observations in two runs (seed every random input from rng):\n"
        + "\n".join(diffs),
    )


def _check_facts_in_cases(v: Validation, problem: Problem) -> None:
    """No case returns a value it derived from the learner's objects by a comparison, a
    predicate or a statistic read back (the rule is above `_FactFinder`): the judge must
    compute such facts from the observed data, with its checkers."""
    try:
        found = facts_in_cases(problem.read("cases.py"))
    except SyntaxError as exc:  # the cases loaded, so this cannot happen; say so if it does
        v.add("facts", False, f"cases.py could not be read: {exc}")
        return
    refused: dict[tuple[int, str, str], list[str]] = {}
    for name, facts in found.items():
        for fact in facts:
            refused.setdefault((fact.line, fact.code, fact.why), []).append(name)
    if not refused:
        v.add("facts", True, "every case returns data; no fact is computed in the learner's process")
        return
    lines = [
        f"line {line}: {why}: `{code}` (case {', '.join(names)})"
        for (line, code, why), names in sorted(refused.items())
    ]
    v.add(
        "facts",
        False,
        "cases compute facts in the learner's process, where a patched torch or a module that looks "
        "at its caller decides what they say: return the tensors and let a checker compare them "
        "(exact or allclose with the reference's, distribution() for random values, facts() for "
        "yes-or-no properties; docs/authoring.md)\n" + "\n".join(lines),
    )


def _check_wrong(
    v: Validation, f: SolutionFile, cases: list[Any], results: list[Any], run: Any, expected: Expected
) -> None:
    failing = [r for r in results if r.verdict != Verdict.AC]
    if not failing:
        v.add(f.name, False, "passes every case: add a case that catches this mistake")
        return
    attach_hints(cases, results, run, expected)
    own = f.hint()
    shown = [r.name for r in failing if r.hint == own]
    if not shown:
        others = sorted({r.hint.splitlines()[0][:50] for r in failing if r.hint})
        v.add(
            f.name,
            False,
            f"fails {len(failing)} cases but a learner with these outputs is never shown its hint"
            + (f" (shown instead: {'; '.join(others)})" if others else "")
            + ": make a case where it differs from the other wrong solutions",
        )
        return
    v.add(f.name, True, f"caught by {', '.join(r.name for r in failing)}; hint shown on {len(shown)}")


def _failures(failing: list[Any]) -> str:
    return "fails:\n" + "\n".join(f"{r.name} {r.verdict}: {r.message}" for r in failing)


def render_validation(results: list[Validation]) -> str:
    lines = []
    for res in results:
        lines.append(f"{Path(res.path).name}  {'OK' if res.ok else 'NOT SOUND'}")
        width = max((len(c.name) for c in res.checks), default=8)
        for c in res.checks:
            mark = "✓" if c.ok else "✗"
            detail = c.detail.splitlines() or [""]
            lines.append(f"  {mark} {c.name:<{width}}  {detail[0]}")
            lines.extend(f"    {'':<{width}}  {d}" for d in detail[1:])
    bad = [r for r in results if not r.ok]
    lines.append("")
    lines.append(f"{len(results) - len(bad)}/{len(results)} packages sound")
    return "\n".join(lines)


# ---------------------------------------------------------------- facts computed in a case

# A case runs in the learner's process, where a patched torch or a module that looks at its
# caller can make any computation answer as it likes (docs/architecture.md, "Forbidden APIs"):
# a case returns data, and the judge computes facts about it with its checkers. So a case may
# not return a value it derives from the learner's objects by a comparison (`==`, `<`, `is`,
# `in`, ... where a side reads an attribute or calls a method: a tensor, a module, an answer)
# or `not`; by a predicate (`all`, `any`, `isinstance`, `hasattr`, `callable`, `torch.equal`,
# `torch.allclose`, ...) or `bool(...)`; by reading a tensor's value back (`.item()`,
# `.tolist()`, `.data_ptr()`, ...); or by `int`, `float`, `round`, `abs`, `len`, `sum`, `min` or
# `max` of something that calls or compares. Found statically: what a case returns is followed
# back through its local names, the dicts and lists it filled and the helpers of cases.py it
# called. Reading a value as it is (`int(cache.length)`, a shape, a constant, the number of
# tensors an answer holds) is not derived, nor is a helper's constant (`True` after a call,
# `False` in its `except`), `outcome(...)`'s string, or a test of two plain names
# (`p in message`).
_PREDICATES = frozenset({"all", "any", "isinstance", "issubclass", "hasattr", "callable"})
_CONVERSIONS = frozenset({"int", "float", "complex", "round", "abs", "len", "sum", "min", "max"})
_TORCH_PREDICATES = frozenset(
    {"equal", "allclose", "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "is_same_size"}
)
_READ_BACK = frozenset(
    {"item", "tolist", "equal", "allclose", "data_ptr", "is_contiguous", "is_set_to", "storage_offset"}
)
# Calls whose result holds what their arguments hold, and methods that put values in a container.
_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "frozenset", "sorted", "reversed"})
_FILLERS = frozenset({"update", "append", "extend", "add", "insert", "setdefault"})
_MAX_DEPTH = 24


@dataclass
class _Scope:
    """A function's local names: what each was assigned (with the element taken from a tuple it
    was unpacked from), what was put into it, and the functions defined inside it."""

    parent: _Scope | None
    assigned: dict[str, list[tuple[ast.expr, int | None]]] = field(default_factory=dict)
    filled: dict[str, list[ast.expr]] = field(default_factory=dict)
    helpers: dict[str, ast.FunctionDef] = field(default_factory=dict)


@dataclass(frozen=True)
class _Fact:
    line: int
    code: str
    why: str


def _own_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's body, without those of the functions and lambdas inside it."""
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


class _FactFinder:
    """Follows what a case returns back to the expressions that made it (through local names,
    the dicts and lists it filled, and the helpers of cases.py it called) and names the ones
    that derive a plain value from the learner's objects."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        helpers = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.module = _Scope(None, helpers=helpers)
        self._scopes: dict[int, _Scope] = {}

    def cases(self) -> Iterator[ast.FunctionDef]:
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and any(_is_case_decorator(d) for d in node.decorator_list):
                yield node

    def facts(self, fn: ast.FunctionDef) -> list[_Fact]:
        found: dict[tuple[int, int], _Fact] = {}
        scope = self.scope(fn, self.module)
        for value in self.returns(fn):
            for leaf, where in self.leaves(value, scope, set(), 0):
                why = self.derived(leaf, where, 0)
                if why is not None:
                    code = ast.get_source_segment(self.source, leaf) or ast.unparse(leaf)
                    code = " ".join(code.split())
                    code = code if len(code) <= 90 else code[:87] + "..."
                    found[(leaf.lineno, leaf.col_offset)] = _Fact(leaf.lineno, code, why)
        return [found[k] for k in sorted(found)]

    def scope(self, fn: ast.FunctionDef, parent: _Scope) -> _Scope:
        known = self._scopes.get(id(fn))
        if known is not None:
            return known
        scope = _Scope(parent)
        self._scopes[id(fn)] = scope
        for node in _own_nodes(fn):
            if isinstance(node, ast.FunctionDef) and node is not fn:
                scope.helpers[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(scope, target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
                self._bind(scope, node.target, node.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _FILLERS
                and isinstance(node.func.value, ast.Name)
            ):
                put = [*node.args, *(k.value for k in node.keywords)]
                scope.filled.setdefault(node.func.value.id, []).extend(put)
        return scope

    @staticmethod
    def _bind(scope: _Scope, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            scope.assigned.setdefault(target.id, []).append((value, None))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    scope.assigned.setdefault(elt.id, []).append((value, i))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            scope.filled.setdefault(target.value.id, []).append(value)

    @staticmethod
    def returns(fn: ast.FunctionDef) -> list[ast.expr]:
        return [n.value for n in _own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]

    def helper(self, scope: _Scope, func: ast.expr) -> tuple[ast.FunctionDef, _Scope] | None:
        if not isinstance(func, ast.Name):
            return None
        s: _Scope | None = scope
        while s is not None:
            if func.id in s.helpers:
                fn = s.helpers[func.id]
                return fn, self.scope(fn, s)
            s = s.parent
        return None

    def leaves(
        self, expr: ast.expr, scope: _Scope, seen: set[int], depth: int
    ) -> Iterator[tuple[ast.expr, _Scope]]:
        """The expressions whose values end up as leaves of `expr`'s value."""
        if depth > _MAX_DEPTH or id(expr) in seen:
            return
        seen = seen | {id(expr)}
        step = depth + 1
        if isinstance(expr, ast.Dict):
            for value in expr.values:
                yield from self.leaves(value, scope, seen, step)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            for elt in expr.elts:
                yield from self.leaves(elt.value if isinstance(elt, ast.Starred) else elt, scope, seen, step)
        elif isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            yield from self.leaves(expr.elt, scope, seen, step)
        elif isinstance(expr, ast.DictComp):
            yield from self.leaves(expr.value, scope, seen, step)
        elif isinstance(expr, ast.IfExp):
            yield from self.leaves(expr.body, scope, seen, step)
            yield from self.leaves(expr.orelse, scope, seen, step)
        elif isinstance(expr, ast.Name) and (expr.id in scope.assigned or expr.id in scope.filled):
            for value, index in scope.assigned.get(expr.id, []):
                for part, where in self._element(value, index, scope):
                    yield from self.leaves(part, where, seen, step)
            for value in scope.filled.get(expr.id, []):
                yield from self.leaves(value, scope, seen, step)
        elif isinstance(expr, ast.Call) and (found := self.helper(scope, expr.func)) is not None:
            fn, inner = found
            for value in self.returns(fn):
                yield from self.leaves(value, inner, seen, step)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in _CONTAINERS:
            for arg in [*expr.args, *(k.value for k in expr.keywords)]:
                yield from self.leaves(arg, scope, seen, step)
        else:
            yield expr, scope

    def _element(self, value: ast.expr, index: int | None, scope: _Scope) -> list[tuple[ast.expr, _Scope]]:
        """What a name unpacked as element `index` of `value` holds (all of `value` when whole)."""
        if index is None:
            return [(value, scope)]
        if isinstance(value, (ast.Tuple, ast.List)) and index < len(value.elts):
            return [(value.elts[index], scope)]
        found = self.helper(scope, value.func) if isinstance(value, ast.Call) else None
        if found is None:
            return []  # a tuple some other call returned (the learner's outputs): data
        fn, inner = found
        return [
            (r.elts[index], inner)
            for r in self.returns(fn)
            if isinstance(r, (ast.Tuple, ast.List)) and index < len(r.elts)
        ]

    def derived(self, expr: ast.expr, scope: _Scope, depth: int) -> str | None:
        """Why `expr` is a plain value derived from the learner's objects, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Compare):
            operands = [expr.left, *expr.comparators]
            if any(self._reads_objects(o, scope, depth + 1) for o in operands):
                return "a comparison"
            return None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return "`not`"
        if isinstance(expr, (ast.BoolOp, ast.BinOp, ast.UnaryOp)):
            parts = (
                expr.values
                if isinstance(expr, ast.BoolOp)
                else ([expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.operand])
            )
            for part in parts:
                for leaf, where in self.leaves(part, scope, set(), depth + 1):
                    why = self.derived(leaf, where, depth + 1)
                    if why is not None:
                        return why
            return None
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Name):
            if func.id == "bool" and expr.args and not isinstance(expr.args[0], ast.Constant):
                return "`bool(...)`"
            if func.id in _PREDICATES:
                return f"`{func.id}(...)`"
            if func.id in _CONVERSIONS and expr.args and self._computes(expr.args[0], scope, depth + 1):
                return f"`{func.id}(...)` of a computed value"
        elif isinstance(func, ast.Attribute):
            on_torch = isinstance(func.value, ast.Name) and func.value.id == "torch"
            if on_torch and func.attr in _TORCH_PREDICATES:
                return f"`torch.{func.attr}(...)`"
            if func.attr in _READ_BACK:
                return f"`.{func.attr}()`"
        return None

    def _computes(self, expr: ast.expr, scope: _Scope, depth: int) -> bool:
        """Whether `expr` calls or compares, following a local name to what it was assigned
        whole (a name unpacked from a call's result holds part of an answer, as it came)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            return any(
                self._computes(value, scope, depth + 1)
                for value, index in scope.assigned.get(expr.id, [])
                if index is None
            )
        return any(isinstance(n, (ast.Call, ast.Compare)) for n in ast.walk(expr))

    def _reads_objects(self, expr: ast.expr, scope: _Scope, depth: int) -> bool:
        """Whether `expr` reads an attribute or calls a method or a torch function: it looks into
        a tensor, a module or the learner's result (`p in message` of two plain names does not),
        following a local name to what it was assigned whole."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            return any(
                self._reads_objects(value, scope, depth + 1)
                for value, index in scope.assigned.get(expr.id, [])
                if index is None
            )
        for node in ast.walk(expr):
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                return True
            if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
                return True
            if isinstance(node, ast.Name) and self._reads_objects(node, scope, depth + 1):
                return True
        return False


def _is_case_decorator(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else node
    return (isinstance(func, ast.Name) and func.id == "case") or (
        isinstance(func, ast.Attribute) and func.attr == "case"
    )


def facts_in_cases(source: str) -> dict[str, list[_Fact]]:
    """Per case of a cases.py, the values it returns that it derived from the learner's objects."""
    finder = _FactFinder(source)
    found = {fn.name: finder.facts(fn) for fn in finder.cases()}
    return {name: facts for name, facts in found.items() if facts}
