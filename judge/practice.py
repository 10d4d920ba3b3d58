#!/usr/bin/env python3
"""The practice kit's judge: `python practice/judge.py [ID] [--all] [--submit]`.

`judge kit` copies this file to practice/judge.py, next to `_judge/` (copies of the server's
own runner, checkers and grading) and one folder per problem. It needs Python 3.10+ and torch,
nothing else. Local judging runs the public cases against the reference's recorded outputs and
prints the same table, messages and hints as `judge run --cases public`; `--submit` hands the
solution to the server for the official verdict and score.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the kit's _judge/ is put on sys.path in main(); these are for mypy
    from judge.casekit import Case
    from judge.expected import Expected
    from judge.interfaces import Which
    from judge.runner.job import PartSource
    from sandbox.backend import Backend

KIT = Path(__file__).resolve().parent
LIBRARY = KIT / "_judge"
STATUS_FILE = KIT / ".status.json"
TOKEN_FILE = Path.home() / ".config" / "llm-judge" / "token"
STARTUP_S = 60.0  # a cold `import torch` on a laptop can be slow
POLL_S = 0.5
WAIT_S = 300.0


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
    """The parts of problem.toml the judge's modules read (judge.package needs pydantic)."""

    entry_points: list[str]
    forbidden: list[str]
    limits: Limits


class KitProblem:
    """A problem of the kit, as judge.interfaces.JudgedProblem asks (judge.package needs pydantic)."""

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
        from judge.casekit import collect_cases

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
        from judge.runner.job import PartSource

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
    (a judge.interfaces.ExpectedSource of the kit's problems)."""

    def at_hand(self, problem: KitProblem, backend: Backend) -> Expected | None:
        return None  # read from the kit's files by `get`, beside the run

    def get(self, problem: KitProblem, backend: Backend) -> Expected:
        from judge.execution import SolutionRun, case_run
        from judge.expected import Expected, WrongSolution
        from judge.protocol import StreamLimits, parse_safetensors

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
                run.cases[name] = case_run(head, own)
            runs.append((solution["name"], solution["hint"], run))
        wrong = [WrongSolution(name, hint, run) for name, hint, run in runs[1:]]
        return Expected(runs[0][2], wrong)


def load_kit() -> dict[str, Any]:
    try:
        kit: dict[str, Any] = json.loads((KIT / "kit.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KitError(f"{KIT} is not a practice kit (no kit.json): run judge.py from the kit") from None
    return kit


def find(kit: dict[str, Any], wanted: str) -> KitProblem:
    for entry in kit["problems"]:
        if wanted in (entry["id"], entry["folder"]) or entry["folder"].startswith(f"{wanted}-"):
            return KitProblem(KIT / entry["folder"])
    ids = ", ".join(e["id"] for e in kit["problems"])
    raise KitError(f"没有题目 no problem {wanted!r} in this kit (it has {ids})")


# ----------------------------------------------------------------------------- judging here


def judge_here(problem: KitProblem, lang: str, as_json: bool = False) -> bool:
    # torch without numpy (all the kit needs) warns about it; nothing here uses numpy.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    try:
        import torch  # noqa: F401 - a clear message beats a traceback from deep inside
    except ImportError:
        raise KitError("需要 torch / torch is not installed: pip install torch") from None
    from judge.execution import RUNNER
    from judge.grading import judge_source
    from judge.report import render_table
    from judge.verdicts import Verdict
    from sandbox.local import LocalBackend

    try:
        source = problem.solution.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KitError(f"cannot read {problem.solution}: {exc}") from exc
    backend = LocalBackend(code_root=LIBRARY, runner=RUNNER)
    report = judge_source(problem, source, backend, KitStore(), "public", STARTUP_S, problem.parts())
    if as_json:
        print(report.to_json(lang))
    else:
        where = problem.solution.relative_to(KIT.parent)
        print(render_table(report, f"{problem.id} {problem.title(lang)} ({where})", lang))
    record_status(problem, str(report.verdict), report.score, report.max_score)
    return bool(report.verdict == Verdict.AC)


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
    print(f"{'id':<5} {'本地结果 local':<16} {'题目 problem':<50} {'你的文件 your file':<28}")
    for entry in kit["problems"]:
        problem = KitProblem(KIT / entry["folder"])
        seen = status.get(problem.id)
        result = f"{seen['verdict']} {seen['score']}/{seen['max_score']}" if seen else "—"
        mark = "已修改 edited" if problem.edited() else "初始 starter"
        where = problem.solution.relative_to(KIT).as_posix()
        print(f"{problem.id:<5} {result:<16} {problem.title(lang)[:48]:<50} {where:<28} {mark}")
    print(f"\npython {Path(sys.argv[0]).as_posix()} ID  评测一题 judges one problem on its public cases")


# ----------------------------------------------------------------------------- the server


def read_token(explicit: str | None) -> str:
    token = explicit or os.environ.get("JUDGE_TOKEN", "").strip()
    if not token and TOKEN_FILE.exists():
        lines = TOKEN_FILE.read_text(encoding="utf-8").split()
        token = lines[0] if lines else ""
    if not token:
        raise KitError(
            "没有令牌 no API token: create one on the site's Settings page, then put it in JUDGE_TOKEN "
            f"or in {TOKEN_FILE}"
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
                f"服务器拒绝了令牌 the server refused your token (wrong, revoked or expired): {message}. "
                f"Create a new one at {server}/settings"
            ) from None
        if exc.code == 429:
            wait = exc.headers.get("Retry-After", "?")
            raise KitError(f"提交太频繁 too many submissions: try again in {wait} s") from None
        raise KitError(f"{server} answered {exc.code}: {message}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise KitError(
            f"连不上服务器 cannot reach {server} ({reason}): are you offline? Local judging still works."
        ) from None


def submit(problem: KitProblem, server: str, token: str, lang: str) -> bool:
    from judge.report import CaseResult, Report, render_table
    from judge.texts import same
    from judge.verdicts import Verdict

    online = call(server, "GET", f"/api/problems/{problem.id}", token)
    if online.get("version") != problem.version:
        raise KitError(
            f"练习包过期 this kit's problem {problem.id} is older than the server's "
            f"(kit {problem.version[:12]}, server {str(online.get('version'))[:12]}): "
            f"download a new kit from {server}/kit.zip "
            "(your own files, qwen/*.py, are kept when you unpack it over the old one)"
        )
    code = problem.solution.read_text(encoding="utf-8")
    started = time.monotonic()
    accepted = call(
        server, "POST", "/api/submissions", token, {"problem_id": problem.id, "code": code, "mode": "submit"}
    )
    print(f"提交 submitted as #{accepted['id']} to {server}; 评测中 judging…", flush=True)
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
            raise KitError(f"no verdict after {WAIT_S:.0f} s; see {server}/submissions/{accepted['id']}")
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
    official = "正式评测" if lang == "zh" else "official verdict"
    print(render_table(report, f"{problem.id} {problem.title(lang)} · {official}", lang))
    print(f"\n得分 score {sub['score']}/{sub['max_score']} · {server}/submissions/{sub['id']}")
    return bool(report.verdict == Verdict.AC)


# ----------------------------------------------------------------------------- the command


def main(argv: list[str] | None = None) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 - the kit runs on learners' Pythons, not ours
        print("需要 Python 3.10+ / the kit needs Python 3.10 or newer", file=sys.stderr)
        return 2
    sys.path.insert(0, str(LIBRARY))
    parser = argparse.ArgumentParser(
        prog="judge.py", description="练习包 the practice kit: judge your solutions offline"
    )
    parser.add_argument("problem", nargs="?", help="problem id, e.g. 204 (none: list the problems)")
    parser.add_argument("--all", action="store_true", help="judge every problem")
    parser.add_argument(
        "--submit", action="store_true", help="send the solution to the server for the official score"
    )
    parser.add_argument("--server", help="the server's URL (default: the one this kit came from)")
    parser.add_argument("--token", help="an API token (default: JUDGE_TOKEN, then ~/.config/llm-judge/token)")
    parser.add_argument("--lang", choices=["zh", "en"], default="zh", help="the language of what is printed")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    args = parser.parse_args(argv)
    try:
        kit = load_kit()
        if args.submit:
            if not args.problem:
                raise KitError("--submit needs a problem id, e.g. judge.py 204 --submit")
            server = (args.server or kit["server"]).rstrip("/")
            return 0 if submit(find(kit, args.problem), server, read_token(args.token), args.lang) else 1
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
        print(f"错误 error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
