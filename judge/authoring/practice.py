#!/usr/bin/env python3
"""The practice kit's judge: `python practice/judge.py [ID] [--all] [--submit] [--pull]`.

`judge kit` copies this file to practice/judge.py, next to `_judge/` (copies of the server's
own runner, checkers and grading) and one folder per problem. It needs Python 3.10+ and torch,
nothing else. Local judging runs the public cases against the reference's recorded outputs and
prints the same table, messages and hints as `judge run --cases public`; `--submit` hands the
solution to the server for the official verdict and score; `--pull` fetches the learner's latest
accepted code of each problem from the server, asking before it replaces a file they changed.

Everything it prints is in one language, like the site: Chinese unless `--lang en`, JUDGE_LANG or
an English locale says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # the kit's _judge/ is put on sys.path in main(); these are for mypy
    from judge.core.backend import Backend
    from judge.core.casekit import Case
    from judge.core.interfaces import Which
    from judge.core.report import Report
    from judge.core.results import Expected
    from judge.core.runner.job import PartSource

KIT_ENV = "JUDGE_KIT"
HOME_FILE = "kit_home.txt"  # written by the kit's setup.py when pip installs it


def kit_home() -> Path:
    """The kit folder whose files are judged: JUDGE_KIT when set; for an installed kit (`pip
    install ./practice`) the folder it was installed from, as recorded then, while it is still
    there, so the learner's edits of practice/qwen/*.py are what is judged; else this file's
    folder (the kit itself, or an editable install of it)."""
    here = Path(__file__).resolve().parent
    named = os.environ.get(KIT_ENV, "").strip()
    if named:
        return Path(named).expanduser().resolve()
    recorded = here / HOME_FILE
    if recorded.is_file():
        folder = Path(recorded.read_text(encoding="utf-8").strip())
        if (folder / "kit.json").is_file():
            return folder
    return here


KIT = kit_home()
LIBRARY = KIT / "_judge"
STATUS_FILE = KIT / ".status.json"
TOKEN_FILE = Path.home() / ".config" / "llm-judge" / "token"
STARTUP_S = 60.0  # a cold `import torch` on a laptop can be slow
POLL_S = 0.5
WAIT_S = 300.0
LANG_ENV = "JUDGE_LANG"
LANGUAGES = ("zh", "en")
LANG = "zh"  # what this run prints in: set once by main() (choose_language)


def tr(zh: str, en: str) -> str:
    """The text in this run's language: one language on screen, like the site."""
    return en if LANG == "en" else zh


def choose_language(argv: list[str]) -> str:
    """`--lang` first, then JUDGE_LANG, then the locale (LC_ALL, LC_MESSAGES, LANG: en_US.UTF-8
    reads English, zh_CN.UTF-8 Chinese); Chinese, the site's default, when none says either."""
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv) and argv[i + 1] in LANGUAGES:
            return argv[i + 1]
        if arg.startswith("--lang=") and arg[7:] in LANGUAGES:
            return arg[7:]
    named = os.environ.get(LANG_ENV, "").strip().lower()
    if named in LANGUAGES:
        return named
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:  # the first one set decides, as for any program's messages
            return value[:2].lower() if value[:2].lower() in LANGUAGES else "zh"
    return "zh"


# argparse's own words (headings, its errors), in Chinese when the kit speaks Chinese.
ARGPARSE_ZH = {
    "usage: ": "用法：",
    "positional arguments": "位置参数",
    "options": "选项",
    "optional arguments": "选项",
    "show this help message and exit": "显示这段帮助并退出",
    "%(prog)s: error: %(message)s\n": "%(prog)s：错误：%(message)s\n",
    "unrecognized arguments: %s": "无法识别的参数：%s",
    "argument %(argument_name)s: %(message)s": "参数 %(argument_name)s：%(message)s",
    "invalid choice: %(value)r (choose from %(choices)s)": "无效的选项 %(value)r（可选：%(choices)s）",
    "expected one argument": "需要一个值",
}


def speak_argparse(lang: str) -> None:
    """argparse looks its words up through its module's `_` at each use."""
    if lang == "zh":
        setattr(argparse, "_", lambda text: ARGPARSE_ZH.get(text, text))  # noqa: B010 - a private name


class KitError(Exception):
    """Something the learner can fix, said plainly; exit status 2."""


# ----------------------------------------------------------------------------- the problems


@dataclass
class Limits:
    time_s: float
    memory_mb: int
    output_kb: int


@dataclass
class Spec:
    """The parts of problem.toml the judge's modules read (judge.authoring.package needs pydantic)."""

    entry_points: list[str]
    forbidden: list[str]
    limits: Limits


class KitProblem:
    """A problem of the kit, as judge.core.interfaces.JudgedProblem asks (the package model
    needs pydantic)."""

    def __init__(self, folder: Path) -> None:
        self.root = folder
        self.meta: dict[str, Any] = json.loads((folder / "problem.json").read_text(encoding="utf-8"))
        self.id: str = self.meta["id"]
        self.version: str = self.meta["version"]
        limits = self.meta["limits"]
        self.spec = Spec(
            list(self.meta["entry_points"]),
            list(self.meta["forbidden"]),
            Limits(float(limits["time_s"]), int(limits["memory_mb"]), int(limits["output_kb"])),
        )

    def title(self, lang: str = "zh") -> str:
        return str(self.meta["title"].get(lang) or self.meta["title"]["zh"])

    def read(self, name: str) -> str:
        return (self.root / name).read_text(encoding="utf-8")

    @cached_property
    def cases(self) -> list[Case]:
        from judge.core.casekit import collect_cases

        spec = importlib.util.spec_from_file_location(f"kit_cases_{self.id}", self.root / "cases.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return collect_cases(module)

    def select_cases(self, which: Which) -> list[Case]:
        return list(self.cases)  # the kit holds public cases only

    def data(self) -> dict[str, bytes]:
        return {rel: (self.root / rel).read_bytes() for rel in self.meta.get("data", [])}

    @property
    def solution(self) -> Path:
        """The learner's file: its module in the course package (practice/qwen/norm.py for 204),
        so that their solutions together form the `qwen/` package the course builds."""
        module = self.meta.get("module")
        return module_file(module) if module else self.root / "solution.py"

    def edited(self) -> bool:
        starter = (self.root / "starter.py").read_bytes()
        return self.solution.is_file() and self.solution.read_bytes() != starter

    def parts(self) -> list[PartSource]:
        """The parts a solution may import: the learner's local files. One not written yet (absent,
        or still the starter) is missing, and importing it says which problem to solve first."""
        from judge.core.runner.job import PartSource

        found = []
        for entry in self.meta.get("parts", []):
            part = KitProblem(KIT / entry["folder"])
            source = part.solution.read_text(encoding="utf-8") if part.edited() else None
            found.append(
                PartSource(entry["problem"], entry["module"], source, "learner" if source else "missing")
            )
        return found


def module_file(module: str) -> Path:
    return KIT.joinpath(*module.split(".")).with_suffix(".py")


class KitStore:
    """The reference's and the known mistakes' outputs, as recorded when the kit was made
    (a judge.core.interfaces.ExpectedSource of the kit's problems)."""

    def at_hand(self, problem: KitProblem, backend: Backend) -> Expected | None:
        # Read now (milliseconds), not in a thread beside the run: the runner is forked from
        # this process, which must then have no other thread (judge.core.forked).
        return self.get(problem, backend)

    def get(self, problem: KitProblem, backend: Backend) -> Expected:
        from judge.core.execution import case_run
        from judge.core.frames import CaseOutcome
        from judge.core.protocol import StreamLimits, parse_safetensors
        from judge.core.results import Expected, SolutionRun
        from judge.core.texts import Text

        data = json.loads(problem.read("expected.json"))
        blob = (problem.root / "expected.safetensors").read_bytes()
        # The kit's own data, written by `judge kit`: sized by the problem, not by a learner.
        limits = StreamLimits(
            max_head_bytes=1 << 30,
            max_tensors_per_frame=1 << 20,
            max_elements_per_frame=1 << 40,
            max_elements_total=1 << 40,
        )
        tensors, _ = parse_safetensors(blob, limits)
        runs = []
        for index, solution in enumerate(data["solutions"]):
            run = SolutionRun(load_status="ok")
            for name, head in solution["cases"].items():
                prefix = f"{index}/{name}/"
                own = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
                run.cases[name] = case_run(CaseOutcome.parse(head), own)
            runs.append(run)
        # The reference first, then the known mistakes with their hints, each language apart, as
        # `judge kit` recorded them (judge.authoring.kit).
        wrong = [(s["name"], Text.from_dict(s["hint"])) for s in data["solutions"][1:]]
        return Expected.from_runs(runs, wrong)


def load_kit() -> dict[str, Any]:
    try:
        kit: dict[str, Any] = json.loads((KIT / "kit.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KitError(
            tr(
                f"{KIT} 不是练习包（没有 kit.json）：请运行练习包里的 judge.py",
                f"{KIT} is not a practice kit (no kit.json): run judge.py from the kit",
            )
        ) from None
    return kit


def find(kit: dict[str, Any], wanted: str) -> KitProblem:
    return KitProblem(KIT / find_entry(kit, wanted)["folder"])


def find_entry(kit: dict[str, Any], wanted: str) -> dict[str, Any]:
    for entry in kit["problems"]:
        if wanted in (entry["id"], entry["folder"]) or entry["folder"].startswith(f"{wanted}-"):
            found: dict[str, Any] = entry
            return found
    ids = ", ".join(e["id"] for e in kit["problems"])
    raise KitError(
        tr(f"练习包里没有题目 {wanted!r}（有：{ids}）", f"no problem {wanted!r} in this kit (it has {ids})")
    )


# ----------------------------------------------------------------------------- judging here


def read_solution(problem: KitProblem) -> str:
    """The learner's file for `problem`, or a KitError that names it."""
    try:
        return problem.solution.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KitError(
            tr(f"读不了 {problem.solution}：{exc}", f"cannot read {problem.solution}: {exc}")
        ) from exc


def judge_here(problem: KitProblem, lang: str, as_json: bool = False) -> bool:
    source = read_solution(problem)
    # The report's modules after the runner's child is forked (judge_report): they are this
    # process's alone, and load while the child prepares.
    report = judge_report(problem, source, display_path(problem.solution))
    from judge.core.report import render_table
    from judge.core.verdicts import Verdict

    if as_json:
        print(report.to_json(lang))
    else:
        where = problem.solution.relative_to(KIT.parent)
        print(render_table(report, f"{problem.id} {problem.title(lang)} ({where})", lang))
    record_status(problem, str(report.verdict), report.score, report.max_score)
    return bool(report.verdict == Verdict.AC)


def judge_report(problem: KitProblem, source: str, shown_as: str, fork: bool = True) -> Report:
    """`source` judged on the public cases as `judge run --cases public` does (in a runner process
    of its own: a crash or sys.exit of the learner's code ends that process, not this one), its
    tracebacks naming the learner's file as `shown_as`. `fork`: that process is forked from this
    one, which has torch loaded already (judge.core.forked; where forking is safe), else new."""
    # torch without numpy (all the kit needs) warns about it; nothing here uses numpy.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    try:
        import torch  # noqa: F401 - a clear message beats a traceback from deep inside
    except ImportError:
        raise KitError(
            tr("需要 torch：pip install torch", "torch is not installed: pip install torch")
        ) from None
    backend = kit_backend(fork)
    # The first child prepares itself now, beside the judge's imports and the reading below.
    backend.warm_up()
    from judge.core.grading import judge_source

    parts = problem.parts()
    report = judge_source(problem, source, backend, KitStore(), "public", STARTUP_S, parts)
    name_learner_files(report, shown_as, parts)
    return report


_BACKENDS: dict[bool, Backend] = {}


def kit_backend(fork: bool) -> Backend:
    """The local backend, one per process (a forked one prepares this process once for all the
    problems of `--all`)."""
    if fork not in _BACKENDS:
        from judge.core.execution import RUNNER
        from judge.core.forked import local_backend

        _BACKENDS[fork] = local_backend(LIBRARY, RUNNER, fork=fork)
    return _BACKENDS[fork]


def single_threaded_libraries() -> None:
    """One thread for torch's and numpy's math libraries, as the runner has (judge.core.local's
    environment), set before torch loads: their thread pools would make this process unfit to
    fork the runner from (judge.core.forked)."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"


def name_learner_files(report: Any, shown_as: str, parts: list[PartSource]) -> None:
    """Tracebacks name the learner's real files, as they open them (practice/qwen/norm.py,
    line 15), not the names the runner gives them (solution.py, qwen/norm.py)."""
    from judge.core.runner.job import LEARNER_FILE
    from judge.core.texts import Text

    real = {LEARNER_FILE: shown_as}
    for part in parts:
        if part.origin == "learner":
            real[part.filename] = display_path(module_file(part.module))
    quoted = {f'File "{name}"': f'File "{path}"' for name, path in real.items()}

    def fix(text: str) -> str:
        for old, new in quoted.items():
            text = text.replace(old, new)
        return text

    for case in report.cases:
        case.message = Text(fix(case.message.zh), fix(case.message.en))


def display_path(path: Path) -> str:
    """A kit file as the learner names it: practice/qwen/norm.py."""
    return path.relative_to(KIT.parent).as_posix()


def read_status() -> dict[str, Any]:
    try:
        status: dict[str, Any] = json.loads(STATUS_FILE.read_text(encoding="utf-8"))
        return status
    except (OSError, ValueError):
        return {}


def record_status(problem: KitProblem, verdict: str, score: int, max_score: int) -> None:
    status = read_status()
    status[problem.id] = {
        "verdict": verdict,
        "score": score,
        "max_score": max_score,
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),  # noqa: UP017 - Python 3.10
    }
    STATUS_FILE.write_text(json.dumps(status, indent=1), encoding="utf-8")


def list_problems(kit: dict[str, Any], lang: str) -> None:
    status = read_status()
    heads = (tr("本地结果", "local"), tr("题目", "problem"), tr("你的文件", "your file"))
    print(f"{'id':<5} {pad(heads[0], 16)} {pad(heads[1], 50)} {heads[2]}")
    for entry in kit["problems"]:
        problem = KitProblem(KIT / entry["folder"])
        seen = status.get(problem.id)
        result = f"{seen['verdict']} {seen['score']}/{seen['max_score']}" if seen else "—"
        mark = tr("已修改", "edited") if problem.edited() else tr("初始代码", "starter")
        where = problem.solution.relative_to(KIT).as_posix()
        print(f"{problem.id:<5} {pad(result, 16)} {pad(problem.title(lang)[:48], 50)} {where:<28} {mark}")
    script = Path(sys.argv[0]).as_posix()
    if Path(script).name == "__main__.py":  # python -m practice
        script = "-m practice"
    print(
        tr(
            f"\npython {script} ID  用公开用例评测一题",
            f"\npython {script} ID  judges one problem on its public cases",
        )
    )


def pad(text: str, width: int) -> str:
    """`text` padded to `width` columns on a terminal (a Chinese character takes two)."""
    wide = sum(1 for ch in text if ord(ch) >= 0x1100 and not 0xD7A4 <= ord(ch) <= 0xF8FF)
    return text + " " * max(0, width - len(text) - wide)


# ----------------------------------------------------------------------------- the server


def read_token(explicit: str | None) -> str:
    token = explicit or os.environ.get("JUDGE_TOKEN", "").strip()
    if not token and TOKEN_FILE.exists():
        lines = TOKEN_FILE.read_text(encoding="utf-8").split()
        token = lines[0] if lines else ""
    if not token:
        raise KitError(
            tr(
                f"没有令牌：在网站的“设置”页创建一个，放进环境变量 JUDGE_TOKEN 或文件 {TOKEN_FILE}",
                "no API token: create one on the site's Settings page, then put it in JUDGE_TOKEN "
                f"or in {TOKEN_FILE}",
            )
        )
    return token


def call(server: str, method: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        server + path,
        data=data,
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Language": LANG,  # the server's own messages in the language the kit prints
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            error = json.loads(exc.read()).get("error", {})
        except ValueError:
            error = {}
        message = error.get("message") or exc.reason
        if exc.code == 401:
            raise KitError(
                tr(
                    f"服务器拒绝了令牌（错误、已撤销或已过期）：{message}。请在 {server}/settings 创建新令牌",
                    f"the server refused your token (wrong, revoked or expired): {message}. "
                    f"Create a new one at {server}/settings",
                )
            ) from None
        if exc.code == 429:
            wait = exc.headers.get("Retry-After", "?")
            raise KitError(
                tr(f"提交太频繁：请 {wait} 秒后再试", f"too many submissions: try again in {wait} s")
            ) from None
        raise KitError(
            tr(f"{server} 回答 {exc.code}：{message}", f"{server} answered {exc.code}: {message}")
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise KitError(
            tr(
                f"连不上服务器 {server}（{reason}）：你离线了吗？本地评测照样可用。",
                f"cannot reach {server} ({reason}): are you offline? Local judging still works.",
            )
        ) from None


def submit(
    problem: KitProblem, server: str, token: str, lang: str, code: str | None = None, table: bool = True
) -> Report:
    """`code` (else the learner's file) judged by the server: the official verdict and score,
    printed as a table unless `table` is False (a notebook shows the returned report itself)."""
    from judge.core.report import CaseResult, Report, render_table
    from judge.core.texts import same
    from judge.core.verdicts import Verdict

    online = call(server, "GET", f"/api/problems/{problem.id}", token)
    if online.get("version") != problem.version:
        kit_v, server_v = problem.version[:12], str(online.get("version"))[:12]
        raise KitError(
            tr(
                f"练习包过期：第 {problem.id} 题比服务器上的旧（练习包 {kit_v}，服务器 {server_v}）。"
                f"请从 {server}/kit.zip 下载新的练习包（解压到旧的上面时，你自己的文件 qwen/*.py 会保留）",
                f"this kit's problem {problem.id} is older than the server's "
                f"(kit {kit_v}, server {server_v}): download a new kit from {server}/kit.zip "
                "(your own files, qwen/*.py, are kept when you unpack it over the old one)",
            )
        )
    if code is None:
        code = problem.solution.read_text(encoding="utf-8")
    started = time.monotonic()
    accepted = call(
        server, "POST", "/api/submissions", token, {"problem_id": problem.id, "code": code, "mode": "submit"}
    )
    print(
        tr(
            f"已提交到 {server}，编号 #{accepted['id']}；评测中…",
            f"submitted as #{accepted['id']} to {server}; judging…",
        ),
        flush=True,
    )
    deadline = time.monotonic() + WAIT_S
    wait = ""
    while True:
        asked = time.monotonic()
        # After the first read, the server holds the request until the status changes; its
        # messages come in the language the kit prints.
        sub = call(server, "GET", f"/api/submissions/{accepted['id']}?lang={lang}{wait}", token)
        if sub["status"] == "done":
            break
        if time.monotonic() > deadline:
            raise KitError(
                tr(
                    f"{WAIT_S:.0f} 秒后仍没有结果；请看 {server}/submissions/{accepted['id']}",
                    f"no verdict after {WAIT_S:.0f} s; see {server}/submissions/{accepted['id']}",
                )
            )
        if wait and time.monotonic() - asked < POLL_S:
            time.sleep(POLL_S)  # answered at once with nothing new: a server that does not wait
        wait = "&wait=20"
    report = Report(
        problem=problem.id,
        verdict=Verdict(sub["verdict"]),
        score=int(sub["score"]),
        max_score=int(sub["max_score"]),
        backend="server",
        time_ms=float(sub.get("time_ms") or 0.0),
        elapsed_ms=round((time.monotonic() - started) * 1000, 1),  # submit to verdict, seen from here
        cases=[
            CaseResult(
                c["name"],
                c["public"],
                Verdict(c["verdict"]),
                c["score"],
                c["max_score"],
                c["time_ms"],
                same(c.get("message") or ""),
                same(c.get("hint") or ""),
                description=same(c.get("description") or ""),
                ran=bool(c.get("ran", True)),
            )
            for c in sub["cases"]
        ],
    )
    official = tr("正式评测", "official verdict")
    if table:
        print(render_table(report, f"{problem.id} {problem.title(lang)} · {official}", lang))
    print(f"\n{tr('得分', 'score')} {sub['score']}/{sub['max_score']} · {server}/submissions/{sub['id']}")
    return report


def latest_accepted(server: str, token: str, problem_id: str) -> dict[str, Any] | None:
    """The learner's latest accepted Submit of a problem on the server, code included (None
    when they have none among their latest 200 submissions of it)."""
    listed = call(server, "GET", f"/api/submissions?problem_id={problem_id}&limit=200", token)
    for sub in listed:  # newest first
        if sub.get("mode") == "submit" and sub.get("verdict") == "AC":
            found: dict[str, Any] = call(server, "GET", f"/api/submissions/{sub['id']}", token)
            return found
    return None


def pull(kit: dict[str, Any], wanted: str | None, server: str, token: str, force: bool) -> int:
    """Write the learner's latest accepted code of each problem (or of `wanted`) into its file.
    A file they changed is replaced only with --force or their yes on a terminal; otherwise it is
    kept and they are told. Returns how many files were kept that way."""
    entries = [find_entry(kit, wanted)] if wanted else kit["problems"]
    kept = 0
    for entry in entries:
        problem = KitProblem(KIT / entry["folder"])
        where = display_path(problem.solution)
        sub = latest_accepted(server, token, problem.id)
        if sub is None:
            print(
                tr(
                    f"{problem.id}：服务器上还没有你通过的提交，{where} 不变",
                    f"{problem.id}: no accepted submission of yours on the server; {where} unchanged",
                )
            )
            continue
        code = str(sub["code"])
        mine = problem.solution.read_text(encoding="utf-8") if problem.solution.is_file() else None
        if mine == code:
            print(
                tr(
                    f"{problem.id}：{where} 已是你通过的代码（#{sub['id']}）",
                    f"{problem.id}: {where} already holds your accepted code (#{sub['id']})",
                )
            )
            continue
        if mine is not None and problem.edited() and not force and not confirm(problem.id, where, sub["id"]):
            kept += 1
            print(
                tr(
                    f"{problem.id}：保留了你本地改过的 {where}（没有覆盖；要用服务器上的代码，加 --force）",
                    f"{problem.id}: kept your changed {where} (not overwritten; "
                    "--force takes the server's code)",
                )
            )
            continue
        problem.solution.parent.mkdir(parents=True, exist_ok=True)
        problem.solution.write_text(code, encoding="utf-8")
        print(
            tr(
                f"{problem.id}：{where} ← 你通过的提交 #{sub['id']}",
                f"{problem.id}: {where} ← your accepted submission #{sub['id']}",
            )
        )
    return kept


def confirm(problem_id: str, where: str, submission: object) -> bool:
    """Ask on a terminal whether to replace a changed file; never without one (a script, a pipe)."""
    if not sys.stdin.isatty():
        return False
    question = tr(
        f"{problem_id}：{where} 和你通过的提交 #{submission} 不同，用服务器上的代码覆盖它？[y/N] ",
        f"{problem_id}: {where} differs from your accepted submission #{submission}; overwrite it? [y/N] ",
    )
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes", "是")


# ----------------------------------------------------------------------------- in a notebook


def use_library() -> None:
    """The kit's copies of the judge's modules come first on sys.path (once)."""
    if str(LIBRARY) not in sys.path:
        sys.path.insert(0, str(LIBRARY))


def notebook_language(lang: str | None) -> str:
    """`lang=` first, then JUDGE_LANG, then the locale, as on the command line."""
    global LANG
    LANG = lang if lang in LANGUAGES else choose_language([])
    return LANG


def api_module() -> Any:
    """practice_api.py beside this file (in the kit: practice/practice_api.py), by its path: the
    same file is judge/authoring/practice_api.py in the judge's own tree."""
    spec = importlib.util.spec_from_file_location("practice_api", Path(__file__).with_name("practice_api.py"))
    assert spec and spec.loader
    module = sys.modules.get("practice_api")
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["practice_api"] = module
        spec.loader.exec_module(module)
    return module


def notebook_solution(
    problem: KitProblem, namespace: Mapping[str, object] | None, objects: dict[str, object]
) -> tuple[str, str] | None:
    """(source, how tracebacks name it) built from notebook objects, or None: the learner's file.
    With a namespace (globals()), the problem's entry points are taken from it."""
    if namespace is None and not objects:
        return None
    if namespace is not None:
        objects = {**{n: namespace[n] for n in problem.spec.entry_points if n in namespace}, **objects}
    # All of them from the notebook: the solution is one module.
    missing = [n for n in problem.spec.entry_points if n not in objects]
    if missing:
        names = ", ".join(missing)
        raise KitError(
            tr(
                f"第 {problem.id} 题需要 {names}，但 notebook 里还没有定义",
                f"problem {problem.id} needs {names}, which the notebook has not defined",
            )
        )
    unknown = [n for n in objects if n not in problem.spec.entry_points]
    if unknown:
        wanted = ", ".join(problem.spec.entry_points)
        raise KitError(
            tr(
                f"第 {problem.id} 题不用 {', '.join(unknown)}（它要的是 {wanted}）",
                f"problem {problem.id} does not use {', '.join(unknown)} (it needs {wanted})",
            )
        )
    api = api_module()
    try:
        return api.notebook_source(objects), "notebook"
    except api.CellError as exc:
        raise KitError(tr(exc.zh, exc.en)) from None


def check(
    problem_id: str | int,
    namespace: Mapping[str, object] | None = None,
    *,
    lang: str | None = None,
    **objects: object,
) -> Any:
    """Judge a problem on its public cases, as `python practice/judge.py ID` does: the learner's
    file, or the classes and functions given (`check(204, globals())`, `check(204, RMSNorm=...)`)
    from the notebook cells that defined them. Returns a result that Jupyter shows as HTML."""
    lang = notebook_language(lang)
    use_library()
    problem = find(load_kit(), str(problem_id))
    built = notebook_solution(problem, namespace, dict(objects))
    if built is None:
        source = read_solution(problem)
        # A new runner process, never a fork of the notebook's kernel: it has threads, and the
        # learner's own objects and changes to torch, none of which the site's judge has.
        report = judge_report(problem, source, display_path(problem.solution), fork=False)
        record_status(problem, str(report.verdict), report.score, report.max_score)
        where = display_path(problem.solution)
    else:
        source, where = built
        report = judge_report(problem, source, where, fork=False)
    return api_module().CheckResult(report, f"{problem.id} {problem.title(lang)} ({where})", lang)


def submit_solution(
    problem_id: str | int,
    namespace: Mapping[str, object] | None = None,
    *,
    lang: str | None = None,
    server: str | None = None,
    token: str | None = None,
    **objects: object,
) -> Any:
    """Send the same source as check() would judge to the server, with the token, as `--submit`
    does; the official result, shown as HTML in Jupyter."""
    lang = notebook_language(lang)
    use_library()
    kit = load_kit()
    problem = find(kit, str(problem_id))
    built = notebook_solution(problem, namespace, dict(objects))
    address = (server or kit["server"]).rstrip("/")
    report = submit(problem, address, read_token(token), lang, built[0] if built else None, table=False)
    official = tr("正式评测", "official verdict")
    return api_module().CheckResult(report, f"{problem.id} {problem.title(lang)} · {official}", lang)


# ----------------------------------------------------------------------------- the command


def main(argv: list[str] | None = None) -> int:
    global LANG
    args_in = sys.argv[1:] if argv is None else argv
    LANG = choose_language(args_in)
    if sys.version_info < (3, 10):  # noqa: UP036 - the kit runs on learners' Pythons, not ours
        print(
            tr("练习包需要 Python 3.10 或更新的版本", "the kit needs Python 3.10 or newer"), file=sys.stderr
        )
        return 2
    use_library()
    single_threaded_libraries()
    speak_argparse(LANG)
    parser = argparse.ArgumentParser(
        prog="judge.py",
        description=tr("练习包：在本地评测你的代码", "the practice kit: judge your solutions offline"),
    )
    parser.add_argument(
        "problem",
        nargs="?",
        help=tr("题号，如 204（不写：列出题目）", "problem id, e.g. 204 (none: list the problems)"),
    )
    parser.add_argument("--all", action="store_true", help=tr("评测全部题目", "judge every problem"))
    parser.add_argument(
        "--submit",
        action="store_true",
        help=tr("交给服务器正式评测、记分", "send the solution to the server for the official score"),
    )
    parser.add_argument(
        "--pull",
        action="store_true",
        help=tr(
            "从服务器取回你每题（或指定题）最近一次通过的代码",
            "fetch your latest accepted code of each problem (or of the one named) from the server",
        ),
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=tr(
            "--pull 时不问，直接覆盖你改过的文件", "with --pull: overwrite files you changed without asking"
        ),
    )
    parser.add_argument(
        "--server",
        help=tr(
            "服务器地址（默认：练习包来自的服务器）", "the server's URL (default: the one this kit came from)"
        ),
    )
    parser.add_argument(
        "--token",
        help=tr(
            "API 令牌（默认：JUDGE_TOKEN，其次 ~/.config/llm-judge/token）",
            "an API token (default: JUDGE_TOKEN, then ~/.config/llm-judge/token)",
        ),
    )
    parser.add_argument(
        "--lang",
        choices=list(LANGUAGES),
        default=LANG,
        help=tr(
            f"输出的语言（也可用环境变量 {LANG_ENV}）",
            f"the language of what is printed (or the {LANG_ENV} variable)",
        ),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help=tr("输出 JSON 报告而不是表格", "print the JSON report instead of the table"),
    )
    args = parser.parse_args(argv)
    try:
        kit = load_kit()
        server = (args.server or kit["server"]).rstrip("/")
        if args.pull:
            pull(kit, args.problem, server, read_token(args.token), args.force)
            return 0
        if args.submit:
            if not args.problem:
                raise KitError(
                    tr(
                        "--submit 需要题号，例如 judge.py 204 --submit",
                        "--submit needs a problem id, e.g. judge.py 204 --submit",
                    )
                )
            official = submit(find(kit, args.problem), server, read_token(args.token), args.lang)
            return 0 if str(official.verdict) == "AC" else 1
        if args.all:
            results = [
                judge_here(KitProblem(KIT / e["folder"]), args.lang, args.json) for e in kit["problems"]
            ]
            return 0 if all(results) else 1
        if args.problem:
            return 0 if judge_here(find(kit, args.problem), args.lang, args.json) else 1
        list_problems(kit, args.lang)
        return 0
    except KitError as exc:
        print(f"{tr('错误', 'error')}: {exc}", file=sys.stderr)
        return 2


def exit_now(code: int) -> NoReturn:
    """Leave once everything is printed, without the interpreter's shutdown: with torch loaded it
    tears down thousands of modules and objects, which took longer than judging (0.3-0.8 s
    here). Nothing is left to write: the status file is closed, the streams are flushed here, and
    a runner child still waiting for a job leaves when this process's end of its pipe closes."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
