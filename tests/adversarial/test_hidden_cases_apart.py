"""Hidden cases stay hidden from whatever the learner reads: a Run, the public half of a
Submit and a scratch snippet run with no hidden case in their process; the hidden half of a
Submit runs apart, and of it the report keeps verdicts, points and the judge's own words.

The hostile solution looks for the hidden case everywhere its process can (the garbage
collector's strings, every module's names, linecache's sources), prints what it finds and puts
it and its inputs into an exception; each test then searches the whole stored report (what an
admin sees, both languages) for the hidden case's marker and its input value. Before hidden
cases ran apart, every one of these found both.
"""

from __future__ import annotations

import json

import pytest

from judge.authoring.package import Problem
from judge.core.backend import Backend
from judge.core.grading import judge_source
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from judge.scratch import run_scratch
from tests.factories import local_backend, make_package, shared_backend

pytestmark = pytest.mark.slow

# What only the hidden case holds: a word in its code and the value of its input.
CASES = '''
import torch
from judge.core.casekit import case

HIDDEN_NOTE = "HIDDEN" + "-CASE-" + "5e1d"
HIDDEN_VALUE = 8675.309


@case(points=60, public=True)
def double(impl, rng):
    """doubles a vector"""
    return {"y": impl.f(rng.normal(4, 8))}


@case(points=40)
def secret(impl, rng):
    note = "HIDDEN-CASE-5e1d"
    return {"y": impl.f(torch.full((4,), HIDDEN_VALUE))}
'''
NEEDLES = ("HIDDEN-CASE-5e1d", "8675.3")

# Correct on every input; but it reports whatever it finds of the hidden case, and any input it
# was not meant to see (one as large as the hidden case's), through every door a job has.
LOOTER = """
import gc, linecache, sys
import torch

WANT = "HIDDEN" + "-CASE-"


def loot():
    found = set()
    for obj in gc.get_objects():
        if isinstance(obj, str) and WANT in obj:
            found.add(obj[:300])
    for name, module in list(sys.modules.items()):
        for key, value in list(vars(module).items()) if hasattr(module, "__dict__") else []:
            if key.startswith("HIDDEN") or (callable(value) and getattr(value, "__name__", "") == "secret"):
                found.add(f"{name}.{key}={value!r}"[:300])
    for name, entry in list(linecache.cache.items()):
        text = "".join(entry[2]) if isinstance(entry, tuple) and len(entry) > 2 else ""
        if WANT in text:
            found.add(text[:300])
    return sorted(found)


def f(x):
    found = loot()
    print("LOOT", found, x.flatten()[:4].tolist())
    if found or x.abs().max() > 1000:
        raise RuntimeError(f"LOOT {found} {x.flatten()[:4].tolist()}")
    return x * 2
"""


BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker-fork", marks=pytest.mark.docker),
]


def _backend(kind: str) -> Backend:
    return local_backend() if kind == "local" else shared_backend()


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return Problem(make_package(tmp_path_factory.mktemp("pkg"), cases=CASES))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ExpectedStore:
    return ExpectedStore(tmp_path_factory.mktemp("cache"))


def _leaks(stored: object) -> list[str]:
    text = json.dumps(stored, ensure_ascii=False)
    return [n for n in NEEDLES if n in text]


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_run_holds_no_hidden_case(kind: str, problem: Problem, store: ExpectedStore) -> None:
    report = judge_source(problem, LOOTER, _backend(kind), store, "public")
    assert [c.verdict for c in report.cases] == [Verdict.AC], report.to_json()
    assert "LOOT []" in report.log  # it looked, and printed what it found: nothing
    assert _leaks(report.to_dict()) == []


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_submit_shows_nothing_the_code_wrote_in_the_hidden_cases(
    kind: str, problem: Problem, store: ExpectedStore
) -> None:
    report = judge_source(problem, LOOTER, _backend(kind), store, "all")
    public, hidden = report.cases
    assert public.verdict == Verdict.AC and hidden.verdict == Verdict.RE, report.to_json()
    # The public half's printed output is the learner's to read (it holds no hidden case)...
    assert report.log_scope == "public" and "LOOT []" in report.log
    # ...and the hidden half's error is the judge's sentence, not the code's.
    assert hidden.message is not None and "LOOT" not in hidden.message
    assert "hidden" in hidden.message.en
    assert _leaks(report.to_dict()) == []


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_scratch_snippet_finds_no_case_to_call(kind: str, problem: Problem, store: ExpectedStore) -> None:
    backend = _backend(kind)
    expected = store.get(problem, backend)
    snippet = (
        "import sys\n"
        "cases = sys.modules.get('cases')\n"
        "names = sorted(n for n in vars(cases) if not n.startswith('__')) if cases else []\n"
        "secret = getattr(cases, 'secret', None)\n"
        "print('CASES', names, loot())\n"
        "out = secret.fn(sys.modules['solution'], None) if secret else f(torch.ones(4))\n"
        "out\n"
    )
    result = run_scratch(problem, LOOTER, snippet, backend, expected, 30.0)
    assert result.status == "ok", result.to_dict()
    assert "CASES [] []" in result.log  # no cases module content at all, and nothing to loot
    assert _leaks(result.to_dict()) == []


def test_an_authors_run_keeps_the_hidden_cases_words(problem: Problem, store: ExpectedStore) -> None:
    """`judge run` (seal_hidden off): the author has every case, so the hidden job's error is
    shown as the code raised it; the same looter's loot is there, so the tests above see what
    sealing removes, not a run that found nothing."""
    report = judge_source(problem, LOOTER, local_backend(), store, "all", seal_hidden=False)
    hidden = report.cases[1]
    assert hidden.verdict == Verdict.RE and hidden.message is not None
    assert "LOOT" in hidden.message.en and "HIDDEN-CASE-5e1d" in hidden.message.en
