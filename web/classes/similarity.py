"""Which accepted codes of a problem are near-identical once names and layout are set aside.

A list for an instructor to look at, never a verdict: two learners who followed the same lecture
can write the same ten lines. Pure functions (no database), so that the rules are tested alone.

**Normalising.** The code is parsed; docstrings and type annotations are dropped (they change
nothing the code does) and the tree is written back by `ast.unparse`, which also drops comments
and makes the layout, brackets and quotes uniform. Its token stream is then renamed by first
appearance: identifiers become `N1, N2, ...` and literals `L1, L2, ...` in the order they first
appear, so renaming a variable or a constant everywhere changes nothing. Keywords, operators,
builtins, attribute names (`.rsqrt`, `.mean`) and keyword arguments' names (`dim=`) are kept:
they are what the code does.

**Measuring.** `difflib.SequenceMatcher` over the two token lists gives the share of tokens that
fall in matching blocks (`2·M / (|a| + |b|)`), the "share of matched tokens" shown. It is exact
for what it measures and easy to explain (the blocks are what the side-by-side view would
highlight), but quadratic in the worst case per pair, and a class has n² / 2 pairs. So pairs are
first screened by the overlap of their 5-token shingles (Dice coefficient, linear): two codes
sharing 85% of their tokens in long blocks share far more than `SCREEN` of their shingles, and
only the pairs that pass are measured. (A winnowing fingerprint alone would be faster still, but
its score is not a share of tokens and moves with the window.)

**What is left out.** The reference and the package's accepted solutions are public to whoever
solved the problem (the solutions tab), so resembling them says nothing: a code that *is* one of
them after normalising is not listed at all, and a pair whose two codes are both near-identical
to given solutions (share ≥ the threshold against the reference or an accepted one) is not listed
either. The instructor sees which given solution each side is closest to, never its code.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import io
import keyword
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# At or above this share of matched tokens a pair is listed. Measured on problem 204: its six
# accepted formulations (different algorithms for the same functions, each written by hand) share
# at most about 0.7 with one another and with the reference; a copy with renamed names and a new
# layout shares 1.0, and one with a line or two changed stays above 0.9.
THRESHOLD = 0.85
# The screen before measuring: pairs whose shingle overlap is below this are not measured.
SCREEN = 0.5
SHINGLE = 5
_KEPT_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


class _Strip(ast.NodeTransformer):
    """Docstrings and annotations out: neither changes what the code does."""

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            body = body[1:] or [ast.Pass()]
        return body

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.generic_visit(node)
        node.body = self._body(node.body)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.body = self._body(node.body)
        return node

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.body = self._body(node.body)
        node.returns = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        # `x: int = 1` is `x = 1`; a bare `x: int` does nothing.
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def tokens(code: str) -> tuple[str, ...] | None:
    """The normalised token stream of `code`, or None when it is not Python that parses."""
    try:
        tree = _Strip().visit(ast.parse(code))
        text = ast.unparse(ast.fix_missing_locations(tree))
        stream = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, ValueError, RecursionError, tokenize.TokenError):
        return None
    names: dict[str, str] = {}
    literals: dict[str, str] = {}
    out: list[str] = []
    kept = [t for t in stream if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER)]
    # What each open bracket is: a call's arguments ("call"), a definition's parameters ("def"),
    # or anything else. A keyword argument's name (`dim=` in a call) is the callee's parameter,
    # kept like an attribute; a parameter's name in a definition is the author's, renamed.
    brackets: list[str] = []
    for i, tok in enumerate(kept):
        kind, text = tok.type, tok.string
        previous = kept[i - 1].string if i else ""
        following = kept[i + 1].string if i + 1 < len(kept) else ""
        if kind == tokenize.NAME:
            keyword_argument = following == "=" and brackets[-1:] == ["call"]
            if text in _KEPT_NAMES or previous == "." or keyword_argument:
                out.append(text)
            else:
                out.append(names.setdefault(text, f"N{len(names) + 1}"))
        elif kind in (tokenize.NUMBER, tokenize.STRING):
            out.append(literals.setdefault(text, f"L{len(literals) + 1}"))
        elif kind == tokenize.NEWLINE:
            out.append("\n")
        elif kind == tokenize.INDENT:
            out.append("<in>")
        elif kind == tokenize.DEDENT:
            out.append("<out>")
        else:
            if text in ("(", "[", "{"):
                before = kept[i - 2].string if i >= 2 else ""
                called = text == "(" and (kept[i - 1].type == tokenize.NAME or previous in (")", "]"))
                brackets.append("def" if before == "def" else "call" if called else "other")
            elif text in (")", "]", "}") and brackets:
                brackets.pop()
            out.append(text)
    return tuple(out)


def share(a: Sequence[str], b: Sequence[str]) -> float:
    """The share of the two token lists that falls in matching blocks: 1.0 for equal lists."""
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _shingles(toks: Sequence[str]) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(toks[i : i + SHINGLE]) for i in range(max(1, len(toks) - SHINGLE + 1)))


def _screen(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 1.0


@dataclass(frozen=True)
class Near:
    """The given solution (reference or accepted/<stem>) a code is closest to, and how close."""

    name: str
    share: float


@dataclass(frozen=True)
class Pair:
    """Two codes (by their keys) whose share of matched tokens is at least the threshold."""

    a: int
    b: int
    share: float
    # The given solution each side is closest to, among those alike enough to measure (None:
    # none is; the share against them would be far below the threshold).
    near_a: Near | None
    near_b: Near | None


@dataclass(frozen=True)
class _Prepared:
    key: int
    toks: tuple[str, ...]
    shingles: frozenset[tuple[str, ...]]
    near: Near | None


def _closest(
    toks: tuple[str, ...], shingles: frozenset[tuple[str, ...]], given: Sequence[_Given]
) -> Near | None:
    """The given solution closest to a code, among those that pass the screen (None if none
    does: then none is near-identical, and the share against them is not worth measuring)."""
    best: Near | None = None
    for other in given:
        if _screen(shingles, other.shingles) < SCREEN:
            continue
        value = share(toks, other.toks)
        if best is None or value > best.share:
            best = Near(other.name, value)
    return best


@dataclass(frozen=True)
class _Given:
    name: str
    toks: tuple[str, ...]
    shingles: frozenset[tuple[str, ...]]


def similar_pairs(
    codes: Mapping[int, str], given: Mapping[str, str], threshold: float = THRESHOLD
) -> list[Pair]:
    """Pairs of `codes` (key: a learner's id, say) at or above `threshold`, most similar first.

    `given` are the solutions everyone may read (name to code: the reference, the package's
    accepted ones): a code equal to one of them after normalising is left out, and so is a pair
    whose two codes are both at or above the threshold against one of them. Code that does not
    parse is left out (accepted code always does)."""
    given_tokens = [_Given(name, t, _shingles(t)) for name, code in given.items() if (t := tokens(code))]
    prepared: list[_Prepared] = []
    for key, code in codes.items():
        toks = tokens(code)
        if not toks:
            continue  # not Python that parses, or nothing but comments: nothing to compare
        shingles = _shingles(toks)
        near = _closest(toks, shingles, given_tokens)
        if near is not None and near.share >= 1.0:
            continue  # it is a given solution, renamed at most: nothing to look at
        prepared.append(_Prepared(key, toks, shingles, near))
    pairs: list[Pair] = []
    for i, first in enumerate(prepared):
        for second in prepared[i + 1 :]:
            if _screen(first.shingles, second.shingles) < SCREEN:
                continue
            if _both_given(first.near, second.near, threshold):
                continue
            value = share(first.toks, second.toks)
            if value < threshold:
                continue
            pairs.append(Pair(first.key, second.key, value, first.near, second.near))
    pairs.sort(key=lambda p: (-p.share, p.a, p.b))
    return pairs


def _both_given(a: Near | None, b: Near | None, threshold: float) -> bool:
    """Both codes are near-identical to a given solution: their likeness says nothing."""
    return a is not None and b is not None and a.share >= threshold and b.share >= threshold
