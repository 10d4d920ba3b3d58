"""Diagnoses: why a failing case fails, from the expected and the got observations alone.

When a tensor observation fails, each diagnoser (one module each, in the spirit of the
checkers) tests a relation between the learner's tensor and the reference's: a permutation
of the axes, a constant factor, a shift by one, right except where the reference is 0, NaN
where it is finite, a step in the last place... The relations that hold are reported,
strongest first and at most two per case, each a sentence with its evidence. Over the whole
observation tree: a forward that is right with a gradient that is wrong or missing, an input
that changed during the call, an output of zeros or equal to an input. And, where a case
names its observations by a convention (stages in order, several calls of one object, several
eps values, a contiguous input beside a view, a batch): the first stage or call that goes
wrong, right only for the default eps, right only for the contiguous input, right only for
batch item 0.

Runs in the judge, never in the learner's process; uses torch only (the practice kit has it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.diagnose import (
    batch,
    eps,
    masked,
    names,
    nonfinite,
    precision,
    refusals,
    repeated,
    scale,
    shapes,
    shift,
    stages,
    views,
)
from judge.core.diagnose.probe import Diagnosis, Probe
from judge.core.texts import Text

__all__ = ["DIAGNOSERS", "TREE_DIAGNOSERS", "Diagnosis", "Probe", "diagnose_case", "leaves"]

MAX_PER_CASE = 2
SECOND_AT_LEAST = 0.6
# Order matters only for ties of strength: the earlier explanation is the simpler one.
DIAGNOSERS: list[Callable[[Probe], list[Diagnosis]]] = [
    shapes.diagnose,
    nonfinite.diagnose,
    scale.diagnose,
    shift.diagnose,
    masked.diagnose,
    batch.diagnose,
    precision.diagnose,
]
# Over the whole tree, reading how the case named its observations (each module's docstring
# gives the keys it reads): stages in order, several calls of one object, several eps values,
# a contiguous input beside a view of it.
TREE_DIAGNOSERS: list[Callable[[Case, Any, Any], list[Diagnosis]]] = [
    stages.diagnose,
    repeated.diagnose,
    eps.diagnose,
    views.diagnose,
]
# Diagnoses that explain why two of a case's results are equal (a value kept from the first
# call, the default eps used for every eps), so the generic "equals another result" stands down.
EXPLAIN_EQUAL_RESULTS = {repeated.KIND, eps.KIND}
AFTER_CALL = ("after_call", "after_calls", "_after", "unchanged", "untouched")


def leaves(tree: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of an observation tree by its path, as compare() names them."""
    out: dict[str, Any] = {}
    if isinstance(tree, dict):
        for key, value in tree.items():
            out.update(leaves(value, f"{path}.{key}" if path else str(key)))
    elif isinstance(tree, (list, tuple)):
        for i, value in enumerate(tree):
            out.update(leaves(value, f"{path}[{i}]"))
    else:
        out[path] = tree
    return out


def _is_grad(path: str) -> bool:
    return path.split(".")[0].split("[")[0] in ("grads", "grad") or ".grad" in path


def diagnose_case(case: Case, expected: Any, got: Any) -> list[Diagnosis]:
    """What can be said about why `got` fails where `expected` is right (strongest first)."""
    want, have = leaves(expected), leaves(got)
    failing = [path for path, e in want.items() if path in have and not _leaf_ok(case, path, e, have[path])]
    if not failing and set(want) == set(have):
        return []
    found: list[Diagnosis] = []
    found.extend(_tree_level(case, want, have, failing))
    found.extend(names.diagnose(expected, got))
    for tree_diagnoser in TREE_DIAGNOSERS:
        found.extend(tree_diagnoser(case, expected, got))
    for path in failing:
        e, g = want[path], have[path]
        found.extend(refusals.diagnose(path, e, g))
        if not (isinstance(e, torch.Tensor) and isinstance(g, torch.Tensor)):
            continue
        others = {k: v for k, v in have.items() if k != path and isinstance(v, torch.Tensor)}
        probe = Probe(path, e, g, case.checker_for(path), others)
        for diagnoser in DIAGNOSERS:
            try:
                found.extend(diagnoser(probe))
            except (RuntimeError, ValueError, IndexError):
                continue  # a relation that cannot even be tried on these tensors does not hold
        found.extend(_equal_to_other(probe))
    if any(d.kind in EXPLAIN_EQUAL_RESULTS for d in found):
        # A later call that returned the first call's values, or an eps ignored, already says
        # why two results are equal: "an input returned as it came" would point elsewhere.
        found = [d for d in found if d.kind != "equals_other"]
    found.sort(key=lambda d: -d.strength)
    shown: list[Diagnosis] = []
    for d in found:
        # A second explanation only when it is itself specific: a weak one next to a strong one
        # (an error "growing with magnitude" beside a constant factor) says nothing new.
        if shown and d.strength < SECOND_AT_LEAST:
            break
        if d.kind not in {s.kind for s in shown}:
            shown.append(d)
        if len(shown) == MAX_PER_CASE:
            break
    return shown


def _leaf_ok(case: Case, path: str, expected: Any, got: Any) -> bool:
    from judge.core.compare import compare_leaf

    return not compare_leaf(case, path, expected, got)


def _tree_level(
    case: Case, want: dict[str, Any], have: dict[str, Any], failing: list[str]
) -> list[Diagnosis]:
    out: list[Diagnosis] = []
    tensors = [p for p, v in want.items() if isinstance(v, torch.Tensor)]
    forward = [p for p in tensors if not _is_grad(p)]
    grads = [p for p in failing if _is_grad(p)]
    if grads and forward and all(_is_grad(p) for p in failing):
        missing = [p for p in grads if have.get(p) is None]
        names = ", ".join(f"`{p}`" for p in (missing or grads)[:3])
        if missing:
            text = Text(
                f"前向的结果都对，但 {names} 没有梯度：计算图在某处断了（detach()、torch.no_grad()、.data，或用 .tolist()/"
                "torch.tensor(...) 造了一个新张量？）",
                f"the forward results are right, but {names} got no gradient: the graph is cut somewhere "
                "(detach(), torch.no_grad(), .data, or a new tensor made with .tolist() / torch.tensor(...)?)",
            )
        else:
            text = Text(
                f"前向的结果都对，但 {names} 的梯度不对：反向经过的某一步与前向不一致（原地修改了反向需要的张量？"
                "自己写的 backward？梯度少了一个因子？）",
                f"the forward results are right, but the gradient of {names} is wrong: a step the backward "
                "pass goes through differs (an in-place edit of a tensor backward needs? a hand-written "
                "backward? a factor missing?)",
            )
        out.append(Diagnosis("gradient_missing" if missing else "gradient_wrong", 0.9, text))
    modified = [p for p in failing if any(mark in p for mark in AFTER_CALL)]
    if modified:
        names = ", ".join(f"`{p}`" for p in modified[:3])
        out.append(
            Diagnosis(
                "input_modified",
                0.97,
                Text(
                    f"调用之后 {names} 变了：你的代码原地修改了它的输入（x += ...、x.mul_()、或对 x.float() 的原地操作，"
                    "而 fp32 的 x.float() 就是 x 本身）",
                    f"{names} changed during the call: your code wrote into its input (x += ..., x.mul_(), "
                    "or an in-place op on x.float(), which for an fp32 x is x itself)",
                ),
            )
        )
    return out


def _equal_to_other(p: Probe) -> list[Diagnosis]:
    g = p.got
    if g.numel() and g.dtype != torch.bool and bool((g == 0).all()) and not bool((p.expected == 0).all()):
        return [
            Diagnosis(
                "zeros",
                0.7,
                Text(
                    f"{p.name} 全是 0：结果没有写进去，或者一个掩码把所有位置都屏蔽了",
                    f"{p.name} is all zeros: the result was never written, or a mask removed every position",
                ),
            )
        ]
    for path, other in p.others.items():
        if other.shape == g.shape and other.dtype == g.dtype and g.numel() and bool(torch.equal(other, g)):
            return [
                Diagnosis(
                    "equals_other",
                    0.75,
                    Text(
                        f"{p.name} 与 `{path}` 完全相同：是不是把输入原样返回了，或者两个结果共用了同一块存储？",
                        f"{p.name} equals `{path}` exactly: was an input returned as it came, or do the two "
                        "results share one buffer?",
                    ),
                )
            ]
    return []
