"""The kit's chapter notebooks: for each chapter of the course among the kit's problems, a small
Jupyter notebook per language, `practice/notebooks/ch03-rmsnorm.zh.ipynb` and `.en.ipynb`.

A notebook opens with the chapter's title and a short note on how to work in it, then a cell that
finds the kit and imports `check` and `submit` from it (locally, from practice/notebooks/, and in
Colab once the kit's zip is uploaded beside the notebook). Then, for each exercise of the chapter in
id order: its statement's opening paragraphs and its "what to implement" section (the package's
statement is the source: nothing is written here twice), the starter in a code cell (the learner
fills it in) and `check(ID, globals())` after it.

The files are nbformat v4 JSON written with the standard library (the judge does not depend on
nbformat; the tests validate them with it). Their text is in one language each: the statements'
own language files, the starter through judge.authoring.starters.in_language. Writing them takes
no run of anything, so `judge kit` always writes them and the web's kit.zip holds them too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.authoring.course import Chapter
from judge.authoring.package import Problem
from judge.authoring.starters import in_language
from judge.core.texts import LANGUAGES, Text

NOTEBOOKS_DIR = "notebooks"  # inside practice/
NBFORMAT = 4
NBFORMAT_MINOR = 5  # 4.5: cells carry ids (given here, stable from one build to the next)
TASK_HEADINGS = ("What to implement", "要实现的内容")
# Where a statement without a "what to implement" section stops specifying (201 has a section
# per function instead): its explanations and examples come after its specification.
EXPLANATION_HEADINGS = ("Why", "Where this differs", "Example", "为什么", "与 transformers", "示例", "例子")
_SLUG_DROP = {"the", "a", "an", "and", "of"}
# Where the kit keeps a problem's learner file under a kit folder (judge.authoring.kit.learner_file).
LearnerFile = Callable[[Path, Problem], Path]


@dataclass(frozen=True)
class Exercise:
    """One problem as its notebook shows it, each text in both languages."""

    problem_id: str
    title: Text
    lead: Text  # the statement's opening paragraphs
    task: Text  # its "what to implement" section (Markdown, headings one level down)
    starter: Text  # the starter, its comments in one language
    learner_file: str  # practice/qwen/norm.py: where the kit judges the learner's own file
    entry_points: tuple[str, ...]
    statement_files: Text  # practice/204-rmsnorm/statement.zh.md, .en.md


@dataclass(frozen=True)
class ChapterNotebook:
    """A chapter of the course and its exercises: one notebook per language."""

    chapter: Chapter
    exercises: tuple[Exercise, ...]

    @property
    def stem(self) -> str:
        """ch03-rmsnorm: the chapter's number and its English name as a slug."""
        words = [w for w in re.findall(r"[a-z0-9]+", self.chapter.en.lower()) if w not in _SLUG_DROP]
        slug = "-".join(words) or self.exercises[0].problem_id
        return f"ch{self.chapter.number:02d}-{slug}" if self.chapter.number is not None else f"chapter-{slug}"

    def file_name(self, lang: str) -> str:
        return f"{self.stem}.{lang}.ipynb"


# ----------------------------------------------------------------------------- statements


def _sections(markdown: str) -> tuple[str, list[tuple[str, str]]]:
    """A statement split at its `## ` headings: (the text before the first one, without the `# `
    title line; [(heading, body)]). Lines inside ``` fences are never headings."""
    lead: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        elif fenced or not line.startswith("# "):  # the `# ` title line is the exercise's heading
            lead.append(line)
    return "\n".join(lead).strip(), [(h, "\n".join(body).strip()) for h, body in sections]


def _demoted(markdown: str) -> str:
    """Markdown with each heading one level down (it sits under the exercise's own heading)."""
    out = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and re.match(r"#{1,5} ", line) else line)
    return "\n".join(out)


def statement_parts(markdown: str) -> tuple[str, str]:
    """(lead, task) of a statement: its opening paragraphs, and its "what to implement" section
    with that heading, or else every section before its explanations and examples."""
    lead, sections = _sections(markdown)
    chosen = [(h, b) for h, b in sections if h in TASK_HEADINGS]
    if not chosen:
        for heading, body in sections:
            if heading.startswith(EXPLANATION_HEADINGS):
                break
            chosen.append((heading, body))
    task = "\n\n".join(f"## {heading}\n\n{body}" for heading, body in chosen)
    return lead, _demoted(task)


def exercise(problem: Problem, learner_file: LearnerFile) -> Exercise:
    files = {lang: _statement_file(problem, lang) for lang in LANGUAGES}
    parts = {lang: statement_parts(problem.read(name)) for lang, name in files.items()}
    starter = problem.starter.source()
    folder = f"practice/{problem.root.name}"
    return Exercise(
        problem_id=problem.id,
        title=Text(problem.spec.title.zh, problem.spec.title.en),
        lead=Text(parts["zh"][0], parts["en"][0]),
        task=Text(parts["zh"][1], parts["en"][1]),
        starter=Text(in_language(starter, "zh"), in_language(starter, "en")),
        learner_file=learner_file(Path("practice"), problem).as_posix(),
        entry_points=tuple(problem.spec.entry_points),
        statement_files=Text(f"{folder}/{files['zh']}", f"{folder}/{files['en']}"),
    )


def _statement_file(problem: Problem, lang: str) -> str:
    """The statement in `lang`, or the Chinese one (every package has it) when there is none."""
    name = f"statement.{lang}.md"
    return name if problem.file(name).is_file() else "statement.zh.md"


def chapter_notebooks(problems: list[Problem], learner_file: LearnerFile) -> list[ChapterNotebook]:
    """The problems grouped by chapter, chapters in course order, exercises by id."""
    by_chapter: dict[Chapter, list[Problem]] = {}
    for problem in sorted(problems, key=lambda p: p.id):
        by_chapter.setdefault(problem.chapter, []).append(problem)
    ordered = sorted(by_chapter.items(), key=lambda item: (item[0].position, item[0].zh))
    return [
        ChapterNotebook(chapter, tuple(exercise(p, learner_file) for p in found))
        for chapter, found in ordered
    ]


# ----------------------------------------------------------------------------- cells


def tr(lang: str, zh: str, en: str) -> str:
    return en if lang == "en" else zh


def chapter_title(chapter: Chapter, lang: str) -> str:
    name = chapter.en if lang == "en" else chapter.zh
    if chapter.number is None:
        return name
    return tr(lang, f"第 {chapter.number} 章 · {name}", f"Chapter {chapter.number} · {name}")


def intro(book: ChapterNotebook, lang: str) -> str:
    listed = "\n".join(
        f"- **{e.problem_id}** {e.title.get(lang)}"
        + tr(lang, f"（`{e.learner_file}`）", f" (`{e.learner_file}`)")
        for e in book.exercises
    )
    first = book.exercises[0]
    how = tr(
        lang,
        "每道题有三格：题目说明、初始代码、`check(...)`。在代码格里补全初始代码、运行它，再运行下面的 "
        f"`check({first.problem_id}, globals())`：它用公开用例在本机评测你在这个 notebook 里定义的类和函数，"
        "给出和网站上一样的表格、提示与误差图。题目要用到的其他零件（`from qwen... import ...`）"
        "来自你练习包里的文件 `practice/qwen/`。\n\n"
        f"通过以后，把代码也存进这道题的文件（{first.problem_id} → `{first.learner_file}`）："
        "后面的题导入的是那些文件。"
        f"`submit({first.problem_id}, globals())` 把同样的代码交给服务器正式评分。"
        "先运行下面这一格，它让 `check` 和 `submit` 可用。",
        "Each exercise has three cells: what to write, the starter and `check(...)`. Fill in the "
        f"starter, run its cell, then run `check({first.problem_id}, globals())` below it: it judges "
        "the classes and functions defined in this notebook on the public cases, on this machine, "
        "and shows the same table, hints and error map as the site. The other parts a problem "
        "uses (`from qwen... import ...`) come from your files in the kit, `practice/qwen/`.\n\n"
        f"Once it passes, save the code in the problem's file too ({first.problem_id} → "
        f"`{first.learner_file}`): later problems import those files. "
        f"`submit({first.problem_id}, globals())` sends the same code to the server for the official "
        "score. Run the next cell first: it makes `check` and `submit` available.",
    )
    heading = tr(lang, "本章的练习：", "This chapter's exercises:")
    return f"# {chapter_title(book.chapter, lang)}\n\n{heading}\n\n{listed}\n\n{how}"


# The first code cell, after its comment. Python 3.10 and the standard library only: it runs in
# the learner's kernel before anything of the kit is importable.
SETUP = """import os
import sys
import zipfile
from pathlib import Path


def find_kit():
    here = Path.cwd()
    found = [p / "practice" for p in (here, *here.parents) if (p / "practice" / "kit.json").is_file()]
    return found[0] if found else None


if find_kit() is None:  # Colab: the kit's zip, uploaded here
    for name in sorted(Path.cwd().glob("*.zip")):
        with zipfile.ZipFile(name) as archive:
            if "practice/kit.json" in archive.namelist():
                archive.extractall()
                break
kit = find_kit()
if kit is None:
    raise FileNotFoundError(
        {missing!r}
    )
for folder in (str(kit), str(kit.parent)):  # your qwen/ is in practice/; practice/ is in its parent
    if folder not in sys.path:
        sys.path.insert(0, folder)
os.environ.setdefault("JUDGE_LANG", {lang!r})  # results in this notebook's language
from practice import check, submit
"""


def setup_code(lang: str) -> str:
    """The first code cell: finds the kit (the folder practice/ holding kit.json) here or above
    (a notebook opened from practice/notebooks/), unpacking an uploaded kit zip when there is
    none (Colab), and imports check and submit from it."""
    comment = tr(
        lang,
        "# 让 `from practice import check` 可用：从这里往上找练习包（有 kit.json 的 practice/ 文件夹），\n"
        "# 把它加进 sys.path，不安装任何东西。\n"
        "# 在 Colab 里：先把网站上下载的练习包 llm-judge-practice.zip 上传到这里，这一格会解压它。\n",
        "# Makes `from practice import check` work: finds the kit (the folder practice/ that holds\n"
        "# kit.json) here or above and puts it on sys.path; nothing is installed. In Colab: first\n"
        "# upload the kit downloaded from the site (llm-judge-practice.zip); this cell unpacks it.\n",
    )
    missing = tr(
        lang,
        "没找到练习包 practice/：请把下载的 llm-judge-practice.zip 放在这里，"
        "或从 practice/notebooks/ 打开这个 notebook",
        "no kit (practice/) found: put the downloaded llm-judge-practice.zip here, "
        "or open this notebook from practice/notebooks/",
    )
    return comment + SETUP.format(missing=missing, lang=lang)


def exercise_markdown(item: Exercise, lang: str) -> str:
    full = tr(lang, "完整的题目说明", "The whole statement")
    parts = [f"## {item.problem_id} · {item.title.get(lang)}", item.lead.get(lang), item.task.get(lang)]
    parts.append(f"*{full}: `{item.statement_files.get(lang)}`*")
    return "\n\n".join(p for p in parts if p.strip())


def check_code(item: Exercise, lang: str) -> str:
    names = ", ".join(item.entry_points)
    comment = tr(
        lang,
        f"# 用公开用例评测上面定义的 {names}",
        f"# judges the {names} defined above on the public cases",
    )
    return f"{comment}\ncheck({item.problem_id}, globals())\n"


# ----------------------------------------------------------------------------- the notebook


def _lines(text: str) -> list[str]:
    """A cell's source as nbformat keeps it on disk: its lines, each but the last with its \\n."""
    text = text.rstrip("\n")
    return text.splitlines(keepends=True)


def _markdown(cell_id: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _lines(text)}


def _code(cell_id: str, text: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id,
        "metadata": {},
        "outputs": [],
        "source": _lines(text),
    }


def notebook(book: ChapterNotebook, lang: str) -> dict[str, Any]:
    """The notebook of a chapter in one language, as nbformat v4 JSON."""
    cells = [_markdown("intro", intro(book, lang)), _code("setup", setup_code(lang))]
    for item in book.exercises:
        pid = item.problem_id
        cells += [
            _markdown(f"p{pid}-statement", exercise_markdown(item, lang)),
            _code(f"p{pid}-code", item.starter.get(lang)),
            _code(f"p{pid}-check", check_code(item, lang)),
        ]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
    }


def write_notebooks(root: Path, problems: list[Problem], learner_file: LearnerFile) -> list[Path]:
    """Write each chapter's notebooks into `root/notebooks/` (root: the kit's practice/). A notebook
    that is there already is the learner's, as their qwen/*.py are: it is never overwritten.
    `learner_file` is judge.authoring.kit's, passed in (the kit imports this module)."""
    folder = root / NOTEBOOKS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for book in chapter_notebooks(problems, learner_file):
        for lang in LANGUAGES:
            path = folder / book.file_name(lang)
            if not path.exists():
                text = json.dumps(notebook(book, lang), ensure_ascii=False, indent=1)
                path.write_text(text + "\n", encoding="utf-8")
            written.append(path)
    return written
