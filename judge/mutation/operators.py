"""Mutation operators for tensor code: each proposes single-change edits of one AST node.

An operator looks at one node of the reference and returns the edits it would make there,
each as (operator name, replacement). The replacement is a new node (or a list of
statements, for a statement-level edit) built from copies, so proposing never changes the
tree. `judge.mutation.generate` applies one edit at a time to a copy of the module.

The operators are the mistakes learners make in this kind of code: an axis off by one, a
cast left out, `<` for `<=`, an integer or a slice bound off by one, eps dropped or moved
out of the root, `+` for `-`, a mask filled with 0 instead of -inf, an in-place edit (or
its absence), a `.clone()`, `.detach()` or `torch.no_grad()` left out, a guard removed,
arguments of `cat`, `matmul` or `where` swapped.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Replacement = ast.AST | list[ast.stmt]


@dataclass(frozen=True)
class Edit:
    operator: str
    replacement: Replacement


@dataclass(frozen=True)
class Site:
    """Where a node sits: its parent, and the parameters of the function around it."""

    parent: ast.AST | None
    params: frozenset[str] = frozenset()


Operator = Callable[[ast.AST, Site], Iterator[Edit]]

# Reductions and friends whose first positional argument is a dimension (as methods), and
# torch functions whose second is.
DIM_METHODS = {
    "sum", "mean", "amax", "amin", "max", "min", "softmax", "log_softmax", "cumsum", "cumprod",
    "argmax", "argmin", "unsqueeze", "squeeze", "logsumexp", "var", "std", "prod", "all", "any",
    "transpose", "flip", "flatten", "size",
}  # fmt: skip
DIM_FUNCTIONS = {
    "sum", "mean", "amax", "amin", "softmax", "log_softmax", "cumsum", "cumprod", "argmax",
    "argmin", "unsqueeze", "squeeze", "logsumexp", "cat", "stack", "concat", "concatenate",
    "var", "std", "prod", "transpose", "flatten",
}  # fmt: skip
DIM_KEYWORDS = {"dim", "axis", "dim0", "dim1", "start_dim", "end_dim"}
DIM_SWAPS = {-1: -2, -2: -1, -3: -2, 0: 1, 1: 0, 2: 1, 3: 2}
CASTS = {"float", "double", "half", "bfloat16", "to", "type_as", "type"}
FACTORIES = {
    "zeros", "ones", "empty", "full", "arange", "tensor", "zeros_like", "ones_like", "empty_like",
    "full_like", "randn", "rand", "linspace", "eye", "as_tensor", "new_zeros", "new_ones",
    "new_full", "new_empty", "new_tensor",
}  # fmt: skip
DROPPED_METHODS = {"clone": "drop-clone", "detach": "drop-detach", "contiguous": "drop-contiguous"}
# Methods with an in-place twin that learners mix up.
IN_PLACE_TWINS = {
    "add", "sub", "mul", "div", "clamp", "clamp_min", "clamp_max", "masked_fill", "neg", "exp",
    "sigmoid", "tanh", "sqrt", "rsqrt", "pow", "abs", "relu", "addcmul", "addcdiv", "lerp", "copy",
    "fill", "zero", "scatter", "index_add", "index_copy", "index_fill", "tril", "triu",
}  # fmt: skip
ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
COMPARISONS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
SWAPPED_CALLS = {"matmul", "mm", "bmm", "where", "cat", "stack", "concat", "concatenate"}
SWAPPED_CALLS |= {"Linear", "Embedding"}


def _attr(node: ast.AST) -> str | None:
    """`f` for a call of `a.b.f(...)` or `f(...)`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:
        return ""


def _int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _int_node(value: int) -> ast.expr:
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _is_torch_function(call: ast.Call) -> bool:
    """`torch.f(...)`, `F.f(...)`, `torch.nn.functional.f(...)`: a function, not a method."""
    func = call.func
    return isinstance(func, ast.Attribute) and _dotted(func.value) in {"torch", "F", "torch.nn.functional"}


def _with(node: ast.Call, **changes: object) -> ast.Call:
    new = copy.deepcopy(node)
    for key, value in changes.items():
        setattr(new, key, value)
    return new


# --------------------------------------------------------------------------- the operators


def dims(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """A dimension off by one: dim=-1 -> -2, transpose(1, 2) -> (0, 2), cat(.., 1) -> 0."""
    if not isinstance(node, ast.Call):
        return
    for i, kw in enumerate(node.keywords):
        value = _int_value(kw.value)
        if kw.arg in DIM_KEYWORDS and value in DIM_SWAPS:
            keywords = copy.deepcopy(node.keywords)
            keywords[i].value = _int_node(DIM_SWAPS[value])
            yield Edit("dim", _with(node, keywords=keywords))
        if kw.arg == "keepdim" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
            keywords = [copy.deepcopy(k) for j, k in enumerate(node.keywords) if j != i]
            yield Edit("keepdim", _with(node, keywords=keywords))
    name = _attr(node)
    if name is None:
        return
    function = _is_torch_function(node)
    positions: list[int] = []
    if function and name in DIM_FUNCTIONS:
        positions = [1, 2] if name == "transpose" else [1]
    elif not function and isinstance(node.func, ast.Attribute) and name in DIM_METHODS:
        positions = [0, 1] if name == "transpose" else [0]
    for pos in positions:
        if pos < len(node.args):
            value = _int_value(node.args[pos])
            if value in DIM_SWAPS:
                args = copy.deepcopy(node.args)
                args[pos] = _int_node(DIM_SWAPS[value])
                yield Edit("dim", _with(node, args=args))


def casts(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """A cast left out (`.float()`, `.to(x.dtype)`, `.type_as(y)`), or a factory's `dtype=`."""
    if not isinstance(node, ast.Call):
        return
    name = _attr(node)
    if isinstance(node.func, ast.Attribute) and name in CASTS and not _is_torch_function(node):
        yield Edit("drop-cast", copy.deepcopy(node.func.value))
    if name in FACTORIES and any(kw.arg == "dtype" for kw in node.keywords):
        keywords = [copy.deepcopy(k) for k in node.keywords if k.arg != "dtype"]
        yield Edit("drop-dtype", _with(node, keywords=keywords))


def comparisons(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """`<` for `<=`, `>` for `>=`, and back."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:
        new = copy.deepcopy(node)
        new.ops = [COMPARISONS[type(node.ops[0])]()]
        yield Edit("compare", new)


def integers(node: ast.AST, site: Site) -> Iterator[Edit]:
    """An integer constant off by one (a slice bound included)."""
    value = _int_value(node)
    if value is None or isinstance(site.parent, ast.UnaryOp):
        return
    yield Edit("int+1", _int_node(value + 1))
    yield Edit("int-1", _int_node(value - 1))


def slices(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """A slice bound that is an expression, moved by one: x[:n] -> x[:n + 1], x[:n - 1]."""
    if not isinstance(node, ast.Slice):
        return
    for field in ("lower", "upper"):
        bound = getattr(node, field)
        if bound is None or _int_value(bound) is not None:
            continue  # integer bounds are the integer operator's
        for op, label in ((ast.Add(), "+1"), (ast.Sub(), "-1")):
            new = copy.deepcopy(node)
            setattr(new, field, ast.BinOp(copy.deepcopy(bound), op, ast.Constant(1)))
            yield Edit(f"slice-{field}{label}", new)


def _is_eps(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "eps" in name.lower()


def _without_eps(node: ast.AST) -> ast.expr | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        if _is_eps(node.right):
            return copy.deepcopy(node.left)
        if _is_eps(node.left):
            return copy.deepcopy(node.right)
    return None


def _eps_of(node: ast.BinOp) -> ast.expr:
    return copy.deepcopy(node.right if _is_eps(node.right) else node.left)


def epsilon(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """eps dropped (`v + eps` -> `v`), or moved out of the root (`sqrt(v + eps)` -> `sqrt(v) + eps`)."""
    rest = _without_eps(node)
    if rest is not None:
        yield Edit("eps-drop", rest)
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return
    root = node.func.attr
    if root not in ("sqrt", "rsqrt"):
        return
    argument = node.args[0] if node.args else None
    if isinstance(argument, ast.BinOp) and (inner := _without_eps(argument)) is not None:
        eps = _eps_of(argument)  # torch.sqrt(v + eps)
        sqrt = ast.Call(ast.Attribute(copy.deepcopy(node.func.value), "sqrt"), [inner], [])
    elif (
        argument is None
        and isinstance(node.func.value, ast.BinOp)
        and (inner := _without_eps(node.func.value))
    ):
        eps = _eps_of(node.func.value)  # (v + eps).sqrt()
        sqrt = ast.Call(ast.Attribute(inner, "sqrt"), [], [])
    else:
        return
    outside = ast.BinOp(sqrt, ast.Add(), eps)
    yield Edit("eps-outside", outside if root == "sqrt" else ast.BinOp(ast.Constant(1.0), ast.Div(), outside))


def arithmetic(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """One operator swapped: + for -, * for /, and back."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in ARITHMETIC:
        new = copy.deepcopy(node)
        new.op = ARITHMETIC[type(node.op)]()
        yield Edit("arith", new)


def _negative_infinity(node: ast.AST) -> bool:
    text = _dotted(node).replace(" ", "").replace("'", '"')
    return text in {'float("-inf")', "-math.inf", "-torch.inf", '-float("inf")', "-float('inf')"}


def _finfo_min(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "min" and _attr(node.value) == "finfo"


def mask_fills(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """A mask filled with the wrong value: -inf -> 0 or finfo.min, finfo.min -> -inf."""
    if _negative_infinity(node):
        yield Edit("fill-zero", ast.Constant(0.0))
        yield Edit("fill-finfo-min", ast.parse("torch.finfo(torch.float32).min", mode="eval").body)
    elif _finfo_min(node):
        yield Edit("fill-inf", ast.parse('float("-inf")', mode="eval").body)


def _shared(node: ast.AST, params: frozenset[str]) -> bool:
    """Whether `node` may be an object the caller also holds: a parameter, an attribute
    (`self.k`) or an element of one. Editing a fresh local in place changes nothing anyone
    sees, so such a mutant would be equivalent by construction."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return True  # self.k, cache.k
        node = node.value
    return isinstance(node, ast.Name) and node.id in params


def in_place(node: ast.AST, site: Site) -> Iterator[Edit]:
    """An in-place edit where a copy was meant, and back: x.mul_(y) <-> x.mul(y), x += y <-> x = x + y.
    Only on objects the caller may share (parameters, attributes): see `_shared`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not _is_torch_function(node):
        name = node.func.attr
        if name.endswith("_") and not name.startswith("_") and name[:-1] in IN_PLACE_TWINS:
            func = copy.deepcopy(node.func)
            func.attr = name[:-1]
            yield Edit("out-of-place", _with(node, func=func))
        elif (
            name in IN_PLACE_TWINS
            and not isinstance(site.parent, ast.Expr)
            and _shared(node.func.value, site.params)
        ):
            func = copy.deepcopy(node.func)
            func.attr = name + "_"
            yield Edit("in-place", _with(node, func=func))
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        target = ast.Name(node.target.id, ast.Store())
        left = ast.Name(node.target.id, ast.Load())
        value = ast.BinOp(left, copy.deepcopy(node.op), copy.deepcopy(node.value))
        yield Edit("out-of-place", ast.Assign([target], value))
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.left, ast.Name)
        and node.value.left.id == node.targets[0].id
        and node.targets[0].id in site.params
    ):
        target = ast.Name(node.targets[0].id, ast.Store())
        op, right = copy.deepcopy(node.value.op), copy.deepcopy(node.value.right)
        yield Edit("in-place", ast.AugAssign(target, op, right))


def dropped_calls(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """`.clone()`, `.detach()`, `.contiguous()` left out; `with torch.no_grad():` left out."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        operator = DROPPED_METHODS.get(node.func.attr)
        if operator and not _is_torch_function(node):
            yield Edit(operator, copy.deepcopy(node.func.value))
    if isinstance(node, ast.With) and any("no_grad" in _dotted(i.context_expr) for i in node.items):
        yield Edit("drop-no_grad", copy.deepcopy(node.body))


def guards(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """An early-return or raise guard removed: `if cond: return ...` / `if cond: raise ...`."""
    if (
        isinstance(node, ast.If)
        and not node.orelse
        and len(node.body) == 1
        and isinstance(node.body[0], (ast.Return, ast.Raise, ast.Continue, ast.Break))
    ):
        yield Edit("drop-guard", [ast.Pass()])


def swapped_arguments(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """Arguments of `cat`/`stack` (the list), `matmul`/`@`, `where`, and the sizes of a
    `Linear` or `Embedding`, in the wrong order."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        yield Edit("swap-args", ast.BinOp(copy.deepcopy(node.right), ast.MatMult(), copy.deepcopy(node.left)))
    if not isinstance(node, ast.Call) or _attr(node) not in SWAPPED_CALLS:
        return
    name, args = _attr(node), copy.deepcopy(node.args)
    if name in ("cat", "stack", "concat", "concatenate"):
        if args and isinstance(args[0], (ast.List, ast.Tuple)) and len(args[0].elts) >= 2:
            args[0].elts[0], args[0].elts[1] = args[0].elts[1], args[0].elts[0]
            yield Edit("swap-args", _with(node, args=args))
    elif name == "where" and len(args) == 3:
        args[1], args[2] = args[2], args[1]
        yield Edit("swap-args", _with(node, args=args))
    elif name in ("matmul", "mm", "bmm", "Linear", "Embedding") and len(args) >= 2:
        args[0], args[1] = args[1], args[0]
        yield Edit("swap-args", _with(node, args=args))


NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In}
NEGATED |= {ast.Is: ast.IsNot, ast.IsNot: ast.Is}
# A function for its near neighbour: the activation, the reduction or the triangle a learner
# confuses it with.
NEIGHBOURS = {
    "silu": "gelu", "gelu": "silu", "sigmoid": "silu", "relu": "silu", "softplus": "relu",
    "sum": "mean", "mean": "sum", "amax": "amin", "amin": "amax", "max": "min", "min": "max",
    "argmax": "argmin", "argmin": "argmax", "tril": "triu", "triu": "tril", "softmax": "log_softmax",
    "log_softmax": "softmax", "exp": "exp2", "log": "log1p", "cumsum": "cumprod", "rsqrt": "sqrt",
    "sqrt": "rsqrt", "floor": "ceil", "ceil": "floor", "clamp_min": "clamp_max",
}  # fmt: skip
UNARY = {"silu", "gelu", "sigmoid", "relu", "softplus", "exp", "tanh", "sqrt", "rsqrt", "log", "abs", "neg"}


def negations(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """`==` for `!=`, `in` for `not in`, `is` for `is not`; `and` for `or`; `not` left out; True for False."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in NEGATED:
        new = copy.deepcopy(node)
        new.ops = [NEGATED[type(node.ops[0])]()]
        yield Edit("negate", new)
    if isinstance(node, ast.BoolOp):
        flipped = copy.deepcopy(node)
        flipped.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield Edit("boolop", flipped)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield Edit("drop-not", copy.deepcopy(node.operand))
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield Edit("bool", ast.Constant(not node.value))


def neighbours(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """A function for its neighbour (silu for gelu, sum for mean, tril for triu), or left out."""
    if not isinstance(node, ast.Call):
        return
    name = _attr(node)
    if name in NEIGHBOURS and isinstance(node.func, (ast.Attribute, ast.Name)):
        func = copy.deepcopy(node.func)
        if isinstance(func, ast.Attribute):
            func.attr = NEIGHBOURS[name]
        else:
            func.id = NEIGHBOURS[name]
        yield Edit("neighbour", _with(node, func=func))
    if name in UNARY:
        if _is_torch_function(node) and len(node.args) == 1 and not node.keywords:
            yield Edit("drop-call", copy.deepcopy(node.args[0]))
        elif isinstance(node.func, ast.Attribute) and not _is_torch_function(node) and not node.args:
            yield Edit("drop-call", copy.deepcopy(node.func.value))


def _self_calls(node: ast.AST) -> list[str]:
    """Names of `self.NAME(...)` calls inside `node`, in order, each once."""
    names: list[str] = []
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "self"
            and n.func.attr not in names
        ):
            names.append(n.func.attr)
    return names


def swapped_modules(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """Two of the module's own layers swapped in one expression (silu on up_proj, not gate_proj)."""
    if not isinstance(node, (ast.Return, ast.Assign)) or node.value is None:
        return
    names = _self_calls(node.value)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            new = copy.deepcopy(node)
            for n in ast.walk(new):
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                    n.attr = {a: b, b: a}.get(n.attr, n.attr)
            yield Edit("swap-modules", new)


def dropped_statements(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A statement left out: an assignment that updates state, or a call made for its effect."""
    if not isinstance(site.parent, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With)):
        return
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        # Assigning a plain local is usually followed by its use (a NameError, not a mistake).
        if any(not isinstance(t, ast.Name) for t in targets) or isinstance(node, ast.AugAssign):
            yield Edit("drop-stmt", [ast.Pass()])
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield Edit("drop-stmt", [ast.Pass()])


OPERATORS: list[Operator] = [
    dims,
    casts,
    comparisons,
    integers,
    slices,
    epsilon,
    arithmetic,
    mask_fills,
    in_place,
    dropped_calls,
    guards,
    swapped_arguments,
    negations,
    neighbours,
    swapped_modules,
    dropped_statements,
]
