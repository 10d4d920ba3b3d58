"""A listed mistake's hint is shown only on specific evidence: never on one boolean alone, and not
when another listed mistake explains the outputs equally well."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, make_package

pytestmark = pytest.mark.slow

CASES = '''
from judge.core.casekit import case

@case(points=100, public=True)
def values_and_flag(impl, rng):
    """数值和一个标志 / values and a flag"""
    y, ok = impl.f(rng.normal(4, 8))
    return {"y": y, "ok": ok}
'''
REFERENCE = "def f(x):\n    return x * 2, True\n"
FLAG = '"""标志错了 / The flag is wrong."""\ndef f(x):\n    return x * 2, False\n'
THREE = '"""乘了 3 / You multiplied by 3."""\ndef f(x):\n    return x * 3, True\n'
THRICE = '"""三倍 / Three times."""\ndef f(x):\n    return 3 * x, True\n'
HALF = '"""除以 2 / You divided by 2."""\ndef f(x):\n    return x / 2, True\n'


def test_one_boolean_alone_names_no_mistake(tmp_path: Path, store: ExpectedStore) -> None:
    pkg = make_package(tmp_path, cases=CASES, reference=REFERENCE, wrong={"flag": FLAG, "half": HALF})
    report = judge(pkg, "def f(x):\n    return x + x, False\n", store)
    (case,) = report.cases
    assert case.verdict == Verdict.WA and not case.hint


def test_a_tie_between_two_mistakes_names_neither(tmp_path: Path, store: ExpectedStore) -> None:
    pkg = make_package(tmp_path, cases=CASES, reference=REFERENCE, wrong={"three": THREE, "thrice": THRICE})
    report = judge(pkg, "def f(x):\n    return x + x + x, True\n", store)
    (case,) = report.cases
    assert case.verdict == Verdict.WA and not case.hint
    # The diagnosis still says what is wrong.
    assert [d.kind for d in case.diagnoses][:1] == ["scaled"]


def test_a_tensor_match_names_the_mistake(tmp_path: Path, store: ExpectedStore) -> None:
    pkg = make_package(tmp_path, cases=CASES, reference=REFERENCE, wrong={"three": THREE, "half": HALF})
    report = judge(pkg, "def f(x):\n    return x * 3.0, True\n", store)
    (case,) = report.cases
    assert case.hint.en == "You multiplied by 3." and case.hint.zh == "乘了 3"
