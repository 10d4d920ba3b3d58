"""The "facts" check of `judge validate`: a case may not return a plain bool, int or float it
computed from the learner's objects (the case runs in the learner's process); it returns the
tensors, and the judge computes the fact with a checker."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from judge.authoring.validate import MIN_PUBLIC, Validation, facts_in_cases, validate_package
from judge.settings import JudgeSettings
from tests.factories import PROPERTIES_CASE_F, local_backend, make_package

HEADER = "\n".join(
    [
        "import torch",
        "from judge.core.casekit import case, outcome",
        "from judge.core.checkers import exact, facts",
        "",
        "",
    ]
)


def _found(body: str) -> dict[str, list[str]]:
    """{case: [why `code`, ...]} for a cases.py made of HEADER and `body`."""
    found = facts_in_cases(HEADER + textwrap.dedent(body))
    return {name: [f"{f.why} `{f.code}`" for f in facts] for name, facts in found.items()}


def test_flags_statistics_and_predicates_computed_in_the_case() -> None:
    found = _found(
        """
        @case(points=1)
        def init(impl, rng):
            w = impl.Table(10, 4).weight
            draw = float(torch.rand(()))
            stats = {"mean": round(float(w.mean()), 3), "finite": bool(torch.isfinite(w).all())}
            stats["same"] = torch.equal(w, w)
            stats.update(big=w.abs().max().item(), moved=draw != 0.5)
            return stats
        """
    )
    assert sorted(found["init"]) == [
        "`.item()` `w.abs().max().item()`",
        "`bool(...)` `bool(torch.isfinite(w).all())`",
        "`round(...)` of a computed value `round(float(w.mean()), 3)`",
        "`torch.equal(...)` `torch.equal(w, w)`",
        "a comparison `draw != 0.5`",
    ]


def test_follows_helpers_names_and_unpacked_tuples() -> None:
    found = _found(
        """
        def _compare(impl, x):
            y = impl.f(x)
            return {"y": y, "close": bool((y - 2 * x).abs().max() < 1e-4)}

        def _pair(impl, x):
            y = impl.f(x)
            return y, y.shape == x.shape

        @case(points=1)
        def via_helper(impl, rng):
            return _compare(impl, rng.normal(3))

        @case(points=1)
        def via_tuple(impl, rng):
            y, same_shape = _pair(impl, rng.normal(3))
            return {"y": y, "same_shape": same_shape}
        """
    )
    assert found == {
        "via_helper": ["`bool(...)` `bool((y - 2 * x).abs().max() < 1e-4)`"],
        "via_tuple": ["a comparison `y.shape == x.shape`"],
    }


def test_data_reported_values_and_behaviour_are_not_facts() -> None:
    found = _found(
        """
        def _raises(fn):
            try:
                fn()
            except Exception:
                return True
            return False

        @case(points=1)
        def fine(impl, rng):
            cache = impl.Cache(4)
            logits, hidden = impl.model(rng.normal(2, 3))
            try:
                impl.f(torch.zeros(0))
            except ValueError as exc:
                message = str(exc)
            else:
                message = ""
            w = impl.Table(10, 4).weight
            return {
                "weight": w,                          # the tensor itself: the judge checks it
                "mask": w > 0,                        # a tensor, compared by the judge
                "length": int(cache.length),          # the learner's own value, read as it is
                "count": len(hidden),                 # how many tensors its answer holds
                "shape": tuple(w.shape),
                "raises": _raises(lambda: impl.f(torch.zeros(0))),
                "outcome": outcome(lambda: impl.f(torch.zeros(0))),
                "names": {p: p in message for p in ("a", "b")},
                "constant": 3,
            }
        """
    )
    # Only the tensor comparison is derived; the judge leaves it alone (a tensor, see below).
    assert found == {"fine": ["a comparison `w > 0`"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("observe", "ok"),
    [
        # A flag computed in the case: a module that looks at its caller could make it True.
        ("'initialised': bool((impl.f(x) != 0).any())", False),
        ("'mean': float(impl.f(x).mean())", False),
        # The tensor itself, with the fact computed by the judge.
        ("'initialised': impl.f(x)", True),
    ],
)
def test_the_check_refuses_a_flag_computed_in_the_case(tmp_path: Path, observe: str, ok: bool) -> None:
    varied = "checkers={'initialised': facts('varied')}"
    cases = (
        HEADER
        + "".join(
            f"@case(points={10 if i < 10 else 0}, public={i < MIN_PUBLIC}, {varied})\n"
            f"def c{i}(impl, rng):\n"
            f"    x = rng.normal(3, {i + 2})\n"
            f"    return {{'y': impl.f(x), {observe}}}\n\n"
            for i in range(10)
        )
        + PROPERTIES_CASE_F
    )
    wrong = {
        "times_three": '"""乘了 3 / You multiplied by 3."""\ndef f(x):\n    return x * 3\n',
        "plus_x": '"""加了 1 / You added one."""\ndef f(x):\n    return x * 2 + 1\n',
        "squared": '"""平方了 / You squared it."""\ndef f(x):\n    return x * x\n',
    }
    pkg = make_package(tmp_path, cases=cases, wrong=wrong, accepted={"sum": "def f(x):\n    return x + x\n"})
    result: Validation = validate_package(pkg, local_backend(), JudgeSettings(cache_dir=tmp_path / "cache"))
    checks = {c.name: c for c in result.checks}
    assert checks["facts"].ok is ok, checks["facts"].detail
    if ok:
        assert result.ok, {c.name: c.detail for c in result.checks if not c.ok}
    else:
        assert "in the learner's process" in checks["facts"].detail
        # One line per case, each naming the line and the expression.
        refused = checks["facts"].detail.splitlines()[1:]
        assert len(refused) == 10 and refused[0].startswith("line 8: `") and refused[0].endswith("(case c0)")
        assert [c.name for c in result.checks if not c.ok] == ["facts"]
