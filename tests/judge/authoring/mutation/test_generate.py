"""Mutants of a reference: each operator proposes the edit it stands for, ids are stable, and
nothing that cannot change behaviour (docstrings, annotations, messages) is mutated."""

from __future__ import annotations

import textwrap

import pytest

from judge.authoring.mutation.generate import generate
from tests.paths import REPO_ROOT


def changes(source: str) -> dict[str, str]:
    """operator -> the changes it made (joined), for readable assertions."""
    out: dict[str, list[str]] = {}
    for m in generate(textwrap.dedent(source)):
        out.setdefault(m.operator, []).append(m.change)
    return {k: " | ".join(v) for k, v in out.items()}


@pytest.mark.parametrize(
    ("source", "operator", "change"),
    [
        ("y = x.sum(dim=-1, keepdim=True)", "dim", "x.sum(dim=-2, keepdim=True)"),
        ("y = x.sum(dim=-1, keepdim=True)", "keepdim", "x.sum(dim=-1)"),
        ("y = x.transpose(1, 2)", "dim", "x.transpose(0, 2)"),
        ("y = torch.cat([a, b], 1)", "dim", "torch.cat([a, b], 0)"),
        ("y = x.float() * 2", "drop-cast", "x.float() → x"),
        ("y = z.to(x.dtype)", "drop-cast", "z.to(x.dtype) → z"),
        ("y = torch.zeros(3, dtype=torch.float32)", "drop-dtype", "torch.zeros(3)"),
        ("m = a < b", "compare", "a <= b"),
        ("m = a >= b", "compare", "a > b"),
        ("y = x[:, :3]", "int+1", "3 → 4"),
        ("y = x[:, :n]", "slice-upper+1", ":n → :n + 1"),
        ("y = x[:, :n]", "slice-upper-1", ":n → :n - 1"),
        ("y = torch.rsqrt(v + eps)", "eps-drop", "v + eps → v"),
        ("y = torch.rsqrt(v + self.eps)", "eps-outside", "1.0 / (torch.sqrt(v) + self.eps)"),
        ("y = torch.sqrt(v + eps)", "eps-outside", "torch.sqrt(v) + eps"),
        ("y = a + b", "arith", "a - b"),
        ("y = a * b", "arith", "a / b"),
        ("s = s.masked_fill(m, float('-inf'))", "fill-zero", "→ 0.0"),
        ("s = s.masked_fill(m, float('-inf'))", "fill-finfo-min", "torch.finfo(torch.float32).min"),
        ("s = s.masked_fill(m, torch.finfo(s.dtype).min)", "fill-inf", "float('-inf')"),
        ("x.mul_(2)", "out-of-place", "x.mul(2)"),
        ("def f(x):\n    return x.mul(2)", "in-place", "x.mul_(2)"),
        ("x += y", "out-of-place", "x = x + y"),
        ("def f(h, y):\n    h = h + y\n    return h", "in-place", "h += y"),
        ("y = x.clone()", "drop-clone", "x.clone() → x"),
        ("y = x.detach()", "drop-detach", "x.detach() → x"),
        ("with torch.no_grad():\n    w.copy_(v)", "drop-no_grad", "removed around"),
        (
            "def f(x):\n    if x.numel() == 0:\n        return x\n    return x * 2",
            "drop-guard",
            "removed `if",
        ),
        ("y = torch.cat([a, b], dim=-1)", "swap-args", "torch.cat([b, a], dim=-1)"),
        ("y = a @ b", "swap-args", "b @ a"),
        ("y = torch.where(m, a, b)", "swap-args", "torch.where(m, b, a)"),
        ("y = F.silu(g)", "neighbour", "F.gelu(g)"),
        ("y = F.silu(g)", "drop-call", "F.silu(g) → g"),
        ("ok = a in b", "negate", "a not in b"),
        ("ok = a and b", "boolop", "a or b"),
        ("m = nn.Linear(a, b, bias=False)", "bool", "False → True"),
        ("m = nn.Linear(a, b, bias=False)", "swap-args", "nn.Linear(b, a, bias=False)"),
    ],
)
def test_each_operator_makes_its_edit(source: str, operator: str, change: str) -> None:
    made = changes(source)
    assert operator in made, made
    assert change in made[operator], made[operator]


def test_in_place_only_where_the_caller_may_see_it() -> None:
    """A fresh local edited in place is no different: no mutant for it (it would be equivalent)."""
    made = changes(
        """
        def f(x, cache):
            scores = x @ x.T
            scores = scores.masked_fill(scores > 0, 0.0)
            mask = torch.ones(3, 3).tril()
            z = scores
            z = z + 1
            cache.k = cache.k.mul(2)
            return x.masked_fill(mask, 0.0) + z
        """
    )
    assert made["in-place"].count("masked_fill_") == 1 and "x.masked_fill_(mask" in made["in-place"]
    assert "cache.k.mul_(2)" in made["in-place"]
    assert "tril_" not in made["in-place"] and "z += 1" not in made["in-place"]


def test_layers_swapped_within_one_expression() -> None:
    made = changes(
        """
        class M:
            def forward(self, x):
                return self.down(F.silu(self.gate(x)) * self.up(x))
        """
    )
    assert "self.down(F.silu(self.up(x)) * self.gate(x))" in made["swap-modules"]


def test_statements_that_update_state_can_be_left_out() -> None:
    made = changes(
        """
        def update(self, k):
            self.length = self.length + 1
            self.k[:, :, 0].copy_(k)
            local = k * 2
            return local
        """
    )
    assert "removed `self.length = self.length + 1`" in made["drop-stmt"]
    assert "removed `self.k[:, :, 0].copy_(k)`" in made["drop-stmt"]
    assert "local = k * 2" not in made["drop-stmt"]  # dropping a local's assignment is a NameError


def test_docstrings_annotations_and_messages_are_left_alone() -> None:
    mutants = generate(
        textwrap.dedent(
            '''
            """Module docstring with 1 and 2."""
            def f(x: "list[int]", n: int = 3) -> int:
                """Doubles: 2 * x."""
                assert n > 0, f"n must be positive, got {n + 1}"
                if n < 0:
                    raise ValueError(f"bad {n - 1}")
                return x * 2
            '''
        )
    )
    lines = {m.line for m in mutants}
    assert lines <= {3, 6, 7, 8}, sorted((m.line, m.change) for m in mutants)
    assert not [m for m in mutants if m.line == 3 and "int" in m.change]  # annotations
    # The messages stay as written in every mutant but the one that removes the guard itself.
    assert all("positive, got {n + 1}" in m.source for m in mutants)
    assert all("bad {n - 1}" in m.source for m in mutants if m.operator != "drop-guard")


def test_ids_are_stable_unique_and_name_place_operator_and_number() -> None:
    source = (REPO_ROOT / "problems" / "204-rmsnorm" / "reference.py").read_text()
    first, second = generate(source), generate(source)
    assert [m.id for m in first] == [m.id for m in second]
    assert len({m.id for m in first}) == len(first)
    for m in first:
        suffix = "" if m.number == 1 else f"#{m.number}"
        assert m.id == f"{m.place}:{m.operator}{suffix}"
        assert m.source != source and "\n" not in m.change
    assert len({m.source for m in first}) == len(first)  # no two mutants are the same program


def test_every_mutant_compiles() -> None:
    for path in sorted((REPO_ROOT / "problems").glob("*/reference.py")):
        for m in generate(path.read_text()):
            compile(m.source, f"{path.parent.name}:{m.id}", "exec")
