"""The scratch cell's snippets (problem.toml's `[scratch]`) run as a learner would run them:
the package's example, and each public case's call that "use public case" fills in, after the
reference in the sandbox (judge.scratch.run_scratch, the cell's own path), so a snippet that
raises, does not load or shows nothing fails the package here rather than on a learner's screen.
"""

from __future__ import annotations

from judge.authoring.package import Problem
from judge.authoring.validation.diagnostics import Diagnostics
from judge.core.backend import Backend
from judge.core.casekit import Case
from judge.core.results import Expected
from judge.scratch import Scratch, run_scratch

NAME = "scratch"


def check_scratch(
    out: Diagnostics,
    problem: Problem,
    cases: list[Case],
    backend: Backend,
    expected: Expected,
    startup_s: float,
) -> None:
    """Each snippet of `[scratch]` runs after the reference without an error, and where the
    reference was asked again on its calls it agrees with itself; each key of `[scratch.cases]`
    names a public case. A package without `[scratch]` is a warning: its cell opens on a generic
    snippet that may not fit its entry points."""
    spec = problem.spec.scratch
    if spec is None:
        out.warning(
            NAME,
            "problem.toml has no [scratch] example: the scratch cell opens on a generic snippet that "
            "may not fit the entry points; write `[scratch] example = '''...'''` (a public case's "
            "call, shortened; docs/authoring.md)",
        )
        return
    public = {c.name for c in cases if c.public}
    hidden = sorted(k for k in spec.cases if k not in public and any(c.name == k for c in cases))
    unknown = sorted(k for k in spec.cases if not any(c.name == k for c in cases))
    if hidden:
        # The learner sees this text: a hidden case's call would tell its inputs.
        out.error(NAME, f"[scratch.cases] names hidden cases: {', '.join(hidden)} (only public cases)")
    if unknown:
        out.error(NAME, f"[scratch.cases] names no case of cases.py: {', '.join(unknown)}")
    snippets = {"example": spec.example}
    snippets.update({f"cases.{k}": v for k, v in spec.cases.items() if k in public})
    parts = problem.reference_parts()
    code = problem.reference.source()
    problems: list[str] = []
    for label, snippet in snippets.items():
        ran = run_scratch(problem, code, snippet, backend, expected, startup_s, parts, parts)
        why = snippet_problem(ran)
        if why is not None:
            problems.append(f"[scratch] {label}: {why}")
    if problems:
        out.error(NAME, "\n".join(problems))
    else:
        out.note(NAME, f"{len(snippets)} snippet(s) run against the reference without an error")


def snippet_problem(ran: Scratch) -> str | None:
    """What is wrong with one snippet's run against the reference, in words, or None."""
    if ran.status != "ok":
        words = ran.text["en"] if ran.text else ""
        said = (ran.message or words or ran.verdict.value).strip()
        where = f" (line {ran.line})" if ran.line else ""
        kind = "does not load" if ran.status == "load" else f"raises{where}"
        return f"{kind}:\n{said}"
    differs = [c["call"] for c in ran.calls if c.get("match") is False]
    if differs:
        return (
            "the reference differs from itself on "
            f"{', '.join(differs)} (random draws need a seeded generator the call is given)"
        )
    return None
