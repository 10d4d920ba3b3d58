"""The mutants check: the cases kill every single-change mutant of the reference
(judge.authoring.mutation) that the package does not declare equivalent, and the mistakes they
stand for leave a learner with feedback."""

from __future__ import annotations

from judge.authoring.mutation.run import MutationScore, StaleDeclaration
from judge.authoring.validation.diagnostics import Diagnostics

# Mutation testing (docs/authoring.md): every mutant of the reference killed or declared
# equivalent, and few declared, so that a declaration cannot stand in for a missing case. How
# many mutants there are follows from the reference (each operation it performs yields at least
# one), so a two-line reference is held to its own few; only a reference with nothing to mutate
# proves nothing.
MAX_EQUIVALENT = 0.15
# Feedback (docs/authoring.md): of the killed mutants, at least this share must leave the learner
# with a reason (a diagnosis, a listed mistake's hint, or a verdict that names its cause), not
# numbers alone. Each one below it is listed, so the author sees which mistakes teach nothing.
MIN_FEEDBACK = 0.8
SHOWN_UNEXPLAINED = 8


def check_mutants(out: Diagnostics, score: MutationScore) -> None:
    """The cases kill every mutant not declared equivalent, the reference has something to
    mutate, few are declared, and most of the killed ones leave a learner with a reason."""
    problems: list[str] = []
    if score.generated == 0:
        problems.append(
            "no mutants: the reference performs no operation the mutation operators change, so "
            "nothing shows that the cases check it; write it out as a learner would"
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
        f"declared equivalent but killed: {r.mutant.id}: line {r.mutant.line}: {r.mutant.change} "
        f"fails {', '.join(r.by[:3])}: remove the declaration"
        for r in score.declared_killed
    )
    problems.extend(_unmatched(s) for s in score.unmatched())
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
    detail = "\n".join([summary, *problems, *unspecific])
    if problems:
        out.error("mutants", detail)
    elif unspecific:
        out.warning("mutants", detail)  # sound, but those hints tell a learner little
    else:
        out.note("mutants", detail)


def _unmatched(stale: StaleDeclaration) -> str:
    """A declaration no mutant matches (the reference was edited, or the id predates issue 32's
    ids), with the id it probably meant, so the author can fix it without a hunt."""
    head = f"declared {stale.declared} matches no mutant"
    m = stale.meant
    if m is None:
        return f"{head}: remove it (no mutant of the reference has its operator)"
    return f"{head}; did you mean {m.id} (line {m.line}: {m.change})?"
