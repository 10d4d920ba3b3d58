"""`judge validate`: proves a package sound, or says exactly what to fix.

A sound package: problem.toml is valid; statements render; the cases load and their points
add up; the reference passes every case and gives identical observations in two separate
runs; no case returns a fact it computed in the learner's process; the starter does not pass;
every accepted solution passes; every wrong solution fails at least one case and its own hint
is the one a learner with its outputs would see; the scratch cell's snippets run after the
reference without an error; and the cases kill every mutant of the
reference (judge.authoring.mutation) that the package does not declare equivalent, with at most
MAX_EQUIVALENT declared. The coverage bars (cases, accepted and wrong solutions) are defaults a
small package may lower in `[validation]`, each with its reason.

Each check is one function of judge.authoring.validation, writing its findings to the
validation's `Diagnostics`; `validate_package` runs them in order and stops where a failed one
leaves nothing for the next to check. All of the author's solutions run in two runner processes
and the mutants in a few more (they are trusted code), so a package validates in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.authoring.mutation.run import MutationScore, score_mutants
from judge.authoring.package import Problem
from judge.authoring.properties import PropertyReport
from judge.authoring.validation.diagnostics import Check, Diagnostics
from judge.authoring.validation.facts import check_facts, facts_in_cases
from judge.authoring.validation.files import (
    MIN_ACCEPTED,
    MIN_HIDDEN,
    MIN_PUBLIC,
    MIN_WRONG,
    change_note_check,
    check_cases,
    check_changes,
    check_coverage,
    check_forbidden,
    check_notes,
    check_parts,
    check_problem_toml,
    check_solutions,
    check_statements,
    counts,
    load_package,
)
from judge.authoring.validation.mutants import MAX_EQUIVALENT, MIN_FEEDBACK, check_mutants
from judge.authoring.validation.runs import (
    check_determinism,
    check_properties,
    check_reference,
    check_runner,
    check_solution,
    run_author_solutions,
)
from judge.authoring.validation.scratch import check_scratch
from judge.core.backend import Backend
from judge.core.results import Expected
from judge.settings import JudgeSettings

# The bar and the checks' own helpers, where callers and tests have always found them.
__all__ = [
    "ENFORCE_PROPERTIES",
    "FAMILIES",
    "MAX_EQUIVALENT",
    "MIN_ACCEPTED",
    "MIN_FEEDBACK",
    "MIN_HIDDEN",
    "MIN_PUBLIC",
    "MIN_WRONG",
    "Check",
    "Scope",
    "Validation",
    "change_note_check",
    "facts_in_cases",
    "render_validation",
    "validate_package",
]

# Properties of the cases (judge.authoring.properties, issue 28): every argument varied in a hidden case,
# one object called several times, parameters edited between calls, non-contiguous, batched
# and length-1 inputs, two instances interleaved. Each package is reported now, and a property
# neither met nor waived in problem.toml's [waivers] is printed as a warning. This turns on (the
# check then fails on such a gap, or on a waiver that waives nothing) once the packages carry the
# property cases (issue 28).
ENFORCE_PROPERTIES = True


# The checks by family (a check's name up to its "/": `wrong/x` is of `wrong`), in the order
# they run. `--only` names families; `--quick` leaves out the slow ones.
FAMILIES = (
    "problem.toml",
    "cases",
    "statements",
    "forbidden",
    "facts",
    "parts",
    "solutions",
    "notes",
    "changes",
    "coverage",
    "runner",
    "reference",
    "deterministic",
    "properties",
    "starter",
    "accepted",
    "wrong",
    "scratch",
    "mutants",
)
# What `--quick` leaves out: the mutants (the most of a validation's time), the scratch cell's
# snippets (a sandbox run each) and the properties (the reference probed in this process).
SLOW = frozenset({"mutants", "scratch", "properties"})
# Families that need the author's solutions run.
RUN_FAMILIES = frozenset(
    {"runner", "reference", "deterministic", "starter", "accepted", "wrong", "scratch", "mutants"}
)


# A check's time is shown from this many seconds (the static checks take milliseconds).
SHOWN_S = 0.05


def family(check_name: str) -> str:
    return check_name.split("/", 1)[0]


@dataclass(frozen=True)
class Scope:
    """Which checks a validation runs: every one, `quick` (all but SLOW), or `only` some
    families. What a check needs still runs (the reference, for `--only wrong`); its findings
    are kept only when they stop the validation."""

    quick: bool = False
    only: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(self.only - set(FAMILIES))
        if unknown:
            raise ValueError(f"no check named {', '.join(unknown)} (checks: {', '.join(FAMILIES)})")

    @property
    def whole(self) -> bool:
        return not self.quick and not self.only

    def wants(self, name: str) -> bool:
        f = family(name)
        if self.quick and f in SLOW:
            return False
        return not self.only or f in self.only

    def label(self) -> str:
        """How a report names what was checked: "" for a whole validation."""
        parts = (["quick"] if self.quick else []) + (
            ["only " + ", ".join(sorted(self.only))] if self.only else []
        )
        return "; ".join(parts)


@dataclass
class Validation:
    """One package's validation: the checks' findings and what the package was found to hold."""

    path: str
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    # What the package holds: public and hidden cases, accepted and wrong solutions.
    counts: dict[str, int] = field(default_factory=dict)
    mutants: MutationScore | None = None
    properties: PropertyReport | None = None
    scope: Scope = Scope()
    # Seconds each family of checks took (its share of the runs included).
    timings: dict[str, float] = field(default_factory=dict)
    # A validation read back from judge.authoring.validated: its report as it was written.
    restored: dict[str, Any] | None = None

    @property
    def checks(self) -> list[Check]:
        return self.diagnostics.checks

    @property
    def ok(self) -> bool:
        return self.diagnostics.ok

    def to_dict(self) -> dict[str, Any]:
        if self.restored is not None:
            return self.restored
        return {
            "path": self.path,
            "ok": self.ok,
            "scope": self.scope.label(),
            "counts": self.counts,
            "checks": [c.to_dict() for c in self.checks],
            "timings": {name: round(s, 3) for name, s in self.timings.items()},
            "mutants": self.mutants.to_dict() if self.mutants is not None else None,
            "feedback": self.mutants.feedback() if self.mutants is not None else None,
            "properties": (
                {"enforced": ENFORCE_PROPERTIES, **self.properties.to_dict()}
                if self.properties is not None
                else None
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], scope: Scope) -> Validation:
        """A stored report read back (judge.authoring.validated): what it found, as it was."""
        checks = [
            Check(c["name"], c.get("level") or ("note" if c["ok"] else "error"), c["detail"])
            for c in data["checks"]
        ]
        return cls(
            str(data["path"]),
            Diagnostics(checks),
            dict(data.get("counts") or {}),
            scope=scope,
            timings=dict(data.get("timings") or {}),
            restored=data,
        )


class _Clock:
    """Adds each step's seconds to its family's timing."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.started = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - self.started
        self.started = now


def validate_package(
    path: Path, backend: Backend, settings: JudgeSettings, scope: Scope = Scope()
) -> Validation:
    """The checks of the package that `scope` asks for, in order."""
    v = Validation(str(path), scope=scope)
    _validate(v, path, backend, settings, scope)
    if not scope.whole:  # keep what was asked for, and what stopped it
        v.diagnostics.checks = [c for c in v.checks if scope.wants(c.name) or not c.ok]
    return v


def _run_wanted(checks: tuple[tuple[str, Callable[[], None]], ...], scope: Scope, clock: _Clock) -> None:
    """The checks (by name) that `scope` asks for, each timed."""
    for name, check in checks:
        if scope.wants(name):
            check()
            clock.lap(name)


def _validate(v: Validation, path: Path, backend: Backend, settings: JudgeSettings, scope: Scope) -> None:
    out = v.diagnostics
    clock = _Clock(v.timings)
    loaded = load_package(out, path)
    clock.lap("problem.toml")
    if loaded is None:
        return
    problem, cases = loaded.problem, loaded.cases
    static: tuple[tuple[str, Callable[[], None]], ...] = (
        ("problem.toml", lambda: check_problem_toml(out, problem)),
        ("cases", lambda: check_cases(out, problem, cases)),
        ("statements", lambda: check_statements(out, problem)),
        ("forbidden", lambda: check_forbidden(out, problem)),
        ("facts", lambda: check_facts(out, problem)),
    )
    _run_wanted(static, scope, clock)
    if not check_parts(out, problem):
        return
    clock.lap("parts")
    accepted, wrong = problem.solutions("accepted"), problem.solutions("wrong")
    listed: tuple[tuple[str, Callable[[], None]], ...] = (
        ("solutions", lambda: check_solutions(out, accepted, wrong)),
        ("notes", lambda: check_notes(out, problem)),
        ("changes", lambda: check_changes(out, problem)),
    )
    _run_wanted(listed, scope, clock)
    v.counts = counts(cases, accepted, wrong)
    if scope.wants("coverage"):
        check_coverage(out, v.counts, problem.spec.validation)
        clock.lap("coverage")
    if not any(scope.wants(f) for f in RUN_FAMILIES):
        if scope.wants("properties"):
            _check_properties(v, problem)
            clock.lap("properties")
        return

    # The solutions a wanted check reads: the known mistakes make the expected hints, so the
    # mutants need them too.
    starter = [problem.starter] if scope.wants("starter") else []
    chosen_accepted = accepted if scope.wants("accepted") else []
    chosen_wrong = wrong if scope.wants("wrong") or scope.wants("mutants") else []
    files = [problem.reference, *starter, *chosen_accepted, *chosen_wrong]
    runs = run_author_solutions(problem, files, backend, settings.startup_s)
    clock.lap("reference")  # the runs: every solution checked below was run here, with it
    if not check_runner(out, runs.first) or not check_runner(out, runs.second):
        return
    ref = runs.first.solutions[0]
    if not check_reference(out, ref, cases):
        return
    check_determinism(out, cases, ref, runs.second.solutions[0])
    clock.lap("deterministic")
    if scope.wants("properties"):
        _check_properties(v, problem)
        clock.lap("properties")

    expected = Expected.from_runs(runs.first.solutions, [(f.name, f.hint()) for f in chosen_wrong])
    for f, run in zip(runs.files[1:], runs.first.solutions[1:], strict=True):
        if scope.wants(f.name):
            check_solution(out, f, cases, run, expected)
            clock.lap(family(f.name))
    if scope.wants("scratch"):
        check_scratch(out, problem, cases, backend, expected, settings.startup_s)
        clock.lap("scratch")
    if scope.wants("mutants"):
        reference_s = sum(c.time_ms for c in ref.cases.values()) / 1000
        v.mutants = score_mutants(problem, backend, expected, reference_s, settings.startup_s)
        check_mutants(out, v.mutants)
        clock.lap("mutants")


def _check_properties(v: Validation, problem: Problem) -> None:
    """The properties check, enforced as ENFORCE_PROPERTIES says when it runs (tests switch it)."""
    v.properties = check_properties(v.diagnostics, problem, ENFORCE_PROPERTIES)


def render_validation(results: list[Validation]) -> str:
    lines = []
    for res in results:
        lines.append(_headline(res))
        width = max((len(c.name) for c in res.checks), default=8)
        timed: set[str] = set()
        for c in res.checks:
            mark = "✓" if c.ok else "✗"
            detail = c.detail.splitlines() or [""]
            took = ""
            f = family(c.name)
            if f not in timed and res.timings.get(f, 0.0) >= SHOWN_S:  # on the family's first line
                timed.add(f)
                took = f"  ({res.timings[f]:.1f} s)"
            lines.append(f"  {mark} {c.name:<{width}}  {detail[0]}{took}")
            lines.extend(f"    {'':<{width}}  {d}" for d in detail[1:])
    bad = [r for r in results if not r.ok]
    lines.append("")
    lines.append(f"{len(results) - len(bad)}/{len(results)} packages sound")
    return "\n".join(lines)


def _headline(res: Validation) -> str:
    """`204-rmsnorm  OK (quick: no mutants, scratch or properties)  12.3 s`."""
    head = f"{Path(res.path).name}  {'OK' if res.ok else 'NOT SOUND'}"
    if res.scope.quick:
        head += " (quick: " + ", ".join(sorted(SLOW)) + " not checked)"
    if res.scope.only:
        head += " (only " + ", ".join(sorted(res.scope.only)) + ")"
    if res.restored is not None:
        head += "  unchanged since its last validation: read back, nothing ran"
    elif res.timings:
        head += f"  {sum(res.timings.values()):.1f} s"
    return head
