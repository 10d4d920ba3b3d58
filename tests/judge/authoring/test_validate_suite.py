"""Validation of the validator: known-bad packages, each of which must fail with its own message.

As DMOJ's judge keeps known-bad submissions with the verdict they must get, this keeps
known-bad packages with the check that must refuse them. The base package is sound; each
entry changes one thing about it. Were a gate of `judge validate` to say ok whatever it saw,
its entry here would fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from judge.authoring.validate import MIN_PUBLIC, Validation, validate_package
from judge.settings import JudgeSettings
from tests.factories import PROPERTIES_CASE_F, make_package, shared_backend

pytestmark = pytest.mark.slow

BASIC_CASES = "import torch\nfrom judge.core.casekit import case\n\n" + "".join(
    f"@case(points={10 if i < 10 else 0}, public={i < MIN_PUBLIC})\n"
    f"def c{i}(impl, rng):\n    return {{'y': impl.f(rng.normal(3, {i + 1}))}}\n\n"
    for i in range(10)
)
CASES = BASIC_CASES + PROPERTIES_CASE_F
WRONG = {
    "times_three": '"""乘了 3 / You multiplied by 3."""\ndef f(x):\n    return x * 3\n',
    "plus_one": '"""加了 1 / You added one."""\ndef f(x):\n    return x * 2 + 1\n',
    "squared": '"""平方了 / You squared it."""\ndef f(x):\n    return x * x\n',
}
ACCEPTED = {"sum": "def f(x):\n    return x + x\n"}
GUARDED = "def f(x):\n    if x.numel() == 0:\n        return x.clone()\n    return x * 2\n"


@dataclass(frozen=True)
class Bad:
    name: str
    changes: dict[str, Any]
    check: str  # the check that must fail
    message: str  # words its detail must hold
    also_failing: frozenset[str] = field(default_factory=frozenset)  # checks that fail with it


def _equivalent(*ids: str) -> str:
    entries = ", ".join(f'{{ id = "{i}", reason = "the cases never pass an empty tensor" }}' for i in ids)
    return f"[mutants]\nequivalent = [{entries}]\n"


SUITE = [
    Bad(
        "nondeterministic_reference",
        # The runner seeds torch per case, so torch.rand would repeat: the OS does not.
        {"reference": "import os\ndef f(x):\n    return x * 2 + os.urandom(1)[0] * 1e-3\n"},
        "deterministic",
        "different observations in two runs",
        frozenset({"accepted/sum", "mutants"}),
    ),
    Bad(
        "starter_that_passes",
        {"starter": "def f(x):\n    return x * 2\n"},
        "starter",
        "passes every case",
    ),
    Bad(
        "accepted_solution_that_fails",
        {"accepted": {"sum": "def f(x):\n    return x + x\n", "off": "def f(x):\n    return x * 2.001\n"}},
        "accepted/off",
        "fails:",
    ),
    Bad(
        "wrong_solution_that_passes",
        {"wrong": {**WRONG, "not_wrong": '"""没有错 / Nothing wrong."""\ndef f(x):\n    return x + x\n'}},
        "wrong/not_wrong",
        "passes every case: add a case that catches this mistake",
    ),
    Bad(
        "hint_shadowed_by_another",
        {"wrong": {**WRONG, "thrice": '"""三倍 / Three times."""\ndef f(x):\n    return 3 * x\n'}},
        "wrong/times_three",
        "is never shown its hint",
        # Identical outputs are a tie, and a tie names neither mistake.
        frozenset({"wrong/thrice"}),
    ),
    Bad(
        "surviving_mutant",
        {"reference": GUARDED},
        "mutants",
        "survivor f/0:drop-guard",
    ),
    Bad(
        "too_many_declared_equivalent",
        {
            "reference": GUARDED,
            "extra_toml": _equivalent("f/0:drop-guard", "f/0:int+1", "f/0:int-1", "f/0.0:drop-clone"),
        },
        "mutants",
        "declared equivalent (at most 15%)",
    ),
    Bad(
        "mutants_without_feedback",
        # Every change of sin(2x) fails the cases, but no diagnoser can name why and no listed
        # mistake matches: a learner would see numbers only.
        {
            "reference": "import torch\ndef f(x):\n    return torch.sin(x * 2.0) + torch.cos(x * 3.0)\n",
            "accepted": {"sum": "import torch\ndef f(x):\n    return torch.sin(x + x) + torch.cos(3 * x)\n"},
            # Without the repeated-calls case, whose diagnoses would explain the state mutants.
            "cases": BASIC_CASES,
        },
        "mutants",
        "killed mutants come with feedback (at least 80%)",
        frozenset({"properties"}),
    ),
    Bad(
        "fact_computed_in_the_case",
        # The case asks torch.equal in the learner's process, where a patched torch.equal (or a
        # module that looks at its caller) answers True: return the tensors instead.
        {
            "cases": CASES
            + "@case(points=0)\ndef flag(impl, rng):\n    x = rng.normal(4)\n"
            + "    return {'y': impl.f(x), 'doubled': bool(torch.equal(impl.f(x), 2 * x))}\n"
        },
        "facts",
        "line 57: `bool(...)`: `bool(torch.equal(impl.f(x), 2 * x))` (case flag)",
    ),
    Bad(
        "scratch_example_that_raises",
        # The scratch cell would open on a snippet that fails on the reference itself.
        {"extra_toml": "[scratch]\nexample = '''\ny = f(torch.ones(2, 3))\ny @ y\n'''\n"},
        "scratch",
        "[scratch] example: raises (line 2):",
    ),
    Bad(
        "stale_equivalent_declaration",
        # An id from before issue 32 (line:column:operator) matches nothing (the base reference
        # has no guard, so there is no mutant it could have meant).
        {"extra_toml": _equivalent("9:9:drop-guard")},
        "mutants",
        "declared 9:9:drop-guard matches no mutant: remove it",
    ),
]


def validate(tmp_path: Path, **changes: Any) -> Validation:
    values: dict[str, Any] = {"cases": CASES, "wrong": WRONG, "accepted": ACCEPTED, **changes}
    pkg = make_package(tmp_path, **values)
    # The base reference is tiny (a handful of mutants): the bar on their number is not what
    # this suite tests (test_validate.py does).
    return validate_package(pkg, shared_backend(), JudgeSettings(cache_dir=tmp_path / "cache"))


def failing(result: Validation) -> dict[str, str]:
    return {c.name: c.detail for c in result.checks if not c.ok}


def test_the_base_package_is_sound(tmp_path: Path) -> None:
    result = validate(tmp_path)
    assert result.ok, failing(result)
    assert result.mutants is not None and result.mutants.generated >= 3
    assert result.mutants.survivors == []


@pytest.mark.parametrize("bad", SUITE, ids=[b.name for b in SUITE])
def test_each_known_bad_package_fails_with_its_own_message(bad: Bad, tmp_path: Path) -> None:
    result = validate(tmp_path, **bad.changes)
    refused = failing(result)
    assert not result.ok
    assert bad.check in refused, refused
    assert bad.message in refused[bad.check], refused[bad.check]
    assert set(refused) <= {bad.check, *bad.also_failing}, refused


def test_the_suite_covers_every_gate() -> None:
    assert {b.check.split("/")[0] for b in SUITE} >= {
        "deterministic",
        "starter",
        "accepted",
        "wrong",
        "mutants",
        "facts",
        "scratch",
    }
