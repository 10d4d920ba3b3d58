"""Problem 216 through the real judge: exact draws, partial credit for the right distribution;
the top-p tie rule does not depend on a sort's order; the former survivors (a temperature guard
weakened or dropped, "before <= p") each fail the case of their promise."""

from __future__ import annotations

import pytest
import torch

from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.compare import compare
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, mutant_source, source_module
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow

PROBLEM = Problem(REPO_ROOT / "problems" / "216-sampling")

EXACT_DRAWS = {
    "sample_fixed_seed",
    "greedy",
    "sample_bf16",
    "inputs_not_modified",
    "top_p_ties_at_cut",
    "sample_calls",
}
TIE_CASES = {"top_p_exact_boundary", "top_p_ties_at_cut"}

# transformers' TopPLogitsWarper: an ascending sort, "tail <= 1 - p", the mask scattered back.
TRANSFORMERS_TOP_P = """
    if top_p < 1.0:
        asc, idx = x.sort(dim=-1)
        remove = asc.softmax(dim=-1).cumsum(dim=-1) <= 1 - top_p
        remove[..., -1:] = False
        x = x.masked_fill(remove.scatter(1, idx, remove), float("-inf"))
    return x
"""


def _wrong(stem: str) -> str:
    return next(s for s in PROBLEM.solutions("wrong") if s.path.stem == stem).source()


def _failing(source: str) -> set[str]:
    """The cases `source` fails, run in this process as the runner does (global seed, errors fail)."""
    ref = source_module("reference", PROBLEM.reference.source())
    impl = source_module("candidate", source)
    out = set()
    for c in PROBLEM.cases:
        torch.default_generator.manual_seed(c.seed)
        expected = c.fn(ref, Rng(c.seed))
        torch.default_generator.manual_seed(c.seed)
        try:
            got = c.fn(impl, Rng(c.seed))
        except Exception:  # any error fails the case, as in the runner
            out.add(c.name)
            continue
        if compare(c, expected, got):
            out.add(c.name)
    return out


def _with_top_p(block: str) -> str:
    """The reference with its top-p step replaced by `block`."""
    src = PROBLEM.reference.source()
    start, end = src.index("    if top_p < 1.0:"), src.index("    return x\n")
    return src[:start] + block.lstrip("\n") + src[end + len("    return x\n") :]


@pytest.mark.parametrize(
    ("mutant_id", "case_name"),
    [
        ("filter_logits/0:drop-guard", "temperature_not_positive"),  # filter_logits divides by 0
        ("filter_logits/0:compare", "temperature_not_positive"),  # temperature < 0: 0 gets through
        ("filter_logits/0:int-1", "temperature_not_positive"),  # temperature <= -1: -0.5 gets through
        (
            "filter_logits/4.3:compare",
            "top_p_exact_boundary",
        ),  # before <= p keeps the token with exactly p before it
    ],
)
def test_former_survivors_fail_only_the_case_of_their_promise(mutant_id: str, case_name: str) -> None:
    assert _failing(mutant_source(PROBLEM, mutant_id)) == {case_name}


@pytest.mark.parametrize("mutant_id", ["filter_logits/def:int-1", "sample/def:int-1"])
def test_declared_equivalents_pass_everything(mutant_id: str) -> None:
    # A default top_k of -1 fails 0 < top_k exactly as 0 does.
    assert "top_k: int=-1" in mutant_source(PROBLEM, mutant_id)
    assert _failing(mutant_source(PROBLEM, mutant_id)) == set()


def test_ties_settled_by_sort_order_fail_only_the_tie_cases() -> None:
    # The former reference (descending sort, mask scattered back) and transformers' warper are
    # right everywhere except at ties, where the sort's order picks the survivors.
    assert _failing(_wrong("top_p_ties_by_sort_order")) == TIE_CASES
    assert _failing(_with_top_p(TRANSFORMERS_TOP_P)) == TIE_CASES


@pytest.mark.parametrize("stem", ["reference", "ascending_sort", "row_loop", "pairwise_mass"])
def test_kept_set_does_not_depend_on_token_order(stem: str) -> None:
    # Shuffling the vocabulary shuffles the result and nothing else, ties at the cut included.
    src = (
        PROBLEM.reference.source()
        if stem == "reference"
        else next(s for s in PROBLEM.solutions("accepted") if s.path.stem == stem).source()
    )
    impl = source_module(stem, src)
    g = torch.Generator().manual_seed(216)
    x = torch.randint(-2, 3, (4, 200), generator=g).float()  # five values, forty ties each
    for top_p in (0.0, 0.3, 0.5, 0.9):
        y = impl.filter_logits(x, top_p=top_p)
        perm = torch.randperm(200, generator=g)
        assert torch.equal(impl.filter_logits(x[:, perm], top_p=top_p), y[:, perm]), top_p


@pytest.mark.parametrize("stem", ["global_rng", "samples_in_sorted_order"])
def test_right_distribution_wrong_draws(stem: str, store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong(stem), store)
    failing = {c.name for c in report.cases if c.verdict != Verdict.AC}
    # The frequencies are right, so sample_distribution passes; only the exact ids differ.
    assert failing == EXACT_DRAWS
    hinted = next(c for c in report.cases if c.name == "sample_fixed_seed")
    assert "generator" in hinted.hint


def test_float64_filters_draw_the_same_tokens(store: ExpectedStore) -> None:
    src = (
        PROBLEM.reference.source()
        .replace("x = logits.float() / temperature", "x = (logits.double() / temperature).float()")
        .replace(
            "probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)",
            "probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p).double(), -1).float()",
        )
    )
    assert "double" in src and ".double(), -1).float()" in src
    report = judge_problem(PROBLEM, src, store)
    assert report.verdict == Verdict.AC, [
        (c.name, c.message) for c in report.cases if c.verdict != Verdict.AC
    ]


def test_starter_scores_zero_with_readable_errors(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, PROBLEM.starter.source(), store)
    assert report.verdict == Verdict.RE and report.score == 0
    assert "NotImplementedError" in report.cases[0].message


def test_a_top_p_cut_counted_over_the_whole_batch_is_not_told_the_temperature_hint(
    store: ExpectedStore,
) -> None:
    """One number of kept tokens for the whole batch (the rows' counts added up) moves one draw
    of sample_fixed_seed the way the temperature applied too late does: one changed token id
    names no mistake, and the filters are wrong where the late temperature is right."""
    old = "n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)"
    new = (
        "n_keep = torch.full_like(before[..., :1], int((before < top_p).sum()), dtype=torch.long)"
        ".clamp(min=1, max=before.shape[-1])"
    )
    source = PROBLEM.reference.source()
    assert old in source
    report = judge_problem(PROBLEM, source.replace(old, new), store)
    by_name = {c.name: c for c in report.cases}
    assert by_name["sample_fixed_seed"].verdict == Verdict.WA
    late = _wrong("temperature_after_filters")
    assert "too late" in late
    shown = {c.name: c.hint.en for c in report.cases if c.hint}
    assert not [n for n, hint in shown.items() if hint in late], shown
    assert shown == {}


def test_the_late_temperature_is_still_told_its_hint_starting_with_the_symptom(store: ExpectedStore) -> None:
    report = judge_problem(PROBLEM, _wrong("temperature_after_filters"), store)
    hinted = [c for c in report.cases if c.hint]
    assert {c.name for c in hinted} >= {"filter_order", "filter_bf16"}
    assert hinted[0].hint.en.startswith("With top-p and a temperature other than 1 you keep a different set")


# transformers' own warpers, as a learner porting production code would chain them (issue 29).
TRANSFORMERS_WARPERS = """
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    x = TemperatureLogitsWarper(float(temperature))(None, logits.float())
    if top_k:
        x = TopKLogitsWarper(top_k)(None, x)
    if top_p < 1.0:
        x = TopPLogitsWarper(top_p)(None, x)
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
"""


def test_transformers_warpers_differ_only_at_ties_on_the_top_p_cut() -> None:
    """The statement's "differs from transformers" note: every rule but the ties at the top-p cut
    is transformers' own behaviour (its temperature check included)."""
    failing = failing_cases(PROBLEM, TRANSFORMERS_WARPERS)
    assert set(failing) == {"top_p_exact_boundary", "top_p_ties_at_cut"}
    # The exact boundaries themselves agree; only p = 0.9, whose cut falls in the tied group, differs.
    assert [m.split(":")[0] for m in failing["top_p_exact_boundary"]] == ["p_0.9"]
