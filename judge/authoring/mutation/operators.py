"""Mutation operators for tensor code: each proposes single-change edits of one AST node.

An operator looks at one node of the reference and returns the edits it would make there,
each as (operator name, replacement). The replacement is a new node (or a list of
statements, for a statement-level edit) built from copies, so proposing never changes the
tree. `judge.authoring.mutation.generate` applies one edit at a time to a copy of the module.

The operators are the mistakes learners make in this kind of code: an axis off by one, a
cast left out, `<` for `<=`, an integer or a slice bound off by one, eps dropped or moved
out of the root, `+` for `-`, a mask filled with 0 instead of -inf, an in-place edit (or
its absence), a `.clone()`, `.detach()` or `torch.no_grad()` left out, a guard removed,
arguments of `cat`, `matmul` or `where` swapped.

The state operators (issue 28, `STATE_OPERATORS`) make the mistakes no single token makes: a
value memoised on the first call, an argument replaced by its default, `.view` for `.reshape`,
batch row 0 used for every row, a result cached by shape alone. `judge validate` enforces them
once `NEW_OPERATORS_ENFORCED` is set.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

Replacement = ast.AST | list[ast.stmt]


@dataclass(frozen=True)
class Edit:
    operator: str
    replacement: Replacement
    # The node replaced, when it is not the node the operator was shown (the mutant's id still
    # names the latter): batch0 is proposed at a parameter and rewrites its function.
    target: ast.AST | None = None
    # Module-level statements the mutant needs (a cache), put after the docstring and imports.
    prelude: tuple[ast.stmt, ...] = ()
    # What changed, when `before → after` of the node would not say it.
    change: str | None = None


@dataclass(frozen=True)
class Site:
    """Where a node sits: its parent, the parameters of the function around it, that function
    (innermost; None at module level), the module, and every node's parent (by id)."""

    parent: ast.AST | None
    params: frozenset[str] = frozenset()
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    module: ast.Module | None = None
    parents: Mapping[int, ast.AST] = dataclasses.field(default_factory=dict)


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


# ------------------------------------------------------------------- state operators (issue 28)
#
# Mistakes that live between calls or across the batch, which no single-token change makes:
#   memo          a value derived from the module's parameters or from arguments (`1 + self.weight`,
#                 `self.weight.t()`, a table built from `seq_len`) computed on the first call, kept
#                 (on `self`, or in a module-level dict for a function) and reused on later calls;
#   default-arg   a read of an argument replaced by the argument's default (`self.eps = eps` ->
#                 `self.eps = 1e-06`): the value the caller passed is ignored;
#   reshape-view  `.view` where the reference has `.reshape` (fails on a non-contiguous input);
#   batch0        a tensor argument replaced, at the top of the function, by its batch row 0
#                 broadcast to every row (`x = x[:1].expand_as(x)`);
#   shape-cache   a function's (or method's) result cached in a module-level dict keyed by the
#                 shapes of its arguments alone: values, dtypes and other arguments are ignored.
# (A dropped `.contiguous()` is the enforced operator `drop-contiguous` already.)
#
# The shipped packages' cases predate these operators, and some of their mutants survive them.
# Until cases kill those (issue 28), `judge validate` does not enforce this group: with
# NEW_OPERATORS_ENFORCED = False, `generate` makes the single-change mutants only, and
# `generate_state` reports the state group's mutants apart.
NEW_OPERATORS_ENFORCED = True

# Caps, so that a long reference does not bury its package in near-copies of one mistake:
MEMO_PER_FUNCTION = 2  # the largest memoisable expressions of each function
READS_PER_ARGUMENT = 2  # the first reads of each defaulted argument
# Per operator and reference, after the caps above: an evenly spaced sample in source order.
STATE_CAP = 8

METADATA = {"shape", "dtype", "device", "ndim", "is_cuda", "layout"}
METADATA_METHODS = {"size", "dim", "numel", "get_device"}
# Their receiver lends a dtype and a device only (new_*), their argument a shape, a dtype and a
# device only (torch.*_like): no value of it.
FACTORY_METHODS = {"new_zeros", "new_ones", "new_empty", "new_full"}
LIKE_FUNCTIONS = {"zeros_like", "ones_like", "empty_like", "full_like"}
# Arguments that play the part of a module's parameters (`moe(x, router_weight, ...)`): an
# expression of them is memoisable like one of `self.weight`, and they have no batch axis.
WEIGHT_WORDS = ("weight", "proj", "bias")
# Tables indexed by position (rope's cos and sin): no batch axis either.
TABLE_WORDS = (*WEIGHT_WORDS, "cos", "sin", "freq", "table")
# Calls on a name that change the object it names: such a local is not a value fixed by its
# assignment (`outputs = []` then `outputs.append(...)`).
MUTATING_METHODS = {"append", "extend", "insert", "pop", "update", "setdefault", "add", "remove", "clear"}
MUTATING_METHODS |= {"sort", "reverse", "popitem", "discard"}
TENSOR_METHODS = METADATA | METADATA_METHODS | FACTORY_METHODS | CASTS | DIM_METHODS | IN_PLACE_TWINS
TENSOR_METHODS |= {"reshape", "view", "expand", "expand_as", "permute", "chunk", "split", "gather", "clone"}
TENSOR_METHODS |= {"contiguous", "detach", "masked_fill", "t", "T", "mT", "repeat_interleave", "index_select"}
BUILTINS = frozenset(dir(builtins))
MEMO_PRELUDE = "_mutant_memo = {}"
SHAPE_CACHE_PRELUDE = """
_mutant_shape_cache_store = {}


def _mutant_shape_cache(fn):
    def cached(*args, **kwargs):
        key = (fn.__qualname__, *(a.shape for a in (*args, *kwargs.values()) if hasattr(a, 'shape')))
        if key not in _mutant_shape_cache_store:
            _mutant_shape_cache_store[key] = fn(*args, **kwargs)
        return _mutant_shape_cache_store[key]
    return cached
"""
BATCH0 = (
    "{p} = {p}[:1].expand_as({p}).contiguous() if isinstance({p}, torch.Tensor) and {p}.dim() > 1 else {p}"
)

Function = ast.FunctionDef | ast.AsyncFunctionDef
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class _Facts:
    """What the state operators need to know about one function."""

    method: bool  # its first parameter is `self`
    dunder: bool  # `__init__` and the like (not `__call__`): default-arg's only
    local: frozenset[str]  # parameters and names bound in its body
    static: frozenset[str]  # those whose values depend on no tensor argument's data
    defaults: Mapping[str, ast.expr]  # parameter -> its default, where that is a literal
    tensors: tuple[ast.arg, ...]  # parameters that look like activations (batch0's)
    memo: frozenset[int]  # ids of the expressions memo takes (MEMO_PER_FUNCTION of them)
    reads: frozenset[int]  # ids of the reads default-arg takes (READS_PER_ARGUMENT each)


_FACTS: dict[int, tuple[Function, _Facts | None]] = {}


def _facts(fn: Function | None, site: Site) -> _Facts | None:
    """The facts of `fn`, when it is a function the state operators look into: one at module
    level or a method of a module-level class."""
    if fn is None:
        return None
    known = _FACTS.get(id(fn))
    if known is not None and known[0] is fn:
        return known[1]
    if len(_FACTS) > 512:
        _FACTS.clear()
    parent = site.parents.get(id(fn))
    outer = site.parents.get(id(parent)) if isinstance(parent, ast.ClassDef) else parent
    owner = parent if isinstance(parent, ast.ClassDef) else None
    facts = None
    if isinstance(outer, ast.Module):
        private = owner is None and fn.name.startswith("_")
        facts = _analyse(fn, _parameters_of(owner), _passed(fn, outer) if private else None)
    _FACTS[id(fn)] = (fn, facts)
    return facts


def _own_nodes(fn: Function) -> Iterator[ast.AST]:
    """The nodes of fn's body, not those of a function, lambda, class or comprehension in it
    (each has its own scope)."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, *COMPREHENSIONS)
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, scopes):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _literal(node: ast.expr, local: frozenset[str]) -> bool:
    """A default that means the same written in the body: a constant, a tuple of them, or a
    module-level name's attribute (`torch.float32`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_literal(e, local) for e in node.elts)
    if isinstance(node, ast.Attribute):
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id not in local
    return False


def _parameters_of(cls: ast.ClassDef | None) -> frozenset[str]:
    """The attributes of `self` a class makes parameters or buffers: `self.w = nn.Parameter(...)`,
    `self.register_buffer("w", ...)`."""
    names: set[str] = set()
    for node in ast.walk(cls) if cls is not None else ():
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _attr(node.value) == "Parameter"
        ):
            targets = [t for t in node.targets if isinstance(t, ast.Attribute) and _dotted(t.value) == "self"]
            names.update(t.attr for t in targets)
        if (
            isinstance(node, ast.Call)
            and _dotted(node.func) == "self.register_buffer"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return frozenset(names)


def _passed(fn: Function, module: ast.Module) -> frozenset[str]:
    """The parameters of a module-private function that some call in the module passes. Its
    other parameters always have their defaults: using the default instead changes nothing."""
    positional = [x.arg for x in [*fn.args.posonlyargs, *fn.args.args]]
    every = positional + [x.arg for x in fn.args.kwonlyargs]
    passed: set[str] = set()
    for call in ast.walk(module):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == fn.name):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return frozenset(every)  # f(*args), f(**kwargs): anything may be passed
        passed.update(positional[: len(call.args)])
        passed.update(k.arg for k in call.keywords if k.arg is not None)
    return frozenset(passed)


def _analyse(
    fn: Function, parameters: frozenset[str] = frozenset(), passed: frozenset[str] | None = None
) -> _Facts:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: dict[str, ast.expr] = {}
    for arg, default in zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True):
        defaults[arg.arg] = default
    for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        if kw_default is not None:
            defaults[arg.arg] = kw_default
    method = bool(positional) and positional[0].arg == "self"
    params = [x for x in [*positional, *a.kwonlyargs] if not (method and x is positional[0])]

    # Every binding of the body: name -> the values it is given (None: not a value we can read).
    bound: dict[str, list[ast.expr | None]] = {}
    mutated: set[str] = set()
    for node in _own_nodes(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _names(target):
                    bound.setdefault(name, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and isinstance(
            node.target, ast.Name
        ):
            bound.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.setdefault(node.id, [])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.setdefault(node.name, []).append(None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.setdefault((alias.asname or alias.name).split(".")[0], [])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in MUTATING_METHODS or (name.endswith("_") and not name.startswith("_")):
                mutated.update(_root_name(node.func.value))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, (ast.Subscript, ast.Attribute)):
                    mutated.update(_root_name(target))
    # Names bound by `for`, `with ... as`, `except ... as` or unpacking of something unreadable
    # got no value above: they are not static.
    for node in _own_nodes(fn):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            for name in _names(node.target):
                bound.setdefault(name, []).append(None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            for name in _names(node.optional_vars):
                bound.setdefault(name, []).append(None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.setdefault(node.name, []).append(None)
    for values in bound.values():
        if not values:
            values.append(None)  # bound by a statement whose value we do not read (del, match)

    every = [*positional, *a.kwonlyargs, *[x for x in (a.vararg, a.kwarg) if x is not None]]
    local = frozenset(x.arg for x in every)
    local |= frozenset(bound)
    weights = _weight_like(params, defaults)
    static = {"self"} if method else set()
    for x in params:
        annotation = ast.unparse(x.annotation) if x.annotation is not None else ""
        given = defaults.get(x.arg)
        scalar = given is not None and not _is_none(given) and _literal(given, local)
        if scalar or (annotation and "Tensor" not in annotation) or x.arg in weights:
            static.add(x.arg)
        elif not annotation and _used_as_object(fn, x.arg):
            static.add(x.arg)  # `cache.length`, `model.state_dict()`: state, like self's
    static |= {n for n in bound if n not in {x.arg for x in params} or n in static}
    # A local changed after its assignment (`outputs.append(o)`) holds more than that value. A
    # parameter changed in place (`cache.update(k, v)`) is state that moves on: still static.
    static -= mutated - {x.arg for x in params} - {"self"}
    # The largest set of names whose every value is static given the others: drop until stable.
    while True:
        frozen = frozenset(static)
        drop = {
            n for n in static if any(v is None or not _static(v, frozen, local) for v in bound.get(n, []))
        }
        if not drop:
            break
        static -= drop
    frozen = frozenset(static)

    literal = {
        n: d
        for n, d in defaults.items()
        if _literal(d, local) and n not in bound and (passed is None or n in passed)
    }
    reads: dict[str, list[ast.Name]] = {}
    parent_of = {id(c): n for n in _walk_body(fn) for c in ast.iter_child_nodes(n)}
    for node in _walk_body(fn):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id in literal
            and (_passed_over if _is_none(literal[node.id]) else _untested)(node, parent_of)
        ):
            reads.setdefault(node.id, []).append(node)
    effects = {id(n.value) for n in _own_nodes(fn) if isinstance(n, ast.Expr)}  # calls made for effect
    expressions = [n for n in _own_nodes(fn) if isinstance(n, ast.expr) and id(n) not in effects]
    candidates = [n for n in expressions if _memoisable(n, frozen, local, parameters)]
    memo = _largest(candidates)

    tensors = tuple(
        x
        for x in params
        if x.arg not in weights
        and not any(w in x.arg.lower() for w in TABLE_WORDS)
        and (defaults.get(x.arg) is None or _is_none(defaults[x.arg]))
        and (
            "Tensor" in (ast.unparse(x.annotation) if x.annotation is not None else "")
            or (x.annotation is None and _used_as_tensor(fn, x.arg))
        )
    )
    first_reads = {id(n) for ns in reads.values() for n in sorted(ns, key=_position)[:READS_PER_ARGUMENT]}
    dunder = fn.name.startswith("__") and fn.name.endswith("__") and fn.name != "__call__"
    return _Facts(method, dunder, local, frozen, literal, tensors, frozenset(memo), frozenset(first_reads))


def _weight_like(params: list[ast.arg], defaults: Mapping[str, ast.expr]) -> set[str]:
    """Arguments that are weights: named so (not the first), or following one without a default
    (`moe(x, router_weight, ..., shared_expert_gate)`: inputs come first, then the weights)."""
    weights: set[str] = set()
    for i, x in enumerate(params):
        named = i > 0 and any(w in x.arg.lower() for w in WEIGHT_WORDS)
        if named or (weights and x.arg not in defaults):
            weights.add(x.arg)
    return weights


def _used_as_object(fn: Function, name: str) -> bool:
    """Whether fn reads attributes of `name` that no tensor has (and none a tensor has)."""
    attrs = [
        n.attr
        for n in _walk_body(fn)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
    ]
    return bool(attrs) and not _used_as_tensor(fn, name) and not any(a in TENSOR_METHODS for a in attrs)


def _untested(node: ast.AST, parent_of: Mapping[int, ast.AST]) -> bool:
    """Not `tied is not None`: with a default that is not None, `(1, 2) is not None` warns."""
    parent = parent_of.get(id(node))
    identity = isinstance(parent, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot)) for o in parent.ops)
    return not identity


def _passed_over(node: ast.AST, parent_of: Mapping[int, ast.AST]) -> bool:
    """Whether `node`, an argument defaulting to None, is tested (`mask is not None`) or passed
    on to a function or a layer (`helper(x, mask)`, `self.attn(x, mask=mask)`): where None means
    "ignored". Elsewhere (`mask[:, None]`, `x.masked_fill(mask, 0)`) None only fails."""
    parent = parent_of.get(id(node))
    if isinstance(parent, ast.Compare):
        return True
    if isinstance(parent, ast.keyword):
        parent = parent_of.get(id(parent))
        if not isinstance(parent, ast.Call):
            return False
    elif not (isinstance(parent, ast.Call) and any(a is node for a in parent.args)):
        return False
    func = parent.func
    if isinstance(func, ast.Name):
        return True
    return isinstance(func, ast.Attribute) and _root_name(func) == ["self"]


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


def _root_name(node: ast.expr) -> list[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return [node.id] if isinstance(node, ast.Name) else []


def _walk_body(fn: Function) -> Iterator[ast.AST]:
    """Every node of fn's body, nested scopes included (a closure reads the same argument)."""
    for stmt in fn.body:
        yield from ast.walk(stmt)


def _static(node: ast.AST, static: frozenset[str], local: frozenset[str]) -> bool:
    """Whether the value of `node` depends on no tensor argument's data: on constants, module
    names, `self`'s state, scalar arguments and shapes, dtypes and devices only."""
    if isinstance(node, ast.Name):
        return node.id in static or node.id not in local
    if isinstance(node, ast.Attribute):
        return node.attr in METADATA or _static(node.value, static, local)
    if isinstance(node, ast.Call):
        arguments = [*node.args, *(k.value for k in node.keywords)]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in METADATA_METHODS | FACTORY_METHODS:
            return all(_static(x, static, local) for x in arguments)
        if _attr(node) in LIKE_FUNCTIONS and _is_torch_function(node):
            return all(_static(x, static, local) for x in arguments[1:])
        if isinstance(func, ast.Name) and func.id == "len" and func.id not in local:
            return True
        return _static(func, static, local) and all(_static(x, static, local) for x in arguments)
    if isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
        return False
    if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
        return False
    children = [c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.expr, ast.keyword))]
    return all(_static(c, static, local) for c in children)


def _mentions(node: ast.AST, local: frozenset[str]) -> bool:
    """Whether `node` reads a parameter or a local (a constant is no state to go stale)."""
    return any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(node))


def _computes(node: ast.AST, local: frozenset[str], parameters: frozenset[str]) -> bool:
    """Whether `node` calls something beyond a builtin (`range`, `len`) or a size (`x.numel()`)
    (torch, math, a method), or reads one of the module's parameters (`1 + self.weight`)."""
    return any(
        (
            isinstance(n, ast.Call)
            and not (isinstance(n.func, ast.Name) and n.func.id in BUILTINS and n.func.id not in local)
            and not (isinstance(n.func, ast.Attribute) and n.func.attr in METADATA_METHODS)
        )
        or (isinstance(n, ast.Attribute) and n.attr in parameters and _dotted(n.value) == "self")
        for n in ast.walk(node)
    )


def _memoisable(
    node: ast.AST, static: frozenset[str], local: frozenset[str], parameters: frozenset[str]
) -> bool:
    if not isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp)):
        return False
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_"):
        return False  # an in-place call is made for its effect
    return _static(node, static, local) and _mentions(node, local) and _computes(node, local, parameters)


def _largest(candidates: list[ast.expr]) -> list[int]:
    """The outermost memoisable expressions (a part of one is memoised with it), the largest
    MEMO_PER_FUNCTION of them; earlier first among equals."""
    inner = {id(n) for c in candidates for n in ast.walk(c) if n is not c}
    outer = [c for c in candidates if id(c) not in inner]
    ranked = sorted(outer, key=lambda c: (-sum(1 for _ in ast.walk(c)), _position(c)))
    return [id(c) for c in ranked[:MEMO_PER_FUNCTION]]


def _used_as_tensor(fn: Function, name: str) -> bool:
    for node in _walk_body(fn):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == name
            and node.attr in TENSOR_METHODS
        ):
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            return True
    return False


def _imports_torch(module: ast.Module | None) -> bool:
    return module is not None and any(
        isinstance(s, ast.Import) and any(a.name == "torch" and a.asname is None for a in s.names)
        for s in module.body
    )


def _statements(text: str) -> tuple[ast.stmt, ...]:
    return tuple(ast.parse(text).body)


def memoise(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A value of the parameters or the arguments computed on the first call and reused after:
    `1.0 + self.weight.float()` -> `self.__dict__.setdefault('_memo_L_C', 1.0 + self.weight.float())`.

    Memoisable: a call or an operation whose value depends on no tensor argument's data (on
    `self`'s state, scalar arguments, shapes, dtypes, devices and weight-like arguments) and
    that computes something (a builtin's `range(n)` is no table). Only the outermost such
    expressions, the MEMO_PER_FUNCTION largest of each function. A method keeps the value in
    its instance's `__dict__` (not as an attribute: that would register a Parameter); a
    function keeps it in a module-level dict. The expression is still evaluated each call
    (`setdefault`), but the value of the first call is the one used."""
    facts = _facts(site.function, site)
    if facts is None or facts.dunder or id(node) not in facts.memo or not isinstance(node, ast.expr):
        return
    line, col = _position(node)
    text = ast.unparse(node)
    prelude: tuple[ast.stmt, ...] = ()
    if facts.method:
        key = f"_memo_{line}_{col}"
        memo = ast.parse(f"self.__dict__.setdefault({key!r}, __value__)", mode="eval").body
        where = f"self.{key}"
    else:
        key = f"{line}:{col}"
        memo = ast.parse(f"_mutant_memo.setdefault({key!r}, __value__)", mode="eval").body
        where, prelude = "a module-level dict", _statements(MEMO_PRELUDE)
    assert isinstance(memo, ast.Call)
    memo.args[1] = copy.deepcopy(node)
    yield Edit(
        "memo",
        memo,
        prelude=prelude,
        change=f"{text} memoised: the first call's value, kept in {where}, reused",
    )


def default_argument(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A read of an argument replaced by the argument's default: `self.eps = eps` ->
    `self.eps = 1e-06`, `rope(x, theta)` -> `rope(x, 10000.0)`. Defaults that are literals (a
    constant, None, a tuple of them, `torch.float32`), of arguments the body never rebinds (and,
    in a module-private `_helper`, that some call in the module passes); the first
    READS_PER_ARGUMENT reads of each. A default of None goes only where the argument is tested
    or passed on (see `_passed_over`)."""
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
        return
    facts = _facts(site.function, site)
    if facts is None or id(node) not in facts.reads:
        return
    default = copy.deepcopy(facts.defaults[node.id])
    yield Edit(
        "default-arg",
        default,
        change=f"{node.id} → {ast.unparse(default)}: the argument's default, whatever the caller passed",
    )


def reshape_view(node: ast.AST, _site: Site) -> Iterator[Edit]:
    """`.view` for `.reshape`: x.reshape(s) -> x.view(s), torch.reshape(x, s) -> x.view(s). The
    same on a contiguous tensor, a RuntimeError on a non-contiguous one."""
    if not isinstance(node, ast.Call) or _attr(node) != "reshape" or not isinstance(node.func, ast.Attribute):
        return
    if not _is_torch_function(node):
        func = copy.deepcopy(node.func)
        func.attr = "view"
        yield Edit("reshape-view", _with(node, func=func))
    elif len(node.args) == 2 and not node.keywords:
        func = ast.Attribute(copy.deepcopy(node.args[0]), "view", ast.Load())
        yield Edit("reshape-view", ast.Call(func, [copy.deepcopy(node.args[1])], []))


def batch_zero(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A tensor argument replaced, first thing in its function, by its batch row 0 broadcast to
    every row: `x = x[:1].expand_as(x).contiguous()` (for tensors of two axes or more; the
    copy keeps a later `.view` or in-place edit working as on the real batch). Arguments that
    look like activations: annotated as tensors, or unannotated and used as one (`x.shape`,
    `x[...]`), without a default other than None, and not weight-like."""
    fn = site.function
    if not isinstance(node, ast.arg) or fn is None or not _imports_torch(site.module):
        return
    facts = _facts(fn, site)
    if facts is None or facts.dunder or not any(node is t for t in facts.tensors):
        return
    new = copy.deepcopy(fn)
    docstring = (
        bool(new.body)
        and isinstance(new.body[0], ast.Expr)
        and isinstance(new.body[0].value, ast.Constant)
        and isinstance(new.body[0].value.value, str)
    )
    at = 1 if docstring else 0
    new.body[at:at] = list(_statements(BATCH0.format(p=node.arg)))
    yield Edit(
        "batch0",
        new,
        target=fn,
        change=f"{node.arg} → {node.arg}[:1].expand_as({node.arg}) at the start of {fn.name}: "
        "batch row 0 used for every row",
    )


def shape_cache(node: ast.AST, site: Site) -> Iterator[Edit]:
    """A function's result cached in a module-level dict keyed by its arguments' shapes alone
    (values, dtypes and arguments without a shape ignored): a decorator on the function. Every
    function and method that returns a value (not `__init__`), once each."""
    if not isinstance(node, ast.FunctionDef):
        return
    facts = _facts(node, site)
    if facts is None or facts.dunder:
        return
    own = list(_own_nodes(node))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
        return
    if not any(isinstance(n, ast.Return) and n.value is not None and not _is_none(n.value) for n in own):
        return
    new = copy.deepcopy(node)
    new.decorator_list.append(ast.Name("_mutant_shape_cache", ast.Load()))
    yield Edit(
        "shape-cache",
        new,
        prelude=_statements(SHAPE_CACHE_PRELUDE),
        change=f"{node.name} cached in a module-level dict keyed by its arguments' shapes only "
        "(values, dtypes and other arguments ignored)",
    )


STATE_OPERATOR_NAMES = ("memo", "default-arg", "reshape-view", "batch0", "shape-cache")


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

STATE_OPERATORS: list[Operator] = [memoise, default_argument, reshape_view, batch_zero, shape_cache]


def enforced_groups() -> list[list[Operator]]:
    """The operator groups `judge validate` enforces: the state group once NEW_OPERATORS_ENFORCED."""
    return [OPERATORS, STATE_OPERATORS] if NEW_OPERATORS_ENFORCED else [OPERATORS]
