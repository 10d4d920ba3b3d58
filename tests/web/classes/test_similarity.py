"""web.classes.similarity: renamed and reformatted copies still match, different algorithms do
not, and what the package gives everyone (its reference, its accepted solutions) says nothing."""

from __future__ import annotations

from tests.web.factories import PKG_204
from web.classes.similarity import THRESHOLD, share, similar_pairs, tokens

REFERENCE = (PKG_204 / "reference.py").read_text()
ACCEPTED = {p.stem: p.read_text() for p in sorted((PKG_204 / "solutions" / "accepted").glob("*.py"))}
GIVEN = {"reference": REFERENCE, **{f"accepted/{k}": v for k, v in ACCEPTED.items()}}

SOFTMAX = '''
import torch


def softmax(x, dim=-1):
    """Softmax along dim, stable."""
    shifted = x - x.max(dim=dim, keepdim=True).values  # subtract the max
    e = torch.exp(shifted)
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x, dim=-1):
    m = x.max(dim=dim, keepdim=True).values
    return x - m - torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
'''

# The same code: every name and literal renamed, comments and the docstring gone, new layout,
# type annotations added, quotes and brackets changed.
SOFTMAX_RENAMED = """
import torch
def softmax(t: torch.Tensor, axis: int = -1) -> torch.Tensor:
    s = (t - t.max(dim=axis, keepdim=True).values)
    ex = torch.exp( s )
    return ex / ex.sum(dim = axis, keepdim = True)
def log_softmax(t, axis=-1):
    # the log of the above
    top = t.max(dim=axis, keepdim=True).values
    return t - top - torch.log(torch.exp(t - top).sum(dim=axis, keepdim=True))
"""

# Another algorithm for the same functions: torch's own softmax, logsumexp.
SOFTMAX_OTHER = """
import torch
import torch.nn.functional as F


def softmax(x, dim=-1):
    return F.softmax(x.float(), dim=dim).to(x.dtype)


def log_softmax(x, dim=-1):
    lse = torch.logsumexp(x.float(), dim=dim, keepdim=True)
    out = x.float() - lse
    return out.to(x.dtype)
"""


def test_renaming_and_layout_change_nothing() -> None:
    a, b = tokens(SOFTMAX), tokens(SOFTMAX_RENAMED)
    assert a is not None and b is not None
    assert a == b
    assert share(a, b) == 1.0


def test_a_changed_line_lowers_the_share_a_little() -> None:
    changed = SOFTMAX_RENAMED.replace("ex = torch.exp( s )", "ex = s.exp()")
    a, b = tokens(SOFTMAX), tokens(changed)
    assert a is not None and b is not None
    assert THRESHOLD <= share(a, b) < 1.0


def test_different_algorithms_do_not_match() -> None:
    a, b = tokens(SOFTMAX), tokens(SOFTMAX_OTHER)
    assert a is not None and b is not None
    assert share(a, b) < THRESHOLD
    assert similar_pairs({1: SOFTMAX, 2: SOFTMAX_OTHER}, {}) == []


def test_attribute_calls_are_kept_not_renamed() -> None:
    # torch.exp and torch.sqrt are what the code does: they are not names to rename.
    toks = tokens("import torch\ny = torch.exp(x)\n")
    assert toks is not None and "exp" in toks and "x" not in toks


def test_the_packages_own_accepted_solutions_differ_from_one_another() -> None:
    """The threshold's calibration: 204's formulations, each a different way to write it."""
    streams = {name: tokens(code) for name, code in GIVEN.items()}
    names = sorted(streams)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ta, tb = streams[a], streams[b]
            assert ta is not None and tb is not None
            assert share(ta, tb) < THRESHOLD, (a, b)


def test_pairs_are_sorted_by_share_with_the_closest_given_solution() -> None:
    changed = SOFTMAX_RENAMED.replace("ex = torch.exp( s )", "ex = s.exp()")
    pairs = similar_pairs({1: SOFTMAX, 2: SOFTMAX_RENAMED, 3: changed, 4: SOFTMAX_OTHER}, GIVEN)
    assert [(p.a, p.b) for p in pairs[:1]] == [(1, 2)]
    assert {(p.a, p.b) for p in pairs} == {(1, 2), (1, 3), (2, 3)}
    assert [p.share for p in pairs] == sorted((p.share for p in pairs), reverse=True)
    assert pairs[0].near_a is None  # nothing like 204's solutions: not even measured against them


def test_each_side_names_the_given_solution_it_is_closest_to() -> None:
    # Two copies of one learner's code that builds on the reference with much of its own: alike,
    # each closest to the reference, neither near-identical to it.
    extra = (
        "\n\ndef extra_{n}(x):\n    y = x * {n}\n    z = y + x\n    return torch.cat([x, y, z]).sum(dim=0)\n"
    )
    one = REFERENCE + "".join(extra.format(n=n) for n in range(4))
    two = one.replace("extra_", "more_").replace("y = x", "w = x").replace("y + x", "w + x")
    pairs = similar_pairs({1: one, 2: two}, GIVEN)
    assert len(pairs) == 1 and pairs[0].share >= THRESHOLD
    for near in (pairs[0].near_a, pairs[0].near_b):
        assert near is not None and near.name == "reference" and near.share < THRESHOLD


def test_code_that_is_the_reference_is_never_listed() -> None:
    renamed_reference = REFERENCE.replace("xf", "h").replace("scale", "factor").replace("    ", "  ")
    pairs = similar_pairs({1: REFERENCE, 2: renamed_reference}, GIVEN)
    assert pairs == []


def test_a_pair_both_near_the_reference_is_not_listed_but_a_copy_of_one_is() -> None:
    # Two learners who each changed the reference a little: alike only through the reference.
    one = REFERENCE.replace("scale = 1.0 + self.weight.float()", "scale = self.weight.float() + 1.0")
    two = REFERENCE.replace("return x * torch.rsqrt(", "return x / torch.sqrt(")
    assert similar_pairs({1: one, 2: two}, GIVEN) == []
    # Without the package's solutions to compare with, the same pair would be listed.
    assert [(p.a, p.b) for p in similar_pairs({1: one, 2: two}, {})] == [(1, 2)]


def test_a_pair_near_an_accepted_solution_is_not_listed() -> None:
    stem, code = next(iter(ACCEPTED.items()))
    one = code.replace("eps", "epsilon")
    two = code + "\n\nUNUSED = 3\n"
    assert similar_pairs({1: one, 2: two}, GIVEN) == []
    pairs = similar_pairs({1: one, 2: two}, {"reference": REFERENCE})
    assert len(pairs) == 1 and (pairs[0].near_a is None or pairs[0].near_a.share < THRESHOLD)
    assert stem  # the file exists


def test_code_that_does_not_parse_or_holds_nothing_is_left_out() -> None:
    assert tokens("def broken(:\n") is None
    assert similar_pairs({1: "def broken(:\n", 2: SOFTMAX}, {}) == []
    assert similar_pairs({1: "# only a comment\n", 2: '"""A docstring."""\n'}, {}) == []
