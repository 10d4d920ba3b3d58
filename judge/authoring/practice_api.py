"""The kit's notebook side (copied to practice/practice_api.py): the source of classes and functions
defined in notebook cells, and a judgement as HTML for Jupyter.

Python 3.10, standard library only at import time: the kit's judge.py calls it after putting the
kit's `_judge/` on sys.path, and hands it the report (judge.core.report.Report) to show.

Where the source comes from: ipykernel keeps every executed cell's text in `linecache` under a
file name of its own, and each function's code (a class's methods' too) names that file and its
first line. `inspect.getsource` cannot find a `__main__` class before Python 3.13, so the cells are
parsed here instead (ast) and their top-level imports, definitions and constants kept.
"""

from __future__ import annotations

import ast
import html
import linecache
import math
from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.core.report import Report

SKIPPED_IMPORTS = ("practice",)  # `from practice import check` is the notebook's, not the solution's


class CellError(Exception):
    """A needed object whose source cannot be found; said in both languages, shown in one."""

    def __init__(self, zh: str, en: str) -> None:
        super().__init__(en)
        self.zh, self.en = zh, en


def code_of(obj: object) -> list[CodeType]:
    """The code objects that say where `obj` was written: a function's own, a class's methods'."""
    if isinstance(obj, type):
        found = []
        for value in vars(obj).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            code = getattr(value, "__code__", None)
            if isinstance(code, CodeType):
                found.append(code)
        return found
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    while hasattr(obj, "__wrapped__"):  # a decorated function (functools.wraps): the one written
        obj = obj.__wrapped__
    code = getattr(obj, "__code__", None)
    return [code] if isinstance(code, CodeType) else []


def _segment(lines: list[str], node: ast.stmt) -> str:
    """A top-level statement's text, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    end = node.end_lineno or node.lineno
    return "".join(lines[start - 1 : end]).rstrip() + "\n"


def _simple(value: ast.expr) -> bool:
    """A constant worth carrying: a literal, or a dotted name (torch.float32)."""
    try:
        ast.literal_eval(value)
        return True
    except ValueError:
        pass
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name)


@dataclass
class Cell:
    filename: str
    lines: list[str]
    tree: ast.Module


def read_cell(filename: str) -> Cell | None:
    lines = linecache.getlines(filename)
    if not lines:
        return None
    try:
        tree = ast.parse("".join(lines), filename)
    except SyntaxError:
        return None
    return Cell(filename, lines, tree)


def notebook_source(objects: dict[str, object]) -> str:
    """A solution module built from the cells that defined `objects` ({name the problem imports:
    object}): their imports, definitions and constants in the order the cells ran, a later
    definition replacing an earlier one of the same name, and for each named object the
    definition it came from (the one the notebook holds now, even when an older cell ran again)."""
    own: dict[str, tuple[Cell, int]] = {}
    for name, obj in objects.items():
        codes = code_of(obj)
        cell = read_cell(codes[0].co_filename) if codes else None
        if cell is None:
            raise CellError(
                f"找不到 {name} 的源代码：请在 notebook 的单元格里用 def 或 class 定义它（不要用 exec，"
                "也不要只从别处导入）",
                f"cannot find the source of {name}: define it with def or class in a notebook cell "
                "(not with exec)",
            )
        own[name] = (cell, min(c.co_firstlineno for c in codes))
    # Execution order: linecache gains a cell's file when the cell runs.
    order = {filename: i for i, filename in enumerate(linecache.cache)}
    cells = sorted({c.filename: c for c, _ in own.values()}.values(), key=lambda c: order.get(c.filename, -1))
    future: list[str] = []
    imports: list[str] = []
    body: dict[str, str] = {}
    for cell in cells:
        for node in cell.tree.body:
            text = _segment(cell.lines, node)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                )
                if any(m.split(".")[0] in SKIPPED_IMPORTS for m in modules):
                    continue
                target = (
                    future if isinstance(node, ast.ImportFrom) and node.module == "__future__" else imports
                )
                if text not in target:
                    target.append(text)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                body.pop(node.name, None)  # the later one, at its own place
                body[node.name] = text
            elif (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and node.value is not None
                and _simple(node.value)
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if all(isinstance(t, ast.Name) for t in targets):
                    for t in targets:
                        assert isinstance(t, ast.Name)
                        body.pop(t.id, None)
                    body[", ".join(t.id for t in targets if isinstance(t, ast.Name))] = text
    aliases = []
    for name, (cell, first) in own.items():
        defined = getattr(objects[name], "__name__", name)
        found = [
            n
            for n in cell.tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == defined
        ]
        # The definition the object came from: the last one of its name at or before its first line.
        before = [n for n in found if n.lineno <= first] or found
        if before:  # in place: a subclass defined after it still finds it
            body[defined] = _segment(cell.lines, before[-1])
        if defined != name:
            aliases.append(f"{name} = {defined}\n")
    parts = ["".join(future), "".join(imports), "\n\n".join(body.values()), "".join(aliases)]
    return "\n\n".join(p for p in parts if p)


# ----------------------------------------------------------------------------- the result as HTML

WORDS = {
    "case": ("用例", "case"),
    "verdict": ("结果", "verdict"),
    "points": ("得分", "points"),
    "time": ("用时", "time"),
    "public": ("公开", "public"),
    "hidden": ("隐藏", "hidden"),
    "diagnosis": ("诊断", "diagnosis"),
    "hint": ("提示", "hint"),
    "score": ("得分", "score"),
    "map": ("误差 / 容差", "error / tolerance"),
    "rows": ("行", "rows"),
    "cols": ("列", "columns"),
    "legend": (
        "浅色 = 在容差内，红色越深越超出，紫 = NaN，橙 = inf",
        "light: within tolerance, deeper red: further out, purple: NaN, orange: inf",
    ),
}
GOOD, BAD = "#15803d", "#b91c1c"


def word(key: str, lang: str) -> str:
    zh, en = WORDS[key]
    return en if lang == "en" else zh


def cell_colour(value: Any) -> str:
    if value == "nan":
        return "#7c3aed"
    if value == "inf":
        return "#f59e0b"
    v = float(value)
    if v <= 1:
        return "#e5e7eb"
    alpha = min(1.0, 0.3 + math.log10(v) / 3)
    return f"rgba(220,38,38,{alpha:.2f})"


def error_map_html(emap: dict[str, Any], lang: str) -> str:
    """The error map as a grid of coloured cells (inline styles, no script)."""
    size = 6 if len(emap["cells"][0] if emap["cells"] else []) > 32 else 10
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td title="{html.escape(str(v))}" style="background:{cell_colour(v)}"></td>' for v in line
        )
        + "</tr>"
        for line in emap["cells"]
    )
    caption = (
        f"{word('map', lang)}; {word('rows', lang)}: {html.escape(str(emap['row_axis']))}, "
        f"{word('cols', lang)}: {html.escape(str(emap['col_axis']))}; {word('legend', lang)}"
    )
    return (
        # The cells' size once, in a style scoped to this map: a map has thousands of cells, and
        # a notebook keeps every output it shows.
        f"<style>.ljm{size} td{{width:{size}px;height:{size}px;padding:0}}</style>"
        f'<div style="margin:4px 0"><div style="font-size:90%;color:#555">{caption}</div>'
        f'<table class="error-map ljm{size}" style="border-collapse:collapse;border:1px solid #999">'
        f"{rows}</table></div>"
    )


def render_html(report: Report, title: str, lang: str) -> str:
    """The judgement as the site shows it: the case table, and under a failing case its message,
    diagnoses, error map and hint; then the verdict and score. One language."""
    from judge.core.verdicts import Verdict, label

    esc = html.escape
    head = "".join(
        f'<th style="text-align:left;padding:2px 8px">{word(k, lang)}</th>'
        for k in ("case", "verdict", "points", "time")
    )
    rows = []
    for case in report.cases:
        colour = GOOD if case.verdict == Verdict.AC else BAD
        time = "—" if not case.ran or case.time_ms is None else f"{case.time_ms:.1f} ms"
        visibility = word("public" if case.public else "hidden", lang)
        rows.append(
            f'<tr><td style="padding:2px 8px;font-family:monospace">{esc(case.name)} '
            f'<span style="color:#888">({visibility})</span></td>'
            f'<td style="padding:2px 8px;color:{colour};font-weight:bold">{esc(str(case.verdict))}</td>'
            f'<td style="padding:2px 8px">{case.score}/{case.max_score}</td>'
            f'<td style="padding:2px 8px">{time}</td></tr>'
        )
        if case.verdict == Verdict.AC:
            continue
        details = []
        if case.message:
            details.append(
                f'<pre style="margin:2px 0;white-space:pre-wrap">{esc(case.message.get(lang))}</pre>'
            )
        for d in case.diagnoses:
            details.append(f"<div>{word('diagnosis', lang)}: {esc(d.text.get(lang))}</div>")
        if case.error_map is not None:
            details.append(error_map_html(case.error_map, lang))
        if case.hint:
            details.append(f'<div class="hint"><b>{word("hint", lang)}:</b> {esc(case.hint.get(lang))}</div>')
        rows.append(f'<tr><td colspan="4" style="padding:2px 8px 8px 24px">{"".join(details)}</td></tr>')
    warnings = "".join(f'<div style="color:{BAD}">! {esc(w.get(lang))}</div>' for w in report.warnings)
    colour = GOOD if report.verdict == Verdict.AC else BAD
    summary = (
        f'<div style="margin-top:6px"><b style="color:{colour}">{esc(str(report.verdict))}</b> '
        f"({esc(label(report.verdict, lang))}) · {word('score', lang)} "
        f"{report.score}/{report.max_score}</div>"
    )
    return (
        f'<div class="judge-report"><div><b>{esc(title)}</b></div>{warnings}'
        f'<table style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{summary}</div>"
    )


@dataclass
class CheckResult:
    """What check() and submit() return: HTML in Jupyter, the text table elsewhere."""

    report: Report
    title: str
    lang: str

    @property
    def verdict(self) -> str:
        return str(self.report.verdict)

    @property
    def score(self) -> int:
        return self.report.score

    @property
    def max_score(self) -> int:
        return self.report.max_score

    @property
    def ok(self) -> bool:
        return self.verdict == "AC"

    def __str__(self) -> str:
        from judge.core.report import render_table

        return render_table(self.report, self.title, self.lang)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return render_html(self.report, self.title, self.lang)
