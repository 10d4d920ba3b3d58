"""The checks that read the package without running the author's code: problem.toml, the cases,
the statements, the forbidden APIs, the parts, the solutions and their notes, the change notes
and the coverage bar."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judge.authoring.package import PackageError, Problem, SolutionFile, ValidationSpec
from judge.authoring.solutions import notes_check
from judge.authoring.statement import problems_in
from judge.authoring.validation.diagnostics import Diagnostics
from judge.core.casekit import Case

# The bar a package must clear before learners see it (docs/authoring.md says why): enough
# public cases to learn from, enough hidden ones that passing means the work is right, a second
# correct formulation (so the cases do not demand the reference's exact ops), and enough known
# mistakes that the hints cover what learners really get wrong.
MIN_PUBLIC = 2
MIN_HIDDEN = 6
MIN_ACCEPTED = 1
MIN_WRONG = 3


@dataclass(frozen=True)
class Bar:
    """One coverage bar: its default, and the floor a package's `[validation]` may lower it to
    (with a reason). Below the floor nothing is checked at all: a hidden case is what makes a
    verdict more than the public cases' word, and a known mistake is what a hint comes from."""

    key: str  # its name in `[validation]`
    counted: str  # its count in `counts()`
    what: str
    default: int
    floor: int


BARS = (
    Bar("min_public", "public", "public cases", MIN_PUBLIC, 1),
    Bar("min_hidden", "hidden", "hidden cases", MIN_HIDDEN, 1),
    Bar("min_accepted", "accepted", "accepted alternatives (solutions/accepted/)", MIN_ACCEPTED, 0),
    Bar("min_wrong", "wrong", "wrong solutions (solutions/wrong/)", MIN_WRONG, 1),
)


@dataclass(frozen=True)
class Loaded:
    """A package whose problem.toml and cases.py load: what every other check reads."""

    problem: Problem
    cases: list[Case]


def load_package(out: Diagnostics, path: Path) -> Loaded | None:
    """The package, or None when problem.toml or cases.py does not load (reported under
    "problem.toml" or "cases": nothing else can be checked then)."""
    try:
        problem = Problem(path)
    except PackageError as exc:
        out.error("problem.toml", str(exc))
        return None
    try:
        cases = problem.cases
    except PackageError as exc:
        out.note("problem.toml", f"valid (id {problem.id})")
        out.error("cases", str(exc))
        return None
    return Loaded(problem, cases)


def check_problem_toml(out: Diagnostics, problem: Problem) -> None:
    """problem.toml is valid (it loaded) and names its chapter."""
    placeholder = "TODO" in problem.spec.chapter
    out.outcome(
        "problem.toml",
        not placeholder,
        f"valid (id {problem.id}, version {problem.spec.version})"
        + ("; chapter is still TODO: name the chapter this problem belongs to" if placeholder else ""),
    )


def check_cases(out: Diagnostics, problem: Problem, cases: list[Case]) -> None:
    """The cases' points add up to problem.toml's, and a learner can see at least one."""
    total = sum(c.points for c in cases)
    public = sum(c.public for c in cases)
    out.outcome(
        "cases",
        total == problem.spec.points and public > 0,
        f"{len(cases)} cases, {public} public, {total} points"
        + ("" if total == problem.spec.points else f" but problem.toml says points = {problem.spec.points}")
        + ("" if public else "; make at least one case public (public=True)"),
    )


def check_statements(out: Diagnostics, problem: Problem) -> None:
    """Each statement there is renders without problems."""
    notes: list[str] = []
    for name in ("statement.zh.md", "statement.en.md"):
        if problem.file(name).exists():
            notes.extend(f"{name}: {p}" for p in problems_in(problem.read(name)))
    langs = "zh" + (", en" if problem.file("statement.en.md").exists() else "")
    out.outcome("statements", not notes, f"{langs} render" if not notes else "\n".join(notes))


def check_forbidden(out: Diagnostics, problem: Problem) -> None:
    """A misspelt forbidden name would forbid nothing (the runner skips names this torch lacks)."""
    from judge.core.runner.guards import resolve

    if not problem.spec.forbidden:
        return
    missing = []
    for dotted in problem.spec.forbidden:
        try:
            resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(dotted)
    out.outcome(
        "forbidden",
        not missing,
        f"{len(problem.spec.forbidden)} APIs guarded"
        if not missing
        else "not found in this torch (misspelt?): " + ", ".join(missing),
    )


def check_parts(out: Diagnostics, problem: Problem) -> bool:
    """The parts problem.toml names exist; False when they do not (nothing can run then)."""
    if not problem.spec.parts:
        return True
    try:
        uses = ", ".join(f"{p.id} ({p.module_name})" for p in problem.part_problems)
    except PackageError as exc:
        out.error("parts", str(exc))
        return False
    out.note("parts", f"solutions may import {uses}; judged here with the parts' references")
    return True


def check_solutions(out: Diagnostics, accepted: list[SolutionFile], wrong: list[SolutionFile]) -> None:
    """There are known mistakes, and each says (in its docstring) what a learner did wrong."""
    out.outcome(
        "solutions",
        bool(wrong) and all(w.hint() for w in wrong),
        f"{len(accepted)} accepted, {len(wrong)} wrong"
        + ("" if wrong else "; add known mistakes under solutions/wrong/ (module docstring = hint)")
        + "".join(f"; {w.name} has no docstring hint" for w in wrong if not w.hint()),
    )


def check_notes(out: Diagnostics, problem: Problem) -> None:
    """The reference and each accepted solution come with a note (judge.authoring.solutions)."""
    out.outcome("notes", *notes_check(problem))


def check_changes(out: Diagnostics, problem: Problem) -> None:
    out.outcome("changes", *change_note_check(problem))


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


def counts(cases: list[Case], accepted: list[SolutionFile], wrong: list[SolutionFile]) -> dict[str, int]:
    """What the package holds: public and hidden cases, accepted and wrong solutions."""
    return {
        "public": sum(c.public for c in cases),
        "hidden": sum(not c.public for c in cases),
        "accepted": len(accepted),
        "wrong": len(wrong),
    }


def check_coverage(out: Diagnostics, n: dict[str, int], spec: ValidationSpec) -> None:
    """Enough cases and solutions of each kind: the bars above, or what the package's
    `[validation]` lowers them to (between the floor and the default, with a reason)."""
    lowered = spec.lowered()
    wrong_bars = [
        f"[validation] {bar.key} = {lowered[bar.key].value}: "
        + (
            f"the default is {bar.default}; a package may only lower it"
            if lowered[bar.key].value > bar.default
            else f"below the floor of {bar.floor}"
        )
        for bar in BARS
        if bar.key in lowered and not bar.floor <= lowered[bar.key].value <= bar.default
    ]
    short = []
    for bar in BARS:
        need = lowered[bar.key].value if bar.key in lowered else bar.default
        if n[bar.counted] < need:
            short.append(f"{bar.what}: {n[bar.counted]} < {need}")
    summary = (
        f"{n['public']} public and {n['hidden']} hidden cases, {n['accepted']} accepted, {n['wrong']} wrong"
    )
    if lowered:
        summary += "; lowered: " + "; ".join(
            f"{bar.what} {lowered[bar.key].value} (default {bar.default}): {lowered[bar.key].reason}"
            for bar in BARS
            if bar.key in lowered
        )
    problems = wrong_bars + (["too few " + "; ".join(short)] if short else [])
    out.outcome("coverage", not problems, "; ".join([summary, *problems]))
