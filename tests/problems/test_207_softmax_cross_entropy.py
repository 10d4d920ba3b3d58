"""Problem 207 through the real judge: detours are forbidden, in-place edits of inputs are caught."""

from __future__ import annotations

import pytest

from judge.authoring.package import Problem
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_case_names, judge_problem
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "207-softmax-cross-entropy")


def test_case_counts() -> None:
    cases = PROBLEM.cases
    public = [c.name for c in cases if c.public]
    assert public == ["softmax_fp32", "log_softmax_fp32", "cross_entropy_ignore_index"]
    assert sum(not c.public for c in cases) >= 6


@pytest.mark.slow
def test_softmin_and_linear_cross_entropy_are_forbidden(store: ExpectedStore) -> None:
    src = (
        "import torch\n"
        "import torch.nn.functional as F\n\n"
        "def softmax(x, dim=-1):\n"
        "    return F.softmin(-x.float(), dim=dim).to(x.dtype)\n\n"
        "def log_softmax(x, dim=-1):\n"
        "    return torch._log_softmax(x.float(), dim, False).to(x.dtype)\n\n"
        "def cross_entropy(logits, targets, ignore_index=-100):\n"
        "    v = logits.shape[-1]\n"
        "    return F.linear_cross_entropy(\n"
        "        logits.float().reshape(-1, v), torch.eye(v), targets.reshape(-1),\n"
        "        ignore_index=ignore_index,\n"
        "    )\n"
    )
    report = judge_problem(PROBLEM, src, store)
    by_name = {c.name: c for c in report.cases}
    assert "torch.nn.functional.softmin" in by_name["softmax_fp32"].message
    assert "torch._log_softmax" in by_name["log_softmax_fp32"].message
    assert "torch.nn.functional.linear_cross_entropy" in by_name["cross_entropy_2d"].message
    assert report.score == 0


@pytest.mark.slow
def test_in_place_targets_get_their_own_hint(store: ExpectedStore) -> None:
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "in_place_targets")
    report = judge_problem(PROBLEM, wrong.source(), store)
    failing = {c.name: c for c in report.cases if c.verdict != Verdict.AC}
    # The second loss in cross_entropy_3d reuses the targets and now counts the padding.
    assert set(failing) == {"cross_entropy_3d", "inputs_unchanged"}
    assert "targets" in failing["inputs_unchanged"].message
    assert all(c.hint == wrong.hint() for c in failing.values())


# ---------------------------------------------------------------- state and layouts (version 3)

REFERENCE_CE_HEAD = "    logp = _log_softmax_fp32(logits, -1)\n"


def test_a_flattening_view_fails_only_the_shifted_logits() -> None:
    # (B, T, V) flattened with .view: fine on every contiguous input, raises on logits[:, :-1].
    flatten = "    logits = logits.view(-1, logits.shape[-1])\n    targets = targets.view(-1)\n"
    src = PROBLEM.reference.source().replace(REFERENCE_CE_HEAD, flatten + REFERENCE_CE_HEAD)
    assert "logits.view(-1" in src
    assert failing_case_names(PROBLEM, src) == ["non_contiguous_inputs"]


def test_an_ignore_index_kept_from_the_first_call_fails_the_repeated_calls() -> None:
    # The first call's ignore_index remembered in a module-level dict: only a case that calls
    # cross_entropy again with another ignore_index in the same process sees it.
    src = PROBLEM.reference.source().replace(
        REFERENCE_CE_HEAD,
        "    ignore_index = _FIRST.setdefault('ignore_index', ignore_index)\n" + REFERENCE_CE_HEAD,
    )
    src = src.replace("import torch\n", "import torch\n\n_FIRST = {}\n", 1)
    assert "_FIRST.setdefault" in src
    assert "each_call_its_own" in failing_case_names(PROBLEM, src)
