"""cases.py cut down to its public cases: what a learner may see, and all a job that shows its
output to the learner may hold.

The practice kit ships this text, and the judge sends it (never the whole cases.py) to every
job whose messages, log or replies reach the learner: a Run, the public half of a Submit, the
scratch cell. Learner code shares the runner's process with the cases module, so whatever that
module holds, a submission can print, raise or return; the hidden cases run in a job of their
own whose output is never shown (judge.core.grading). Standard library only: the kit carries it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable


@functools.lru_cache(maxsize=64)
def public_cases_source(source: str) -> str:
    """cases.py without its hidden cases, the helpers only they used, or its module docstring
    (which discusses every case)."""
    tree = ast.parse(source)
    body = [node for node in tree.body if not _is_hidden_case(node)]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    # Drop top-level functions, classes and names bound by plain assignments that nothing left
    # refers to (a constant only a hidden case used is as telling as the case), until none is
    # left to drop.
    while True:
        used = _names_used(body)
        kept = [node for node in body if _is_case(node) or not _defines(node) or _defines(node) & used]
        if len(kept) == len(body):
            break
        body = kept
    tree.body = body
    header = "# 公开用例 / The public cases of this problem.\n"
    return header + ast.unparse(tree) + "\n"


def _defines(node: ast.stmt) -> set[str]:
    """The names a top-level function, class or assignment binds (empty for anything else,
    which is always kept: imports, expressions, statements with effects)."""
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    # Tuple targets, subscripts and attributes have effects or bind several names: kept.
    return names if len(names) == len(targets) else set()


def _case_call(node: ast.AST) -> ast.Call | None:
    if not isinstance(node, ast.FunctionDef):
        return None
    for deco in node.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", "")) == "case":
            return deco
    return None


def _is_case(node: ast.AST) -> bool:
    return _case_call(node) is not None


def _is_hidden_case(node: ast.AST) -> bool:
    call = _case_call(node)
    if call is None:
        return False
    public = next((kw.value for kw in call.keywords if kw.arg == "public"), None)
    return not (isinstance(public, ast.Constant) and public.value is True)


def _names_used(body: Iterable[ast.stmt]) -> set[str]:
    used: set[str] = set()
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Store):  # not its own binding
                used.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                used.add(sub.attr)
    return used
