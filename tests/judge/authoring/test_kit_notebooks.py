"""The kit's chapter notebooks (judge.authoring.notebooks): one per chapter and language, valid
nbformat v4, in one language each, with each exercise's starter and its check call. ch03's, run
cell by cell in plain Python as a kernel runs them, and executed in a real Jupyter kernel from the
kit folder with nothing installed: the starter gets no AC, a known mistake its hint, an accepted
solution in the starter's cell AC from the kit's `check`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from judge.authoring.course import load_course
from judge.authoring.kit import learner_file
from judge.authoring.notebooks import chapter_notebooks, statement_parts, write_notebooks
from judge.authoring.package import Problem, all_problem_dirs
from judge.authoring.starters import has_chinese
from tests.judge.authoring.test_kit import python_3_10, run
from tests.paths import REPO_ROOT
from tests.sources import code_only

PROBLEMS = REPO_ROOT / "problems"


def all_problems() -> list[Problem]:
    return [Problem(d) for d in all_problem_dirs(PROBLEMS)]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every chapter's notebooks, written for every problem of the course (no kit build: the
    writer runs nothing)."""
    root = tmp_path_factory.mktemp("kit") / "practice"
    write_notebooks(root, all_problems(), learner_file)
    return root / "notebooks"


def read(path: Path) -> Any:
    book = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(book)  # raises on anything that is not nbformat v4
    return book


def source(cell: Any) -> str:
    return str(cell.source)


def test_every_chapter_of_the_course_has_a_valid_notebook_in_each_language(notebooks: Path) -> None:
    course = load_course(PROBLEMS)
    assert course is not None
    problems = all_problems()
    chapters = {p.chapter.number for p in problems}
    assert len(chapters) == len(course.chapters) >= 10  # every chapter has problems
    names = sorted(p.name for p in notebooks.iterdir())
    assert len(names) == 2 * len(chapters)
    assert "ch03-rmsnorm.zh.ipynb" in names and "ch03-rmsnorm.en.ipynb" in names
    by_id = {p.id: p for p in problems}
    for path in sorted(notebooks.iterdir()):
        lang = path.name.split(".")[-2]
        book = read(path)
        assert book.nbformat == 4
        cells = book.cells
        text = "\n".join(source(c) for c in cells)
        if lang == "en":
            assert not [line for line in text.splitlines() if has_chinese(line)], path.name
        else:
            assert lang == "zh"
            assert all(has_chinese(source(c)) for c in cells if c.cell_type == "markdown"), path.name
        assert cells[0].cell_type == "markdown" and source(cells[0]).startswith("# ")
        assert "from practice import check" in source(cells[1])
        checks = [c for c in cells if c.cell_type == "code" and "check(" in source(c)]
        ids = [source(c).splitlines()[-1] for c in checks]
        assert ids and all(line.endswith(", globals())") for line in ids), ids
        for line in ids:
            problem = by_id[line.removeprefix("check(").split(",")[0]]
            assert problem.chapter.number is not None
            assert path.name.startswith(f"ch{problem.chapter.number:02d}-")
            # The starter sits right before its check call, its code untouched.
            at = next(i for i, c in enumerate(cells) if source(c).endswith(line))
            assert code_only(source(cells[at - 1])) == code_only(problem.starter.source())
            assert cells[at - 2].cell_type == "markdown" and f"## {problem.id} · " in source(cells[at - 2])
        # One check per problem of the chapter, in id order.
        chapter_ids = sorted(p.id for p in problems if path.name.startswith(f"ch{p.chapter.number:02d}-"))
        assert [line.removeprefix("check(").split(",")[0] for line in ids] == chapter_ids


def test_the_statement_gives_the_exercise_its_lead_and_what_to_implement(notebooks: Path) -> None:
    english = {c.id: source(c) for c in read(notebooks / "ch03-rmsnorm.en.ipynb").cells}
    statement = english["p204-statement"]
    assert "Every Qwen3.5 layer starts with an RMSNorm" in statement  # the opening paragraph
    assert "### What to implement" in statement and "initialised to zeros" in statement
    assert "Why it is written this way" not in statement and "## Example" not in statement
    assert "`practice/204-rmsnorm/statement.en.md`" in statement
    assert "`practice/qwen/norm.py`" in english["intro"]
    chinese = {c.id: source(c) for c in read(notebooks / "ch03-rmsnorm.zh.ipynb").cells}
    assert "### 要实现的内容" in chinese["p204-statement"] and "为什么这样写" not in chinese["p204-statement"]
    # 201 has a section per function instead of one "what to implement": those, up to the why.
    first = {c.id: source(c) for c in read(notebooks / "ch01-weights-file-scripts.en.ipynb").cells}
    assert "### `Config.load(path)`" in first["p201-statement"]
    assert "### `load(module, W, prefix)`" in first["p201-statement"]
    assert "Why it is written this way" not in first["p201-statement"]


def test_statement_parts_skip_fenced_code_and_push_headings_down() -> None:
    text = "\n".join(
        [
            "# 999 Title",
            "",
            "The lead.",
            "",
            "## What to implement",
            "",
            "### f(x)",
            "```python",
            "# a comment, not a heading",
            "## nor this",
            "```",
            "## Why it is written this way",
            "Because.",
        ]
    )
    lead, task = statement_parts(text)
    assert lead == "The lead."
    assert task.splitlines()[0] == "### What to implement"
    assert "#### f(x)" in task and "# a comment, not a heading" in task and "\n## nor this" in task
    assert "Because" not in task


def test_a_notebook_already_there_is_the_learners_and_stays(tmp_path: Path) -> None:
    root = tmp_path / "practice"
    problems = [Problem(next(PROBLEMS.glob("204-*")))]
    written = write_notebooks(root, problems, learner_file)
    assert [p.name for p in written] == ["ch03-rmsnorm.zh.ipynb", "ch03-rmsnorm.en.ipynb"]
    mine = written[1].read_text(encoding="utf-8").replace("raise NotImplementedError", "return x")
    written[1].write_text(mine, encoding="utf-8")
    write_notebooks(root, problems, learner_file)
    assert written[1].read_text(encoding="utf-8") == mine
    # The same problems give the same bytes: a kit's fingerprint stands for its notebooks.
    again = tmp_path / "again" / "practice"
    write_notebooks(again, problems, learner_file)
    assert (again / "notebooks" / written[0].name).read_bytes() == written[0].read_bytes()


def test_the_chapters_come_in_course_order() -> None:
    numbers = [book.chapter.number for book in chapter_notebooks(all_problems(), learner_file)]
    course = load_course(PROBLEMS)
    assert course is not None
    assert numbers == [n for n in course.numbers() if n in numbers]


def test_the_notebooks_code_is_python_3_10(notebooks: Path) -> None:
    """The kit runs on Python 3.10: every code cell of every notebook compiles there."""
    python = python_3_10()
    cells = [
        source(c) for path in sorted(notebooks.iterdir()) for c in read(path).cells if c.cell_type == "code"
    ]
    script = "import json, sys\nfor text in json.load(sys.stdin):\n    compile(text, 'cell', 'exec')\n"
    compiled = subprocess.run(
        [python, "-c", script], input=json.dumps(cells), capture_output=True, text=True, timeout=120
    )
    assert compiled.returncode == 0, compiled.stderr


# Runs a notebook's code cells in order as a kernel does, in plain Python: each cell compiled under
# a file name in a per-process temporary folder and put in linecache (what ipykernel does, and where
# `check` reads the source of what a cell defined), the value of a cell's last expression kept;
# %magic and !shell lines skipped. Prints, per cell that ends in a value, its verdict and its text.
KERNEL = r"""
import ast, json, linecache, os, sys, tempfile
from pathlib import Path

book = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
replaced = json.loads(sys.argv[2])
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
folder = Path(tempfile.gettempdir()) / f"ipykernel_{os.getpid()}"
for n, cell in enumerate(book["cells"]):
    if cell["cell_type"] != "code":
        continue
    text = replaced.get(cell["id"], "".join(cell["source"]))
    text = "".join(l for l in text.splitlines(True) if not l.lstrip().startswith(("%", "!")))
    name = str(folder / f"{n}.py")
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    tree = ast.parse(text, name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
        verdict = getattr(value, "verdict", None)
        verdict = getattr(verdict, "value", verdict)
        print(json.dumps({"cell": cell["id"], "verdict": str(verdict), "text": str(value)}), flush=True)
"""


def run_cells(notebook: Path, replaced: dict[str, str]) -> dict[str, dict[str, str]]:
    # An English locale: the notebook's own language must still be the results'.
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_LANG"} | {"LANG": "en_US.UTF-8"}
    ran = subprocess.run(
        [sys.executable, "-c", KERNEL, str(notebook), json.dumps(replaced)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=notebook.parent,  # the kernel's working folder is the notebook's, as Jupyter's is
        env=env,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    found = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith('{"cell"')]
    return {f["cell"]: f for f in found}


@pytest.mark.slow
def test_the_ch03_notebook_run_cell_by_cell_judges_what_its_cells_define(tmp_path: Path) -> None:
    made = run([sys.executable, "-m", "judge", "kit", "--out", str(tmp_path), "--problems", "204"])
    assert made.returncode == 0, made.stderr
    notebooks = tmp_path / "practice" / "notebooks"
    assert f"chapter notebooks: {notebooks}" in made.stdout
    # The starter as it is (the Chinese notebook): it raises NotImplementedError, so no AC, said
    # in Chinese.
    starter = run_cells(notebooks / "ch03-rmsnorm.zh.ipynb", {})
    assert starter["p204-check"]["verdict"] not in ("", "None", "AC"), starter
    assert has_chinese(starter["p204-check"]["text"]), starter["p204-check"]["text"]
    # An accepted solution written in the starter's cell (the English notebook): AC, from the
    # cells, not from the file practice/qwen/norm.py, which still holds the starter.
    problem = Problem(next(PROBLEMS.glob("204-*")))
    accepted = problem.solutions("accepted")[0].source()
    solved = run_cells(notebooks / "ch03-rmsnorm.en.ipynb", {"p204-code": accepted})
    assert solved["p204-check"]["verdict"] == "AC", solved["p204-check"]["text"]
    assert not has_chinese(solved["p204-check"]["text"]), solved["p204-check"]["text"]
    assert (tmp_path / "practice" / "qwen" / "norm.py").read_text() == problem.starter.source()


# Executes a notebook file in a real Jupyter kernel (ipykernel, driven by nbclient; both
# development requirements, in this venv) with its working folder the notebook's, some cells'
# sources replaced first; prints each code cell's outputs as JSON.
JUPYTER = """
import json, sys
import nbformat
from nbclient import NotebookClient

path, replaced = sys.argv[1], json.loads(sys.argv[2])
book = nbformat.read(path, as_version=4)
for cell in book.cells:
    cell.source = replaced.get(cell.id, cell.source)
folder = str(__import__("pathlib").Path(path).parent)
NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
print(json.dumps({cell.id: cell.outputs for cell in book.cells if cell.cell_type == "code"}))
"""


def run_in_jupyter(notebook: Path, replaced: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_LANG"} | {"LANG": "en_US.UTF-8"}
    ran = subprocess.run(
        [sys.executable, "-c", JUPYTER, str(notebook), json.dumps(replaced)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    shown = {}
    for cell, outputs in json.loads(ran.stdout).items():
        texts = []
        for output in outputs:
            data = output.get("data", {})
            texts.append(data.get("text/html") or data.get("text/plain") or "")
            texts.append(output.get("text", "") + output.get("evalue", ""))
        shown[cell] = "\n".join(texts)
    return shown


@pytest.mark.slow
def test_the_ch03_notebook_in_jupyter_from_the_kit_folder(tmp_path: Path) -> None:
    """As a learner opens it from practice/notebooks/ without installing anything: the setup cell
    finds the kit; a known mistake in the starter's cell gets its hint, in the notebook's
    language; an accepted solution gets AC."""
    made = run([sys.executable, "-m", "judge", "kit", "--out", str(tmp_path), "--problems", "204"])
    assert made.returncode == 0, made.stderr
    notebooks = tmp_path / "practice" / "notebooks"
    problem = Problem(next(PROBLEMS.glob("204-*")))
    wrong = problem.root / "solutions" / "wrong" / "weight_not_plus_one.py"
    shown = run_in_jupyter(notebooks / "ch03-rmsnorm.zh.ipynb", {"p204-code": wrong.read_text()})
    assert "WA" in shown["p204-check"] and "<b>提示:</b>" in shown["p204-check"], shown["p204-check"][:3000]
    accepted = problem.solutions("accepted")[0].source()
    shown = run_in_jupyter(notebooks / "ch03-rmsnorm.en.ipynb", {"p204-code": accepted})
    assert ">AC</b>" in shown["p204-check"] and "score 35/35" in shown["p204-check"], shown["p204-check"][
        :3000
    ]
