"""`judge kit --out DIR`: the practice kit a learner downloads once and judges with offline.

The kit holds, per problem, the statement, the starter (in the learner's file: the problem's
module of the course package, practice/qwen/norm.py for 204), the package's data, the PUBLIC cases only
(cases.py with every hidden case and every helper only they use removed) and what the reference
and the known wrong solutions produce on them, as data (`expected.json` + `expected.safetensors`).
No reference code, no wrong solution's code and no hidden case goes in. The checking logic is
not written twice: the kit carries copies of the judge's own modules (the runner, the checkers,
grading, the report), taken from this checkout when the kit is made, and `practice/judge.py`
(judge/authoring/practice.py) drives them exactly as `judge run --cases public` does.

Beside `practice/qwen/` the kit puts the tiny practice checkpoint (217's, `practice/tiny-qwen3.5/`):
the course's chapter scripts load a checkpoint through the learner's `qwen.weights.find_model()`,
which falls back to it when no real Qwen3.5 checkpoint is configured.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.authoring.kit_install import API_MODULE, write_package_files
from judge.authoring.notebooks import write_notebooks
from judge.authoring.package import Problem
from judge.core.backend import Backend
from judge.core.frames import CaseOutcome
from judge.core.observations import encode
from judge.core.protocol import save_safetensors
from judge.core.public_cases import public_cases_source
from judge.core.texts import EMPTY
from judge.expected import ExpectedStore
from judge.settings import CODE_ROOT

KIT_FORMAT = 2  # 2: hints kept as {zh, en}
# What the kit runs, copied from this checkout: the judge's core, whole (it imports only the
# standard library, torch and itself: tests/test_layers.py), and the package file above it.
KIT_MODULES: tuple[str, ...] = (
    "judge/__init__.py",
    *sorted(p.relative_to(CODE_ROOT).as_posix() for p in (CODE_ROOT / "judge" / "core").rglob("*.py")),
)
# The kit's own code beside the library: judge.py, the notebook API, how it installs with pip.
KIT_SCRIPTS = ("judge/authoring/practice.py", API_MODULE, "judge/authoring/kit_install.py")
LIBRARY_DIR = "_judge"  # inside practice/: the copied modules
STATEMENTS = ("statement.zh.md", "statement.en.md")
# Inside practice/, beside qwen/: the capstone's tiny checkpoint, where the course's
# `qwen.weights.find_model()` looks when neither QWEN_MODEL nor ~/models/qwen3.5 is there.
TINY_CHECKPOINT_DIR = "tiny-qwen3.5"
CHECKPOINT_PACKAGE = "217-*"  # the package whose checkpoint/ folder the kit ships
# What writes the chapter notebooks (practice/notebooks/): they change when these do.
NOTEBOOK_MODULES = ("judge/authoring/notebooks.py", "judge/authoring/starters.py")


def tiny_checkpoint(problems: list[Problem]) -> Path | None:
    """The folder of the tiny practice checkpoint (config.json + model.safetensors): 217's, from
    the problems' own folder (whether or not 217 is among them), else this checkout's."""
    folders = [*sorted({p.root.parent for p in problems}), CODE_ROOT / "problems"]
    for folder in folders:
        for found in sorted(folder.glob(f"{CHECKPOINT_PACKAGE}/checkpoint/config.json")):
            return found.parent
    return None


def kit_fingerprint(problems: list[Problem], server: str) -> str:
    """What a built kit depends on: the server it points at, the problems' versions, the judge
    code it copies and the checkpoint it ships. Equal fingerprints, equal kits (a cache key)."""
    digest = hashlib.sha256(f"{KIT_FORMAT}\n{server.rstrip('/')}\n".encode())
    for problem in sorted(problems, key=lambda p: p.id):
        digest.update(f"{problem.id}:{problem.content_hash}\n".encode())
    for rel in (*KIT_MODULES, *KIT_SCRIPTS, "judge/authoring/kit.py", *NOTEBOOK_MODULES):
        digest.update(rel.encode() + b"\0" + (CODE_ROOT / rel).read_bytes())
    checkpoint = tiny_checkpoint(problems)
    if checkpoint is not None:
        for path in sorted(checkpoint.iterdir()):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def expected_data(problem: Problem, store: ExpectedStore, backend: Backend) -> tuple[dict[str, Any], bytes]:
    """What the reference and each wrong solution produce on the public cases: JSON and tensors."""
    expected = store.get(problem, backend)
    public = [c.name for c in problem.cases if c.public]
    runs = [("reference", EMPTY, expected.reference)] + [(w.name, w.hint, w.run) for w in expected.wrong]
    tensors = {}
    solutions = []
    for index, (name, hint, run) in enumerate(runs):
        cases = {}
        for case_name in public:
            case = run.cases.get(case_name)
            if case is None:
                continue
            # Stored as the runner's case frame body, read back with CaseOutcome.parse (practice).
            if case.status == "ok":
                manifest, named = encode(case.observations)
                # Tensor names in the manifest are per case; prefix them to share one file.
                tensors.update({f"{index}/{case_name}/{k}": v for k, v in named.items()})
                outcome = CaseOutcome("ok", case.time_ms, obs=manifest)
            else:
                outcome = CaseOutcome(case.status, case.time_ms, message=case.message, api=case.api)
            cases[case_name] = outcome.to_head()
        solutions.append({"name": name, "hint": hint.to_dict(), "cases": cases})
    data = {"format": KIT_FORMAT, "problem": problem.id, "cases": public, "solutions": solutions}
    return data, save_safetensors(tensors)


def problem_metadata(problem: Problem) -> dict[str, Any]:
    spec = problem.spec
    return {
        "id": problem.id,
        "slug": spec.slug,
        "title": {"zh": spec.title.zh, "en": spec.title.en},
        "version": problem.content_hash,
        "chapter": problem.chapter.label,  # "03 RMSNorm", as the kit has always shown it
        "module": spec.module,
        "parts": [
            {"problem": p.id, "module": p.module_name, "folder": p.root.name} for p in problem.part_problems
        ],
        "data": sorted(problem.data()),
        "entry_points": list(spec.entry_points),
        "forbidden": list(spec.forbidden),
        "limits": spec.limits.model_dump(),
        "points": {c.name: c.points for c in problem.cases if c.public},
    }


def learner_file(root: Path, problem: Problem) -> Path:
    """Where the learner's code for `problem` lives in the kit: its module of the course package
    (practice/qwen/norm.py), or the problem folder's solution.py for a problem outside it."""
    if problem.spec.module is None:
        return root / problem.root.name / "solution.py"
    return root.joinpath(*problem.spec.module.split(".")).with_suffix(".py")


def build_kit(
    out: Path,
    problems: list[Problem],
    store: ExpectedStore,
    backend: Backend,
    server: str,
    progress: Callable[[str], None] | None = None,
    steps: Callable[[int, int], None] | None = None,
) -> Path:
    """Write `out/practice/`. A learner's existing files (qwen/*.py) are never overwritten.
    `progress` hears a line per problem as it starts (the trusted runs of a cold cache take
    seconds each); `steps` hears (problems done, problems in all) as they finish."""
    root = out / "practice"
    root.mkdir(parents=True, exist_ok=True)
    library = root / LIBRARY_DIR
    if library.exists():
        shutil.rmtree(library)  # the modules always match this kit's data
    for rel in KIT_MODULES:
        target = library / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CODE_ROOT / rel, target)
    shutil.copyfile(CODE_ROOT / "judge" / "authoring" / "practice.py", root / "judge.py")
    checkpoint = tiny_checkpoint(problems)
    if checkpoint is not None:
        tiny = root / TINY_CHECKPOINT_DIR
        tiny.mkdir(exist_ok=True)
        for path in sorted(checkpoint.iterdir()):
            if path.is_file():
                shutil.copyfile(path, tiny / path.name)
    listed = []
    # A problem's parts come with it: the kit judges it with the learner's own files for them.
    chosen = {p.id: p for problem in problems for p in (problem, *problem.part_problems)}
    ordered = sorted(chosen.values(), key=lambda p: p.id)
    if steps is not None:
        steps(0, len(ordered))
    for index, problem in enumerate(ordered, 1):
        folder = root / problem.root.name
        if progress is not None:
            public = sum(1 for c in problem.cases if c.public)
            wrong = len(problem.solutions("wrong"))
            progress(
                f"[{index}/{len(ordered)}] {folder.name}: {public} public cases, the outputs of the "
                f"reference and {wrong} known mistakes"
            )
        folder.mkdir(exist_ok=True)
        for name in STATEMENTS:
            if problem.file(name).exists():
                shutil.copyfile(problem.file(name), folder / name)
        _place_learner_file(root, folder, problem)
        shutil.copyfile(problem.starter.path, folder / "starter.py")
        for rel, raw in problem.data().items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(raw)
        (folder / "cases.py").write_text(public_cases_source(problem.read("cases.py")), encoding="utf-8")
        meta = problem_metadata(problem)
        (folder / "problem.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
        data, blob = expected_data(problem, store, backend)
        (folder / "expected.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        (folder / "expected.safetensors").write_bytes(blob)
        listed.append(
            {"id": problem.id, "folder": folder.name, "version": meta["version"], "title": meta["title"]}
        )
        if steps is not None:
            steps(index, len(ordered))
    # Each chapter's notebooks (judge.authoring.notebooks): no run, so every kit has them.
    write_notebooks(root, ordered, learner_file)
    # `pip install ./practice`, `from practice import check`, `python -m practice` (kit_install).
    write_package_files(root)
    kit = {
        "format": KIT_FORMAT,
        "server": server.rstrip("/"),
        "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "problems": listed,
    }
    (root / "kit.json").write_text(json.dumps(kit, ensure_ascii=False, indent=1), encoding="utf-8")
    (root / "README.md").write_text(KIT_README.format(server=kit["server"]), encoding="utf-8")
    return root


def _place_learner_file(root: Path, folder: Path, problem: Problem) -> None:
    """The starter where the learner writes, unless they have written there already. A kit made
    before the course package kept the learner's code in the problem's solution.py: it moves to
    its module (never over a file that exists)."""
    target = learner_file(root, problem)
    old = folder / "solution.py"
    if target != old:
        package = target.parent
        package.mkdir(parents=True, exist_ok=True)
        for level in [package, *package.parents]:
            if level == root or root not in level.parents:
                break
            (level / "__init__.py").touch(exist_ok=True)
        if old.exists() and not target.exists():
            old.replace(target)
    if not target.exists():
        shutil.copyfile(problem.starter.path, target)


def zip_kit(root: Path) -> bytes:
    """The kit folder as a zip whose entries start with practice/ (the web download)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path("practice") / path.relative_to(root))
    return buffer.getvalue()


def learner_entries(problems: list[Problem], code: dict[str, str]) -> dict[str, str]:
    """The zip entries (practice/qwen/norm.py, ...) that carry a learner's own code, from
    {problem id: code} of the problems given."""
    by_id = {p.id: p for p in problems}
    root = Path("practice")
    return {
        learner_file(root, by_id[pid]).as_posix(): source
        for pid, source in sorted(code.items())
        if pid in by_id
    }


def with_files(kit_zip: bytes, files: dict[str, str]) -> bytes:
    """The kit's zip with the text of some entries replaced (the learner's own qwen/*.py)."""
    source = zipfile.ZipFile(io.BytesIO(kit_zip))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            if info.filename not in files:
                archive.writestr(info, source.read(info), compress_type=info.compress_type)
        for name, text in sorted(files.items()):
            archive.writestr(name, text.encode("utf-8"))
    return buffer.getvalue()


KIT_README = """# 练习包

需要 Python 3.10+ 与 torch 2.1+，不需要其他包；本地评测不需要联网。

```sh
python practice/judge.py              # 列出题目、你的文件与本地结果
python practice/judge.py 204          # 用公开用例评测 practice/qwen/norm.py
python practice/judge.py --all        # 评测全部题目
python practice/judge.py 204 --submit # 交给服务器正式评测、记分
python practice/judge.py --pull       # 取回你在网站上每题最近一次通过的代码
```

你的代码就是课程里的 `qwen/` 包：每题写在它的模块里（204 → `practice/qwen/norm.py`，
`python practice/judge.py` 列出每题的文件）。用到其他题零件的题（如 209、217）导入的是你自己
写的这些文件；还没写的零件会被点名。出错时的调用栈写的是你的文件和行号（`practice/qwen/norm.py`）。

`--submit` 和 `--pull` 连到 {server}（或 `--server URL`），令牌取自环境变量 `JUDGE_TOKEN`
或文件 `~/.config/llm-judge/token`（在网站的“设置”页创建）。`--pull` 不会悄悄覆盖你改过的文件：
在终端里会先问你（y/N），加 `--force` 才直接覆盖，否则保留你的文件并告诉你。

提示用中文；`--lang en`、环境变量 `JUDGE_LANG=en` 或英文的系统语言（`LANG=en_US.UTF-8`）改成英文。

## 在 notebook 里评测，用 pip 安装

```python
from practice import check, submit   # 在 practice/ 所在的文件夹里，或 pip 安装之后
check(204)                 # 评测 practice/qwen/norm.py，和 python practice/judge.py 204 一样
check(204, globals())      # 评测你在 notebook 单元格里定义的 RMSNorm、GatedRMSNorm、l2norm
submit(204, globals())     # 交给服务器正式评测（需要令牌，同 --submit）
```

在 Jupyter 里结果显示为表格（用例、提示、误差图），其他地方显示为文字；`lang="en"` 改成英文。
`notebooks/` 里每章有一个中文 notebook（`ch03-rmsnorm.zh.ipynb`）和一个英文的：题目说明、起始代码和
`check(...)` 单元格，可以直接在 Jupyter 里打开，或和练习包的 zip 一起上传到 Colab。
`check(ID, globals())` 需要这道题要的每个名字都在单元格里用 def 或 class 定义过；它取这些单元格里的
import、定义和简单常量组成你的解答，题目用到的其他零件仍从你的 `qwen/` 文件导入。

`pip install ./practice`（或 `pip install practice.zip`）安装 `practice` 和你的 `qwen` 包，只依赖
torch；之后在任何文件夹都能 `from practice import check`，`python -m practice 204` 等于
`python practice/judge.py 204`。从文件夹安装时，它评测的仍是这个文件夹里的文件（你改
`practice/qwen/norm.py` 后 `check(204)` 评测改过的代码）；从 zip 安装的评测安装时的副本。
`pip install -e ./practice` 直接用这个文件夹；环境变量 `JUDGE_KIT=/path/to/practice` 指定要评测的练习包。

## 跑课程的脚本

每章最后的脚本（如 `ch03_norm.py`）放在 `practice/` 里，在 `practice/` 下运行：
`cd practice && python ch03_norm.py`。脚本用你的 `qwen.weights.find_model()` 找模型，依次看：

1. 环境变量 `QWEN_MODEL`：真实 Qwen3.5 检查点的文件夹（有 `config.json` 和 `*.safetensors`），
   例如 `QWEN_MODEL=/path/to/Qwen3.5 python ch03_norm.py`；
2. 默认文件夹 `~/models/qwen3.5`：把检查点放在那里，就不用设置环境变量；
3. 都没有时，用练习包自带的小检查点 `practice/tiny-qwen3.5/`（会提示一句）。它结构和真模型
   一样但很小，脚本能跑通，和权重无关的输出与课程一致，和权重有关的数字与课程不同。

本地评测只用公开用例；隐藏用例只在服务器上。代码在你自己的机器上运行，没有沙箱。

---

# Practice kit

Needs Python 3.10+ and torch 2.1+, nothing else; judging here needs no network.

```sh
python practice/judge.py              # the problems, your files and your local results
python practice/judge.py 204          # judge practice/qwen/norm.py on the public cases
python practice/judge.py --all        # judge every problem
python practice/judge.py 204 --submit # the official verdict and score from the server
python practice/judge.py --pull       # fetch your latest accepted code of each problem from the site
```

Your code is the course's `qwen/` package: each problem is written in its module (204 →
`practice/qwen/norm.py`; `python practice/judge.py` lists each problem's file). A problem that
uses other problems' parts (209, 217, ...) imports these files of yours; a part you have not
written yet is named. Tracebacks name your file and line (`practice/qwen/norm.py`).

`--submit` and `--pull` talk to {server} (or `--server URL`) with the token from `JUDGE_TOKEN`
or the file `~/.config/llm-judge/token` (create one on the site's Settings page). `--pull` never
silently overwrites a file you changed: on a terminal it asks (y/N), `--force` overwrites, and
otherwise it keeps your file and says so.

It speaks Chinese; `--lang en`, `JUDGE_LANG=en` or an English locale (`LANG=en_US.UTF-8`) make it
speak English.

## In a notebook, and installed with pip

```python
from practice import check, submit   # from the folder that holds practice/, or after pip install
check(204)                 # judge practice/qwen/norm.py, as python practice/judge.py 204 does
check(204, globals())      # judge the RMSNorm, GatedRMSNorm and l2norm defined in your notebook
submit(204, globals())     # the official verdict from the server (a token, as for --submit)
```

In Jupyter the result shows as a table (cases, hints, error maps), elsewhere as text; `lang="en"`
or `lang="zh"` picks the language. `notebooks/` holds a notebook per chapter, one in Chinese
(`ch03-rmsnorm.zh.ipynb`) and one in English: each exercise's statement, its starter and a
`check(...)` cell, ready for Jupyter, or for Colab with the kit's zip.
`check(ID, globals())` needs every name the problem asks for defined with def or class in a
cell; it builds your solution from those cells' imports, definitions and simple constants, and
imports the problem's other parts from your `qwen/` files as usual.

`pip install ./practice` (or `pip install practice.zip`) installs `practice` and your `qwen`
package, with torch the only dependency: `from practice import check` then works from any folder,
and `python -m practice 204` is `python practice/judge.py 204`. Installed from the folder, it still
judges the files in that folder (edit `practice/qwen/norm.py`, and `check(204)` judges the edit);
installed from the zip, it judges its installed copy. `pip install -e ./practice` uses the folder
itself; `JUDGE_KIT=/path/to/practice` names the kit to judge.

## Running the course's scripts

Put a chapter's script (`ch03_norm.py`, ...) in `practice/` and run it there:
`cd practice && python ch03_norm.py`. The script finds the model with your
`qwen.weights.find_model()`, which looks, in order, at:

1. the environment variable `QWEN_MODEL`: the folder of a real Qwen3.5 checkpoint (its
   `config.json` and `*.safetensors`), e.g. `QWEN_MODEL=/path/to/Qwen3.5 python ch03_norm.py`;
2. the default folder `~/models/qwen3.5`: put the checkpoint there and set nothing;
3. otherwise the kit's tiny practice checkpoint, `practice/tiny-qwen3.5/` (it says so). It has the
   real model's layout at a tiny size: the scripts run, their weight-independent lines read as in
   the course, and the numbers that depend on the weights differ.

Local judging uses the public cases only; hidden cases live on the server. Your code runs on
your own machine, without a sandbox.
"""
