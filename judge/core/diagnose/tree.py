"""Walking a case's observation trees for the diagnoses that read how a case named its
observations (several calls of one object, several eps values, a contiguous input beside a
view of it): the nodes, their paths as compare() names them, and the case's own verdict on a
subtree."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from judge.core.casekit import Case
from judge.core.diagnose.probe import Diagnosis


def join(path: str, key: Any) -> str:
    """A child's path, as compare() and leaves() write it: "a.b", "a[2]"."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def pairs(expected: Any, got: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every dict, list and tuple of the expected tree with its path and the got tree's node at
    the same place (None where the got tree has none), the trees themselves first. (Paths are
    not parsed back: keys such as "t_0.7" hold dots.)"""
    if isinstance(expected, dict):
        yield path, expected, got
        for key, value in expected.items():
            theirs = got.get(key) if isinstance(got, dict) else None
            yield from pairs(value, theirs, join(path, key))
    elif isinstance(expected, (list, tuple)):
        yield path, expected, got
        for i, value in enumerate(expected):
            theirs = got[i] if isinstance(got, (list, tuple)) and i < len(got) else None
            yield from pairs(value, theirs, join(path, i))


def first_in_dicts(
    case: Case,
    expected: Any,
    got: Any,
    look: Callable[[Case, str, dict[Any, Any], dict[Any, Any]], Diagnosis | None],
) -> list[Diagnosis]:
    """The first diagnosis `look` finds in a dict of the expected tree beside the got tree's
    dict at the same place (one per case: the first dict that shows the pattern says it)."""
    for path, want, have in pairs(expected, got):
        if isinstance(want, dict) and isinstance(have, dict):
            found = look(case, path, want, have)
            if found is not None:
                return [found]
    return []


def has_tensor(tree: Any) -> bool:
    if isinstance(tree, torch.Tensor):
        return True
    if isinstance(tree, dict):
        return any(has_tensor(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return any(has_tensor(v) for v in tree)
    return False


def right(case: Case, path: str, expected: Any, got: Any) -> bool:
    """The case's own checkers accept `got` (a leaf or a whole subtree) at `path`."""
    from judge.core.compare import compare_leaf  # judge.core.compare imports the diagnosers' package

    return not compare_leaf(case, path, expected, got)


def name(path: str) -> str:
    return f"`{path}`" if path else "the output"
