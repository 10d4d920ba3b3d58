"""Compare a learner's observation tree with the reference's, leaf by leaf, with the case's checkers."""

from __future__ import annotations

import math
from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.checkers import Mismatch
from judge.core.messages import msg
from judge.core.observations import Unobservable
from judge.core.texts import Text

MAX_MISMATCHES = 4


def describe_type(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor {tuple(v.shape)} {v.dtype}"
    if isinstance(v, Unobservable):
        return v.type_name
    if v is None:
        return "None"
    return type(v).__name__


def compare(case: Case, expected: Any, got: Any) -> list[Mismatch]:
    """All mismatches (at most a few) between two observation trees."""
    out: list[Mismatch] = []
    _walk(case, "", expected, got, out)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(case: Case, path: str, expected: Any, got: Any, out: list[Mismatch]) -> None:
    if len(out) >= MAX_MISMATCHES:
        return
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            want, have = describe_type(expected), describe_type(got)
            out.append(Mismatch(path, msg("expected_tensor", expected=want, got=have)))
            return
        m = case.checker_for(path).check(path, expected, got)
        if m is not None:
            out.append(m)
        return
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            have = describe_type(got)
            out.append(Mismatch(path, msg("expected_dict", got=have)))
            return
        if list(expected) != list(got) and set(expected) != set(got):
            missing = [k for k in expected if k not in got]
            extra = [k for k in got if k not in expected]
            parts = [msg("keys_missing", keys=", ".join(repr(k) for k in missing))] if missing else []
            parts += [msg("keys_unexpected", keys=", ".join(repr(k) for k in extra))] if extra else []
            out.append(Mismatch(path, Text("；".join(t.zh for t in parts), "; ".join(t.en for t in parts))))
            return
        for key in expected:
            _walk(case, _join(path, key), expected[key], got[key], out)
        return
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            have = describe_type(got)
            out.append(Mismatch(path, msg("expected_sequence", n=len(expected), got=have)))
            return
        if len(got) != len(expected):
            out.append(Mismatch(path, msg("wrong_length", expected=len(expected), got=len(got))))
            return
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            _walk(case, f"{path}[{i}]", e, g, out)
        return
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        e_t = torch.tensor([expected], dtype=torch.float64)
        g_t = torch.tensor([float(got)], dtype=torch.float64)
        m = case.checker_for(path).check(path, e_t, g_t)
        if m is not None:
            out.append(Mismatch(path, msg("expected_value", expected=repr(expected), got=repr(got))))
        return
    same_type = type(expected) is type(got)
    equal = same_type and (
        expected == got or (isinstance(expected, float) and math.isnan(expected) and math.isnan(got))
    )
    if not equal:
        want, have = _short(expected), _short(got)
        out.append(Mismatch(path, msg("expected_value", expected=want, got=have)))


def _short(v: Any) -> str:
    if isinstance(v, (torch.Tensor, Unobservable)):
        return describe_type(v)
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def compare_leaf(case: Case, path: str, expected: Any, got: Any) -> list[Mismatch]:
    """The mismatches of one leaf (or subtree) at `path`."""
    out: list[Mismatch] = []
    _walk(case, path, expected, got, out)
    return out
