"""The `judge` command line: run, validate, new, kit, image build (and the web's commands).

The settings are loaded once, here, and handed to the command (docs/settings.md)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from judge import __version__
from judge.cli_options import add_lang
from judge.core.errors import JudgeError
from judge.logs import DEFAULT_LEVEL, LOG_LEVELS, configure_logging
from judge.settings import JudgeSettings

if TYPE_CHECKING:
    from judge.authoring.package import Problem
    from judge.authoring.validate import Validation
    from judge.core.runner.job import PartSource


class UsageError(JudgeError):
    """Bad input from the user: printed as one line, exit status 2."""


class CommandParser(argparse.ArgumentParser):
    """The parser of `judge` and of each of its commands. Subcommands' parsers are made of
    their parent's class (argparse's add_subparsers), the web's plugin commands included, so
    `--log-level` is taken before or after any command: `judge serve --log-level debug`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SUPPRESS: a command's parser leaves the value alone unless the option is given there.
        self.add_argument(
            "--log-level",
            choices=LOG_LEVELS,
            default=argparse.SUPPRESS,
            help=f"what is logged on stderr (default: the log_level setting, {DEFAULT_LEVEL})",
        )
        self.add_argument(
            "--config",
            type=Path,
            default=argparse.SUPPRESS,
            metavar="FILE",
            help="a judge.toml settings file (default: JUDGE_CONFIG, else ./judge.toml if present)",
        )


def _run(args: argparse.Namespace, settings: JudgeSettings) -> int:
    from judge.authoring.package import find_problem
    from judge.backends import make_backend
    from judge.core.grading import judge_source
    from judge.core.report import render_table
    from judge.core.verdicts import Verdict
    from judge.expected import ExpectedStore

    problem = find_problem(args.problem, settings.problems_dir)
    problem.cases  # noqa: B018 - load the case table now, so package errors surface here
    source = _read_source(Path(args.solution))
    parts = _parts(problem, args.part)
    # One judgement: a pool of one (a second ready container would only take CPU from it).
    one = settings.sandbox.model_copy(update={"pool_size": 1})
    backend, warnings = make_backend(args.backend or settings.backend, one)
    store = ExpectedStore(settings.cache_dir, settings.startup_s)
    try:
        # An author's run: the hidden cases' messages are theirs to read (seal_hidden off).
        report = judge_source(
            problem, source, backend, store, args.cases, settings.startup_s, parts, seal_hidden=False
        )
    finally:
        backend.close()
    report.warnings = warnings + report.warnings
    if args.json:
        print(report.to_json(args.lang))
    else:
        title = problem.spec.title.en if args.lang == "en" else problem.spec.title.zh
        print(render_table(report, title, args.lang))
    return 0 if report.verdict == Verdict.AC else 1


def _read_source(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


def _parts(problem: Problem, given: list[str]) -> list[PartSource]:
    """The package references as parts, with each `--part ID=FILE` put in place of its own."""
    from judge.core.runner.job import PartSource

    parts = {p.problem: p for p in problem.reference_parts()}
    for item in given:
        ref, sep, file = item.partition("=")
        if not sep or not file:
            raise UsageError(f"--part takes ID=FILE, e.g. --part 204=norm.py (got {item!r})")
        if ref not in parts:
            known = ", ".join(f"{p.problem} ({p.module})" for p in parts.values()) or "none"
            raise UsageError(f"problem {problem.id} has no part {ref!r} (its parts: {known})")
        parts[ref] = PartSource(ref, parts[ref].module, _read_source(Path(file)), "file")
    return list(parts.values())


def _validate(args: argparse.Namespace, settings: JudgeSettings) -> int:
    from judge.authoring.package import all_problem_dirs
    from judge.authoring.validate import Scope, render_validation
    from judge.authoring.validating import Validator, say

    dirs = [Path(d) for d in args.dirs]
    if args.all:
        dirs += all_problem_dirs(settings.problems_dir)
    if not dirs:
        raise UsageError("name package folders or pass --all")
    try:
        scope = Scope(quick=args.quick, only=frozenset(args.only or ()))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    validator = Validator(settings, args.backend or settings.backend, scope, args.fresh, args.jobs)
    done = [0]
    lock = threading.Lock()

    def progress(d: Path, result: Validation, seconds: float) -> None:
        with lock:
            done[0] += 1
            # One line per package as it ends (on stderr: --json keeps stdout for the report).
            say(
                f"[{done[0]}/{len(dirs)}] {d.name}: {'sound' if result.ok else 'NOT SOUND'}"
                f"{_mutation_line(result)} ({seconds:.1f} s)"
            )

    try:
        results = validator.many(dirs, progress)
        if args.json:
            import json

            print(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2))
        else:
            print(render_validation(results))
        if args.watch:
            return _watch(validator, dirs, results)
    finally:
        validator.close()
    return 0 if all(r.ok for r in results) else 1


def _watch(validator: Any, dirs: list[Path], results: list[Validation]) -> int:
    """Re-validate each package whose files (or whose parts' files) change, printing only what
    changed, until interrupted."""
    from judge.authoring.validate import render_validation
    from judge.authoring.validating import changed_checks, roots_of, say
    from judge.authoring.watch import changes

    last = dict(zip(dirs, results, strict=True))
    roots = {d: roots_of(d) for d in dirs}
    saves = changes({r for rs in roots.values() for r in rs})
    say("watching for saves (Ctrl+C stops)")
    try:
        for changed in saves:
            touched = [d for d in dirs if any(Path(p).is_relative_to(r) for p in changed for r in roots[d])]
            for d in touched:
                started = time.monotonic()
                result = validator.one(d)
                lines = changed_checks(last[d], result)
                head = render_validation([result]).splitlines()[0]
                print(f"{head}  ({time.monotonic() - started:.1f} s)", flush=True)
                print("\n".join(lines) if lines else "  (no check changed)", flush=True)
                last[d] = result
                roots[d] = roots_of(d)  # a part added or removed
    except KeyboardInterrupt:
        pass
    return 0 if all(r.ok for r in last.values()) else 1


def _mutation_line(result: Validation) -> str:
    score = result.to_dict().get("mutants")  # a report read back has its counts, not its mutants
    if not score:
        return ""
    return (
        f", mutants {score['killed']}/{score['generated']} killed, {score['equivalent']} equivalent, "
        f"{score['survived']} survived"
    )


def _new(args: argparse.Namespace, settings: JudgeSettings) -> int:
    from judge.authoring.scaffold import scaffold

    if len(args.names) > 2:
        raise UsageError(
            "judge new takes [ID] SLUG, e.g. `judge new scaled-square` or `judge new 301 scaled-square`"
        )
    problem_id, slug = (None, args.names[0]) if len(args.names) == 1 else args.names
    path = scaffold(problem_id, slug, Path(args.dir) if args.dir else settings.problems_dir)
    print(f"created {path}")
    print("next: write its statements, reference, cases and known mistakes (each file says what goes in it)")
    print(f"  the page as learners will see it, live:  judge preview {path}")
    print(f"  checks as you save (no mutants):         judge validate --quick --watch {path}")
    print(f"  every check, until the package is sound: judge validate {path}")
    return 0


def _pack(args: argparse.Namespace, settings: JudgeSettings) -> int:
    from judge.authoring.archive import ArchiveError, default_archive_name, pack, package_files
    from judge.authoring.package import find_problem
    from judge.core.messages import msg

    problem = find_problem(args.problem, settings.problems_dir)
    out = Path(args.out) if args.out else Path.cwd() / default_archive_name(problem)
    try:
        manifest = pack(problem, out)
    except ArchiveError as exc:
        raise UsageError(exc.text.get(args.lang)) from exc
    files = len(package_files(problem.root))
    done = msg(
        "pack_done", path=out, name=manifest.name, version=manifest.version, files=files, hash=manifest.hash
    )
    print(done.get(args.lang))
    return 0


def _kit(args: argparse.Namespace, settings: JudgeSettings) -> int:
    from judge.authoring.kit import build_kit
    from judge.authoring.notebooks import NOTEBOOKS_DIR
    from judge.authoring.package import Problem, all_problem_dirs, find_problem
    from judge.backends import make_backend
    from judge.expected import ExpectedStore

    if args.problems:
        problems = [find_problem(p, settings.problems_dir) for p in args.problems]
    else:
        problems = [Problem(d) for d in all_problem_dirs(settings.problems_dir)]
    # The reference and the known mistakes are the author's code: the local backend will do.
    backend, _warnings = make_backend(args.backend or "local", settings.sandbox)
    store = ExpectedStore(settings.cache_dir, settings.startup_s)
    try:
        # A line per problem on stderr as it starts: a cold cache takes seconds per problem.
        root = build_kit(
            Path(args.out), problems, store, backend, args.server, lambda line: print(line, file=sys.stderr)
        )
    finally:
        backend.close()
    print(f"practice kit: {root} ({len(problems)} problems)")
    # Always written (no runs, so no cost worth a flag): one per chapter and language.
    print(f"chapter notebooks: {root / NOTEBOOKS_DIR} (open one in Jupyter or Colab)")
    print(f"try: python {root / 'judge.py'} {problems[0].id}" if problems else "")
    return 0


def _image(args: argparse.Namespace, settings: JudgeSettings) -> int:
    import docker

    from judge.backends import runner_code
    from sandbox.engine import ENGINE_ERRORS
    from sandbox.image import build_base, runtime_image

    def log(line: str) -> None:
        print(line, flush=True)

    try:
        client = docker.from_env(timeout=900)
        client.ping()
    except ENGINE_ERRORS as exc:
        raise UsageError(f"no Docker engine answers ({exc}); start dockerd first") from exc
    image = settings.sandbox
    # An ImageError (a sandbox error: its message says what to do) is said by main().
    build_base(client, offline=args.offline, log=log, mirror=image.image_mirror, workdir=image.image_workdir)
    tag = runtime_image(client, runner_code(), log=log)
    print(f"runtime image: {tag}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="judge", description="Judge hand-written Transformer exercises.")
    # Not given: the log_level setting; the settings file JUDGE_CONFIG names or ./judge.toml; the
    # judge's settings (the web's commands ask for the platform's, which extend them).
    parser.set_defaults(log_level=None, config=None, settings_class=JudgeSettings)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="judge a solution file against a problem")
    run.add_argument("problem", help="problem id (204) or package folder")
    run.add_argument("solution", help="path to your solution .py")
    run.add_argument("--backend", choices=["auto", "local", "docker"], default=None)
    run.add_argument("--cases", choices=["public", "all"], default="all")
    run.add_argument("--json", action="store_true", help="print the JSON report")
    add_lang(run)
    run.add_argument(
        "--part",
        action="append",
        default=[],
        metavar="ID=FILE",
        help="use FILE as the part problem ID imports (e.g. --part 204=norm.py); "
        "the other parts are the packages' references",
    )
    run.set_defaults(func=_run)

    val = sub.add_parser("validate", help="check that problem packages are sound")
    val.add_argument("dirs", nargs="*", help="package folders")
    val.add_argument("--all", action="store_true", help="every package under the problems folder")
    val.add_argument("--backend", choices=["auto", "local", "docker"], default=None)
    val.add_argument("--json", action="store_true")
    val.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="packages validated at once (default: one per core)",
    )
    val.add_argument(
        "--quick",
        action="store_true",
        help="structure, the reference's determinism, accepted and wrong solutions: no mutants, "
        "scratch snippets or properties (seconds, not minutes)",
    )
    val.add_argument(
        "--only",
        action="append",
        metavar="CHECK",
        help="run this check (and what it needs) and report it alone; repeatable (e.g. --only wrong)",
    )
    val.add_argument(
        "--watch", action="store_true", help="validate again on every save, printing what changed"
    )
    val.add_argument(
        "--fresh",
        action="store_true",
        help="run every check even when the package is unchanged since its last validation",
    )
    val.set_defaults(func=_validate)

    new = sub.add_parser("new", help="scaffold a new problem package")
    new.add_argument(
        "names",
        nargs="+",
        metavar="[ID] SLUG",
        help="an optional numeric id (default: the folder's next free one) and a lowercase-with-dashes "
        "slug, e.g. `301 kv-cache` or `kv-cache`",
    )
    new.add_argument("--dir", help="where to create it (default: the problems folder)")
    new.set_defaults(func=_new)
    pack = sub.add_parser("pack", help="write one problem package as a .tar.gz to share")
    pack.add_argument("problem", help="problem id (204) or package folder")
    pack.add_argument(
        "--out", metavar="FILE", help="the archive to write (default: ./NNN-slug-vVERSION.tar.gz)"
    )
    add_lang(pack)
    pack.set_defaults(func=_pack)
    kit = sub.add_parser("kit", help="write the offline practice kit (practice/) for learners")
    kit.add_argument("--out", required=True, help="the folder to write practice/ into")
    kit.add_argument("--server", default="http://127.0.0.1:8000", help="where the kit's --submit sends")
    kit.add_argument("--problems", nargs="*", help="ids to include (default: every problem)")
    kit.add_argument("--backend", choices=["auto", "local", "docker"], default=None)
    kit.set_defaults(func=_kit)
    image = sub.add_parser("image", help="the sandbox's runtime image")
    image_sub = image.add_subparsers(dest="image_command", required=True)
    build = image_sub.add_parser("build", help="build the runtime image unless it exists")
    build.add_argument(
        "--offline",
        action="store_true",
        help="build from Debian packages with debootstrap (no registry needed; needs root)",
    )
    build.set_defaults(func=_image)
    _add_plugin_commands(sub)
    return parser


def _add_plugin_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Commands of other installed parts (the web platform's serve, worker, ...).

    They come through the `llm_judge.commands` entry point, so the judge core never imports
    the web stack; without the web platform installed, `judge` simply lacks those commands.
    """
    from importlib.metadata import entry_points

    for ep in entry_points(group="llm_judge.commands"):
        ep.load()(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Who says a JudgeError: the whole program while the settings load, then the command.
    speaker = "judge: the settings cannot be used"
    try:
        settings = _settings(args)
        if settings is None:
            return 2
        speaker = f"judge {args.command}"
        args.log_level = args.log_level or settings.log_level  # what the commands hand on (uvicorn)
        configure_logging(args.log_level)
        code: int = args.func(args, settings)
    except JudgeError as exc:
        # The one place the judge's, the sandbox's and the web platform's own errors are said: one
        # line, exit status 2; the traceback only for those who ask (--log-level debug).
        logging.getLogger(__name__).debug("%s", speaker, exc_info=exc)
        print(f"{speaker}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 1
    return code


def _settings(args: argparse.Namespace) -> JudgeSettings | None:
    """The settings the command asks for; None, said on stderr, when one has a wrong value (a
    pydantic report of its own, one line per setting; a SettingsError is raised on to main)."""
    try:
        settings: JudgeSettings = args.settings_class(config=args.config)
    except ValidationError as exc:
        for error in exc.errors():
            name = ".".join(str(part) for part in error["loc"])
            print(f"judge: setting {name}: {error['msg']} (got {error.get('input')!r})", file=sys.stderr)
        return None
    return settings
