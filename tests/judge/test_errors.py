"""One root for the errors of the judge, the sandbox and the web platform (judge/errors.py): every
exception class they define derives from `JudgeError` (found by walking their modules, so a new
one cannot be left out), except what the runner raises into or around a learner's code and the
practice kit's own error, which stay outside it. (`judge` saying them: tests/judge/test_cli.py.)"""

from __future__ import annotations

import importlib
import inspect

from judge.core.errors import JudgeError
from tests.paths import REPO_ROOT

PACKAGES = ("judge", "sandbox", "web")
# Not modules to import: entry scripts (they run on import) and Alembic's migration scripts.
NOT_IMPORTED = ("__main__.py",)
NOT_WALKED = (REPO_ROOT / "web" / "migrations",)

# Exceptions that must NOT be judge errors, each with why.
OUTSIDE = {
    # Raised into or around a learner's code by the runner: judged as their code's failure (and
    # a case's `except Exception` or a learner's own handler must see them as any other error).
    "judge.core.runner.guards.ForbiddenAPIError",
    "judge.core.runner.parts.MissingPartError",
    "judge.core.runner.parts.MissingEntryPointError",
    "judge.core.casekit.CaseSetupError",
    # The practice kit's judge.py is a program of its own: it imports the copied library only
    # once main() has put it on sys.path, and it says its errors in the learner's language.
    "judge.authoring.practice.KitError",
    # Its notebook API likewise, shipped in the kit beside judge.py: a notebook object whose
    # source cannot be found (practice.check turns it into a KitError, in the reader's language).
    "judge.authoring.practice_api.CellError",
}


def module_names() -> list[str]:
    """Every importable module of the three packages, by dotted name."""
    names = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            folder = path.parent
            if path.name in NOT_IMPORTED or any(folder.is_relative_to(skip) for skip in NOT_WALKED):
                continue
            parts = path.relative_to(REPO_ROOT).with_suffix("").parts
            # Only files inside packages all the way down (not web/frontend's tools, say).
            if not all(
                (REPO_ROOT.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))
            ):
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the modules define themselves (not the ones they import), by
    dotted name."""
    found: dict[str, type[BaseException]] = {}
    for name in module_names():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{attr}"] = value
    return found


def test_every_exception_of_the_judge_the_sandbox_and_the_web_is_a_judge_error() -> None:
    classes = exception_classes()
    assert len(classes) >= 20 and classes.keys() >= OUTSIDE, sorted(classes)
    stray = sorted(n for n, c in classes.items() if n not in OUTSIDE and not issubclass(c, JudgeError))
    assert not stray, f"not under judge.core.errors.JudgeError: {stray}"
    inside = sorted(n for n in OUTSIDE if issubclass(classes[n], JudgeError))
    assert not inside, f"a learner's or the kit's exceptions under JudgeError: {inside}"


def test_an_error_keeps_the_standard_type_it_had() -> None:
    """Under the root, an error is still what callers caught it as (a ValueError, an OSError)."""
    classes = exception_classes()
    for name, base in [
        ("judge.core.protocol.ProtocolError", ValueError),
        ("judge.core.observations.ObservationError", ValueError),
        ("sandbox.wire.WireError", ValueError),
        ("sandbox.seccomp.SeccompUnavailable", OSError),
    ]:
        assert issubclass(classes[name], base), name
    assert str(classes["sandbox.seccomp.SeccompUnavailable"]("no table")) == "no table"
