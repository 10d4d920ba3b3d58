"""The kit installed with pip and judged from a notebook: `pip install ./practice` in a venv of
torch alone, `python -m practice 204`, then a real Jupyter kernel (ipykernel, driven by nbclient,
the versions pinned in requirements-dev.txt) running `check(204, globals())` on classes defined in
its cells: the known mistake's hint in the HTML, and AC once the cell is fixed.

One venv serves all: its torch-only state (torch + the kit) is examined before ipykernel goes in."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.paths import REPO_ROOT
from tests.venvs import torch_only_copy

PACKAGE = REPO_ROOT / "problems" / "204-rmsnorm"
WRONG = (PACKAGE / "solutions" / "wrong" / "weight_not_plus_one.py").read_text()
NOTEBOOK_PINS = ("ipykernel", "nbclient", "nbformat")
# What torch itself brings; anything else in the venv came with the kit.
TORCH_ONLY = {"numpy", "safetensors", "pydantic", "pydantic-settings", "llm-judge", "ipython", "ipykernel"}


def run(cmd: list[str], cwd: Path = REPO_ROOT, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=cwd, **kwargs)


def pins() -> list[str]:
    lines = (REPO_ROOT / "requirements-dev.txt").read_text().splitlines()
    found = [line.strip() for line in lines if line.split("==")[0].strip() in NOTEBOOK_PINS]
    assert len(found) == len(NOTEBOOK_PINS), found
    return found


@dataclass
class Venv:
    python: str
    kit: Path
    torch_only: set[str]  # the packages before ipykernel went in
    imported: list[str]  # what `import practice` loaded of torch, numpy, IPython, the judge
    listed: subprocess.CompletedProcess[str]  # `python -m practice`, in the torch-only venv
    judged: subprocess.CompletedProcess[str]  # `python -m practice 204 --lang en`, likewise


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    out = tmp_path_factory.mktemp("kit")
    made = run([sys.executable, "-m", "judge", "kit", "--out", str(out), "--problems", "204"])
    assert made.returncode == 0, made.stderr
    kit = out / "practice"
    python = str(torch_only_copy(tmp_path_factory, "venv"))
    # As a learner does, from the folder above the kit.
    installed = run([python, "-m", "pip", "install", "--quiet", "./practice"], cwd=out)
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]
    names = {
        p["name"].lower() for p in json.loads(run([python, "-m", "pip", "list", "--format=json"]).stdout)
    }
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # not beside practice/: the installed package
    probe = (
        "import sys, practice; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'numpy', 'IPython', 'judge'}))"
    )
    imported = run([python, "-c", probe], cwd=elsewhere)
    assert imported.returncode == 0, imported.stderr
    listed = run([python, "-m", "practice"], cwd=elsewhere)
    judged = run([python, "-m", "practice", "204", "--lang", "en"], cwd=elsewhere)
    notebook = run([python, "-m", "pip", "install", "--quiet", *pins()])
    assert notebook.returncode == 0, notebook.stderr[-2000:]
    return Venv(python, kit, names, json.loads(imported.stdout.replace("'", '"')), listed, judged)


@pytest.mark.slow
def test_pip_install_gives_python_m_practice_with_torch_alone(venv: Venv) -> None:
    assert "torch" in venv.torch_only and "llm-judge-practice" in venv.torch_only
    assert not venv.torch_only & TORCH_ONLY, venv.torch_only
    assert venv.imported == [], "importing the kit loads nothing until check() is used"
    assert venv.listed.returncode == 0, venv.listed.stderr
    assert "204" in venv.listed.stdout and "qwen/norm.py" in venv.listed.stdout
    # The starter in the kit folder (recorded at install time) is what was judged: not AC.
    assert venv.judged.returncode == 1, venv.judged.stderr
    assert "Verdict:" in venv.judged.stdout and "practice/qwen/norm.py" in venv.judged.stdout


@pytest.mark.slow
def test_the_installed_kit_judges_the_learners_edit_in_the_kit_folder(venv: Venv, tmp_path: Path) -> None:
    accepted = (PACKAGE / "solutions" / "accepted" / "div_sqrt_sum.py").read_text()
    (venv.kit / "qwen" / "norm.py").write_text(accepted)
    judged = run([venv.python, "-m", "practice", "204"], cwd=tmp_path)
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-2000:]
    # JUDGE_KIT names the folder outright: one without a kit says so.
    env = {**os.environ, "JUDGE_KIT": str(tmp_path)}
    elsewhere = run([venv.python, "-m", "practice", "204", "--lang", "en"], cwd=tmp_path, env=env)
    assert elsewhere.returncode == 2 and "not a practice kit" in elsewhere.stderr


def class_source(source: str, name: str) -> str:
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return ast.get_source_segment(source, node) or ""


# Run in the venv's Python: writes the notebook with nbformat, executes it with nbclient in an
# ipykernel kernel, prints each cell's outputs as JSON.
DRIVER = """
import json, sys
import nbformat
from nbclient import NotebookClient

cells = json.loads(sys.argv[1])
nb = nbformat.v4.new_notebook()
for source, may_fail in cells:
    cell = nbformat.v4.new_code_cell(source)
    if may_fail:
        cell.metadata["tags"] = ["raises-exception"]
    nb.cells.append(cell)
nbformat.validate(nb)
NotebookClient(nb, timeout=600, kernel_name="python3").execute()
print(json.dumps([cell.outputs for cell in nb.cells]))
"""


# An RMSNorm whose construction ends the process it runs in.
EXITS = (
    "import os\n\n\nclass RMSNorm(nn.Module):\n    def __init__(self, dim, eps=1e-6):\n        os._exit(3)\n"
)


def outputs_of(cell: list[dict[str, Any]]) -> str:
    """What a cell showed: the HTML of its result, its printed text, its error."""
    shown = []
    for output in cell:
        data = output.get("data", {})
        shown.append(data.get("text/html") or data.get("text/plain") or "")
        shown.append(output.get("text", "") + output.get("evalue", ""))
    return "\n".join(shown)


@pytest.mark.slow
def test_check_in_a_notebook_shows_the_hint_then_ac(venv: Venv, tmp_path: Path) -> None:
    right = class_source(WRONG, "RMSNorm").replace(
        "(y * self.weight.float())", "(y * (1.0 + self.weight.float()))"
    )
    assert right != class_source(WRONG, "RMSNorm")
    cells = [
        ("from practice import check", False),
        (WRONG, False),  # a wrong RMSNorm, the right GatedRMSNorm and l2norm
        ("check(204, globals(), lang='en')", False),
        ("check(204, RMSNorm=RMSNorm)", True),  # the others are missing
        (right, False),  # the fix, in a cell of its own
        ("result = check(204, globals())\nprint(result.verdict, result.ok)\nresult", False),
        # Code that ends its process ends the runner's, not the kernel.
        (EXITS, False),
        ("print('kernel alive:', check(204, globals(), lang='en').verdict)", False),
        ("exec('def l2norm(x, eps=1e-6):\\n    return x')\ncheck(204, globals(), lang='en')", True),
    ]
    # The kernel inherits this environment: no language named, so the locale's (C: Chinese).
    quiet = {k: v for k, v in os.environ.items() if k not in ("JUDGE_LANG", "LC_ALL", "LC_MESSAGES")}
    driven = run(
        [venv.python, "-c", DRIVER, json.dumps(cells)], cwd=tmp_path, env={**quiet, "LANG": "C.UTF-8"}
    )
    assert driven.returncode == 0, driven.stdout[-3000:] + driven.stderr[-3000:]
    shown = [outputs_of(cell) for cell in json.loads(driven.stdout)]

    wrong = shown[2]
    assert '<table class="error-map ljm' in wrong, wrong[:3000]
    assert "WA" in wrong and "<b>hint:</b>" in wrong and "(1 + weight)" in wrong, wrong[:3000]
    assert "GatedRMSNorm, l2norm" in shown[3], shown[3]  # named, in the reader's language

    fixed = shown[5]
    assert "AC True" in fixed, fixed[:3000]
    assert ">AC</b>" in fixed and "提示" not in fixed and "结果" in fixed, fixed[:3000]  # Chinese by default
    assert "kernel alive: " in shown[7] and "kernel alive: AC" not in shown[7], shown[7]
    assert "cannot find the source of l2norm" in shown[8], shown[8]


def test_notebook_source_takes_the_defining_cells_in_order() -> None:
    """Cells as ipykernel keeps them (linecache, a file name each): imports, definitions and
    constants of the cells that defined the objects; a redefinition wins; exec'd code is refused."""
    import linecache

    from judge.authoring.practice_api import CellError, notebook_source

    namespace: dict[str, Any] = {}

    def cell(name: str, text: str) -> None:
        filename = f"/tmp/ipykernel_0/{name}.py"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        # Run here without the kit installed: the import line stands in, same line numbers.
        runnable = text.replace("from practice import check", "check = None")
        exec(compile(runnable, filename, "exec"), namespace)

    cell(
        "a",
        "from practice import check\nimport math\nEPS = 1e-6\nprint('hi')\n\ndef helper(x):\n    return x\n",
    )
    cell(
        "b",
        "class Norm:\n    def f(self):\n        return 1\n\ndef l2norm(x, eps=EPS):\n    return helper(x)\n",
    )
    cell("c", "class Norm:\n    def f(self):\n        return 2\n")
    source = notebook_source(
        {"Norm": namespace["Norm"], "l2norm": namespace["l2norm"], "H": namespace["helper"]}
    )
    module: dict[str, Any] = {}
    exec(source, module)
    assert module["Norm"]().f() == 2 and module["H"] is module["helper"] and module["EPS"] == 1e-6
    assert "practice" not in source and "print" not in source and source.index("import math") == 0
    exec("def made(x):\n    return x\n", namespace)
    with pytest.raises(CellError, match="cannot find the source of made"):
        notebook_source({"made": namespace["made"]})
