"""The diagnoses that read observation keys, through the judge: a package whose hidden case
observes several calls of one object, several eps values, a view and a batch, and learners who
get one of each wrong. A hidden case shows the kind's short label."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import judge, make_package

pytestmark = pytest.mark.slow

CASES = '''
from judge.core.casekit import case


@case(points=10, public=True)
def plain(impl, rng):
    """一次调用 / one call"""
    return {"y": impl.f(rng.normal(2, 3, 8))}


@case(points=30)
def observed_by_key(impl, rng):
    """几次调用、两个 eps、一个视图、一个 batch / calls, two eps values, a view, a batch"""
    xs = [rng.normal(2, 3, 8) for _ in range(3)]
    t = rng.normal(2, 8, 3)
    return {
        "calls": [impl.f(x) for x in xs],
        "eps": {"y": impl.f(xs[0]), "eps_0.5": impl.f(xs[0], eps=0.5)},
        "layout": {
            "contiguous": impl.f(t.transpose(1, 2).contiguous()),
            "transposed_view": impl.f(t.transpose(1, 2)),
        },
        "y_batched": impl.f(rng.normal(3, 4, 8)),
    }
'''
REFERENCE = "def f(x, eps=1e-6):\n    return x / (x.abs().amax(-1, keepdim=True) + eps)\n"
WRONG = '"""随便 / Anything."""\ndef f(x, eps=1e-6):\n    return x * 0.5\n'

LEARNERS = {
    "later_call_wrong": (
        "_first = []\n"
        "def f(x, eps=1e-6):\n"
        "    if not _first:\n"
        "        _first.append(x.abs().amax(-1, keepdim=True))  # the first call's scale, kept\n"
        "    same = _first[0].shape == x.shape[:-1] + (1,)\n"
        "    scale = _first[0] if same else x.abs().amax(-1, keepdim=True)\n"
        "    return x / (scale + eps)\n"
    ),
    "default_eps_only": "def f(x, eps=1e-6):\n    return x / (x.abs().amax(-1, keepdim=True) + 1e-6)\n",
    "view_input_wrong": (
        "import torch\n"
        "def f(x, eps=1e-6):\n"
        "    flat = torch.as_strided(x, x.shape, torch.empty(x.shape).stride())  # memory read row by row\n"
        "    return flat / (flat.abs().amax(-1, keepdim=True) + eps)\n"
    ),
    "batch_item_0_only": (
        "def f(x, eps=1e-6):\n"
        "    scale = x.abs().amax(-1, keepdim=True)\n"
        "    if x.shape[0] == 3:  # the batch of the case: item 0's scale for all\n"
        "        scale = scale[:1]\n"
        "    return x / (scale + eps)\n"
    ),
}


@pytest.mark.parametrize("kind", list(LEARNERS))
def test_a_hidden_case_names_which_call_eps_layout_or_item_goes_wrong(
    tmp_path: Path, store: ExpectedStore, kind: str
) -> None:
    pkg = make_package(tmp_path, cases=CASES, reference=REFERENCE, wrong={"halves": WRONG})
    report = judge(pkg, LEARNERS[kind], store)
    by_name = {c.name: c for c in report.cases}
    assert by_name["plain"].verdict == Verdict.AC
    case = by_name["observed_by_key"]
    assert case.verdict == Verdict.WA and not case.hint
    assert kind in [d.kind for d in case.diagnoses], [(d.kind, d.text.en) for d in case.diagnoses]
    shown = case.to_dict("en")
    assert any(d["kind"] == kind and d["label"] for d in shown["diagnoses"]), shown["diagnoses"]
