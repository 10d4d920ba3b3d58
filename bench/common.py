"""Shared by the benchmarks: percentiles, the table, the floor ("bare") every run measures again."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import types
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def timed(fn: Callable[[], object], repeat: int, between: Callable[[], object] | None = None) -> list[float]:
    """Milliseconds per call. `between` runs untimed before each call (to refill a pool, say)."""
    out = []
    for _ in range(repeat):
        if between is not None:
            between()
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def bare_ms(problem_id: str = "204", repeat: int = 30) -> list[float]:
    """The floor: a correct solution's cases in a warm Python with torch imported, no sandbox,
    no runner, no comparison. What any judge must spend at least."""
    from judge.authoring.package import find_problem
    from judge.core.casekit import Rng

    problem = find_problem(problem_id, REPO / "problems")
    module = types.ModuleType("solution")
    exec(compile(problem.reference.source(), "solution.py", "exec"), module.__dict__)
    cases = problem.cases

    def run_all() -> None:
        for c in cases:
            c.fn(module, Rng(c.seed))

    run_all()  # warm-up: first backward, lazy imports
    return timed(run_all, repeat)


def row(name: str, values: list[float], floor: float) -> dict[str, float | str]:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return {
        "name": name,
        "n": len(values),
        "p50_ms": round(p50, 1),
        "p95_ms": round(p95, 1),
        "x_bare_p50": round(p50 / floor, 1) if floor else float("nan"),
    }


def print_table(title: str, rows: list[dict[str, float | str]]) -> None:
    print(f"\n{title}")
    print(f"{'what':<34} {'n':>4} {'p50 ms':>10} {'p95 ms':>10} {'x bare':>8}")
    for r in rows:
        print(f"{r['name']:<34} {r['n']:>4} {r['p50_ms']:>10} {r['p95_ms']:>10} {r['x_bare_p50']:>8}")


def save(name: str, rows: Sequence[Mapping[str, object]], **extra: object) -> Path:
    """bench/results/NAME.json: the rows, the time, and any extra top-level fields."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    body = {"rows": rows, "at": time.strftime("%Y-%m-%dT%H:%M:%S"), **extra}
    path.write_text(json.dumps(body, indent=1))
    return path


def save_and_plot(name: str, rows: list[dict[str, float | str]], **extra: object) -> None:
    """Write bench/results/NAME.json and the p50/p95 bar chart, and say where they are."""
    print(f"results: {save(name, rows, **extra)}")
    picture = plot(name, rows)
    if picture:
        print(f"plot: {picture}")


def plot(name: str, rows: list[dict[str, float | str]]) -> Path | None:
    """A bar chart of p50/p95 (needs matplotlib: pip install -r bench/requirements.txt)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot; pip install -r bench/requirements.txt)")
        return None
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.5))
    names = [str(r["name"]) for r in rows]
    ax.barh(names, [float(r["p95_ms"]) for r in rows], color="#c7d7ef", label="p95")
    ax.barh(names, [float(r["p50_ms"]) for r in rows], color="#1f5fbf", label="p50")
    ax.set_xscale("log")
    ax.set_xlabel("ms (log scale)")
    ax.invert_yaxis()
    ax.legend()
    fig.tight_layout()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.png"
    fig.savefig(path, dpi=120)
    return path


def median(values: list[float]) -> float:
    return statistics.median(values)


# A real `judge serve` for the end-to-end benchmarks (bench_e2e.py, bench_load.py).

SECRET_KEY = "bench-0123456789-abcdefghijklmnopqrstuvwxyz"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def call(url: str, method: str, path: str, body: object = None, token: str = "", timeout: float = 120) -> Any:
    """One JSON request on a new connection; raises urllib's HTTPError on 4xx/5xx."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as res:
        return json.loads(res.read() or b"null")


class Client:
    """A keep-alive HTTP/1.1 connection for one thread, as a browser keeps one per tab.

    A connection idle for longer than `fresh_s` is replaced before use (uvicorn closes idle
    ones after 5 s), so a POST is never sent on a socket the server may have closed; a GET
    that fails on a reused connection is retried once on a new one.
    """

    def __init__(self, url: str, token: str = "", timeout: float = 60, fresh_s: float = 2.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.token, self.timeout, self.fresh_s = token, timeout, fresh_s
        self._conn: http.client.HTTPConnection | None = None
        self._used = 0.0

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        """(HTTP status, parsed JSON body or None)."""
        if self._conn is not None and time.monotonic() - self._used > self.fresh_s:
            self.close()
        reused = self._conn is not None
        try:
            return self._send(method, path, body)
        except (http.client.HTTPException, OSError):
            self.close()
            if not (reused and method == "GET"):
                raise
            return self._send(method, path, body)

    def _send(self, method: str, path: str, body: object) -> tuple[int, Any]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = json.dumps(body).encode() if body is not None else None
        self._conn.request(method, path, body=data, headers=headers)
        res = self._conn.getresponse()
        raw = res.read()
        self._used = time.monotonic()
        if res.will_close:
            self.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return res.status, parsed


def register(url: str, username: str, password: str = "bench password") -> str:
    """A new account and an API token for it."""
    account = {"username": username, "password": password}
    call(url, "POST", "/api/auth/register", account)
    token: str = call(url, "POST", "/api/auth/token", account)["token"]
    return token


# The database of a run: a temp SQLite file by default, or a fresh database of the run's own on
# a PostgreSQL server (--database-url), so that no run sees another's rows.


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).startswith("postgresql")


def shown_url(url: str) -> str:
    """A database URL for the tables and the JSON: without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@contextmanager
def bench_database(url: str | None, tmp: Path, keep: bool = False) -> Iterator[str]:
    """The URL the server is given. None: TMP/bench.db. An SQLite URL: that file, as it is. A
    PostgreSQL URL names a server and a database to connect to for the administration: the run
    gets CREATE DATABASE bench_<random> there (the role needs CREATEDB), dropped at the end
    unless `keep`."""
    if url is None:
        yield f"sqlite:///{tmp / 'bench.db'}"
        return
    if url.startswith("sqlite"):
        yield url
        return
    if not is_postgres(url):
        raise SystemExit(f"--database-url: sqlite:///FILE or postgresql+psycopg://..., not {url!r}")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except SQLAlchemyError as exc:
        admin.dispose()
        raise SystemExit(f"could not create a database on {shown_url(url)}: {exc}") from None
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        if keep:
            print(f"(kept the database {name} on {shown_url(url)})")
        else:
            with admin.connect() as conn:
                # A process that was killed may have left its connections open.
                conn.execute(
                    text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                    {"n": name},
                )
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


def add_server_options(parser: argparse.ArgumentParser, judging: bool = True) -> None:
    """The options of the server's shape, the same in every end-to-end benchmark: the database,
    web processes and (`judging`) `judge worker` processes beside them."""
    parser.add_argument(
        "--database-url",
        help="sqlite:///FILE, or postgresql+psycopg://USER:PASS@HOST/DB: the run creates a database "
        "of its own on that server, dropped at the end unless --keep (default: a temp SQLite file)",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="judge serve --processes N: web processes (PostgreSQL)"
    )
    if judging:
        parser.add_argument(
            "--judge-processes",
            type=int,
            default=0,
            help="M `judge worker` processes beside the server, which then judges nothing itself "
            "(JUDGE_WORKERS=0, unless --workers says otherwise); default 0: the server judges",
        )
        parser.add_argument(
            "--judge-threads",
            type=int,
            help="judging threads in each `judge worker` (its --threads; default JUDGE_WORKER_THREADS, 2)",
        )


def check_server_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse a shape the server cannot take before anything starts."""
    if args.processes < 1 or getattr(args, "judge_processes", 0) < 0:
        parser.error("--processes must be >= 1 and --judge-processes >= 0")
    if args.processes > 1 and not is_postgres(args.database_url):
        parser.error(
            f"--processes {args.processes} needs PostgreSQL (an SQLite file is one process's): add "
            "--database-url postgresql+psycopg://USER:PASS@HOST:5432/postgres, where the run creates "
            "a database of its own"
        )
    if getattr(args, "judge_processes", 0) and not is_postgres(args.database_url):
        print(
            "note: on SQLite, a verdict written by a `judge worker` reaches the long-polls at their "
            "next re-read (0.5 s): notices between processes need PostgreSQL"
        )


def server_shape(args: argparse.Namespace) -> dict[str, Any]:
    """judge_server's keyword arguments from add_server_options' options."""
    return {
        "database_url": args.database_url,
        "processes": args.processes,
        "judge_processes": getattr(args, "judge_processes", 0),
        "judge_threads": getattr(args, "judge_threads", None),
        "keep": getattr(args, "keep", False),
    }


def run_name(base: str, args: argparse.Namespace) -> str:
    """bench/results/ name: --name, else BASE with the shape, so that a multi-process run does
    not overwrite the default run's figures (load_pg_p2_j2: PostgreSQL, 2 web, 2 judge processes)."""
    if getattr(args, "name", None):
        return str(args.name)
    name = base
    if args.database_url:
        name += "_pg" if is_postgres(args.database_url) else "_sqlite"
    if args.processes > 1:
        name += f"_p{args.processes}"
    if getattr(args, "judge_processes", 0):
        name += f"_j{args.judge_processes}"
    return name


# A real `judge serve` (and its `judge worker`s) for the end-to-end benchmarks.


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    tmp: Path
    database_url: str
    log: Path
    health: dict[str, Any]
    processes: int = 1
    judges: list[subprocess.Popen[bytes]] = field(default_factory=list)  # `judge worker`s
    judge_logs: list[Path] = field(default_factory=list)
    judge_threads: int | None = None  # in each `judge worker`, as it said when it started
    judge_backend: str | None = None

    @property
    def backend(self) -> str:
        """The backend that judges: the workers' if there are any (a server with JUDGE_WORKERS=0
        has none of its own), else the server's."""
        return self.judge_backend or str(self.health.get("backend", "?"))

    def log_tail(self, lines: int = 30, log: Path | None = None) -> str:
        return "\n".join(_read(log or self.log).splitlines()[-lines:])

    def log_text(self) -> str:
        return _read(self.log)

    def logs(self) -> dict[str, str]:
        """Every log of the run by file name: serve.log, worker-1.log, ..."""
        return {path.name: _read(path) for path in [self.log, *self.judge_logs]}

    def web_pids(self) -> list[int]:
        """The processes that serve HTTP: `judge serve`, and with --processes N uvicorn's
        children (started by multiprocessing's spawn; not its resource tracker)."""
        if self.processes == 1:
            return [self.process.pid]
        return [self.process.pid, *spawned_children(self.process.pid)]

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: the web processes' own, the judge workers' own, and the reaped
        children of both (the local backend's runner processes). A web process that died and
        was replaced moves its total into the supervisor's reaped children."""
        web = [cpu_seconds(pid) for pid in self.web_pids()]
        judges = [cpu_seconds(p.pid) for p in self.judges if p.poll() is None]
        out = {
            "web": sum(own for own, _ in web),
            "judges": sum(own for own, _ in judges),
            "runners": sum(reaped for _, reaped in [*web, *judges]),
        }
        if is_postgres(self.database_url):
            out["postgres"] = postgres_cpu(self.database_name())
        return out

    def database_name(self) -> str:
        from sqlalchemy.engine import make_url

        return str(make_url(self.database_url).database)

    def describe(self) -> dict[str, Any]:
        """The shape of this run, for the results' JSON."""
        return {
            "database": "postgresql" if is_postgres(self.database_url) else "sqlite",
            "database_url": shown_url(self.database_url),
            "processes": self.processes,
            "judge_processes": len(self.judges),
            "judge_threads": self.judge_threads,
        }


def shape_label(shape: Mapping[str, Any]) -> str:
    """Server.describe() in words: "PostgreSQL, 2 web processes, 2 judge workers x 2 threads"."""
    n = shape["processes"]
    words = ["PostgreSQL" if shape["database"] == "postgresql" else "SQLite"]
    words.append(f"{n} web process{'es' if n > 1 else ''}")
    if shape["judge_processes"]:
        words.append(f"{shape['judge_processes']} judge workers x {shape['judge_threads']} threads")
    return ", ".join(words)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def postgres_cpu(database: str) -> float:
    """Own CPU seconds of the PostgreSQL backends connected to `database` on this machine (0 if
    the server runs elsewhere): a backend's process title names its database. Backends that
    ended meanwhile are not counted; the server's pools keep theirs open."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "comm").read_text().strip() != "postgres":
                continue
            if database not in (proc / "cmdline").read_bytes().decode(errors="replace").split():
                continue
            total += cpu_seconds(int(proc.name))[0]
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return total


def spawned_children(parent: int) -> list[int]:
    """`parent`'s children started by multiprocessing's spawn, but its resource tracker."""
    found = []
    try:
        tasks = list(Path(f"/proc/{parent}/task").iterdir())
    except OSError:
        return []
    for task in tasks:
        try:
            pids = (task / "children").read_text().split()
        except OSError:
            continue
        for pid in pids:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(pid))
    return sorted(found)


def server_env(
    tmp: Path,
    backend: str,
    *,
    database_url: str | None = None,
    mode: str | None = None,
    workers: int | None = None,
    pool: int | None = None,
    allow_unsandboxed: bool = False,
) -> dict[str, str]:
    """The server's environment: the database (a temp SQLite file unless given) and cache,
    submission rate limits out of the way, and the judging settings asked for (unset ones keep
    the server's defaults). The `judge worker`s get the same."""
    env = {
        **os.environ,
        "JUDGE_DATABASE_URL": database_url or f"sqlite:///{tmp / 'bench.db'}",
        "JUDGE_SECRET_KEY": SECRET_KEY,
        "JUDGE_BACKEND": backend,
        "JUDGE_SUBMITS_PER_USER": "1000000",
        "JUDGE_SUBMITS_PER_ADDRESS": "1000000",
        # Every simulated learner registers and logs in from loopback.
        "JUDGE_REGISTRATIONS_PER_ADDRESS": "1000000",
        "JUDGE_PASSWORD_CHECKS_PER_ADDRESS": "1000000",
        "JUDGE_CACHE_DIR": str(tmp / "cache"),
    }
    for name, value in (
        ("JUDGE_SANDBOX__MODE", mode),
        ("JUDGE_WORKERS", workers),
        ("JUDGE_SANDBOX__POOL_SIZE", pool),
    ):
        if value is not None:
            env[name] = str(value)
    if allow_unsandboxed:
        env["JUDGE_ALLOW_UNSANDBOXED"] = "1"
    return env


@contextmanager
def judge_server(
    backend: str = "auto",
    *,
    mode: str | None = None,
    workers: int | None = None,
    pool: int | None = None,
    allow_unsandboxed: bool = False,
    keep: bool = False,
    prefix: str = "bench-",
    start_timeout_s: float = 120,
    database_url: str | None = None,
    processes: int = 1,
    judge_processes: int = 0,
    judge_threads: int | None = None,
) -> Iterator[Server]:
    """`judge serve` on a free loopback port, its output in TMP/serve.log; the database from
    bench_database. With `processes` > 1, `judge serve --processes N` (PostgreSQL). With
    `judge_processes` M, M `judge worker --threads T` started once the server is up (it migrates
    the database), logs in TMP/worker-I.log, and the server judges nothing itself unless
    `workers` says so. Everything stopped (the workers first, each finishing its judgement) and
    TMP removed unless `keep` when the block ends."""
    if processes > 1 and not is_postgres(database_url):
        raise SystemExit(
            f"--processes {processes} needs PostgreSQL: give --database-url postgresql+psycopg://..."
        )
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    with ExitStack() as stack:
        if not keep:
            stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        else:
            stack.callback(print, f"(kept {tmp}: serve.log, the workers' logs; bench.db if on SQLite)")
        url = stack.enter_context(bench_database(database_url, tmp, keep))
        if judge_processes and workers is None:
            workers = 0
        env = server_env(
            tmp,
            backend,
            database_url=url,
            mode=mode,
            workers=workers,
            pool=pool,
            allow_unsandboxed=allow_unsandboxed,
        )
        if processes > 1 or judge_processes:
            # /metrics of any web process adds up every process of the run.
            env["JUDGE_METRICS_DIR"] = str(tmp / "metrics")
        port = free_port()
        command = ["serve", "--host", "127.0.0.1", "--port", str(port)]
        if processes > 1:
            command += ["--processes", str(processes)]
        log = tmp / "serve.log"
        process = _start(command, env, log)
        stack.callback(_stop, [process])
        server = Server(f"http://127.0.0.1:{port}", process, tmp, url, log, {}, processes)
        deadline = time.monotonic() + start_timeout_s
        server.health = _until_up(server, deadline)
        threads = ["--threads", str(judge_threads)] if judge_threads else []
        # Stopped all at once, before the server: each finishes its judgement under way.
        stack.callback(_stop, server.judges)
        for i in range(1, judge_processes + 1):
            worker_log = tmp / f"worker-{i}.log"
            server.judges.append(_start(["worker", *threads], env, worker_log))
            server.judge_logs.append(worker_log)
        for judge, worker_log in zip(server.judges, server.judge_logs, strict=True):
            _until_logged(judge, worker_log, "judge worker: ", 1, deadline)
            said = re.search(r"judge worker: (\d+) threads on the (\S+) backend", _read(worker_log))
            if said:
                server.judge_threads, server.judge_backend = int(said.group(1)), said.group(2)
        yield server


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """`python -m judge COMMAND` with its output in `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "judge", *command], env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT
        )


def _stop(processes: list[subprocess.Popen[bytes]], timeout_s: float = 60) -> None:
    """SIGTERM to all, then wait (a worker finishes the judgement under way, up to 30 s, and
    removes its containers); SIGKILL to any still there after `timeout_s`."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + timeout_s
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _until_up(server: Server, deadline: float) -> dict[str, Any]:
    """/healthz once every web process has started (with N processes, one answering says
    nothing about the others: wait for each child's "Application startup complete")."""
    while True:
        if server.process.poll() is not None:
            raise SystemExit(f"judge serve exited while starting:\n{server.log_tail()}")
        try:
            health: dict[str, Any] = call(server.url, "GET", "/healthz", timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"judge serve did not start:\n{server.log_tail()}") from None
            time.sleep(0.2)
    if server.processes > 1:
        _until_logged(server.process, server.log, "Application startup complete", server.processes, deadline)
    return health


def _until_logged(
    process: subprocess.Popen[bytes], log: Path, line: str, count: int, deadline: float
) -> None:
    """Wait until `log` holds `line` `count` times (a process's word that it is ready)."""
    while _read(log).count(line) < count:
        tail = "\n".join(_read(log).splitlines()[-30:])
        if process.poll() is not None:
            raise SystemExit(f"{log.name}: the process exited while starting:\n{tail}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{log.name}: not ready in time (no {count} x {line!r}):\n{tail}")
        time.sleep(0.2)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(own, reaped children's) user + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine, all cores, so far (/proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(values[:8]) - idle) / tick, sum(values[:8]) / tick


# The floor of any problem (bench_problems.py): bare_ms for a problem whose reference imports
# other problems' parts (qwen.norm, ...) or whose cases read its data files (a checkpoint).


def problem_floor_ms(problem_id: str, repeat: int = 20) -> list[float]:
    """bare_ms for any shipped problem: its reference's cases in this warm process, on one
    torch thread as the runner runs them (`RunnerJob.threads`), with the part problems'
    references importable (as the trusted run serves them) and the package's data files read
    where they lie. Only the cases are timed: no sandbox, no runner, no comparison, and the
    reference (with its parts) loaded untimed before each repetition, fresh as each job
    loads it."""
    import torch

    from judge.authoring.package import find_problem
    from judge.core.casekit import Rng, use_data_dir
    from judge.core.runner.parts import FINDER

    problem = find_problem(problem_id, REPO / "problems")
    cases = problem.cases
    module = types.ModuleType("solution")
    code = compile(problem.reference.source(), "solution.py", "exec")

    def load() -> None:
        FINDER.install(problem.reference_parts())
        module.__dict__.clear()
        module.__dict__["__name__"] = "solution"
        exec(code, module.__dict__)

    def run_all() -> None:
        for c in cases:
            torch.default_generator.manual_seed(c.seed)
            c.fn(module, Rng(c.seed))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    use_data_dir(str(problem.root) if problem.spec.data else None)
    try:
        load()
        run_all()  # warm-up: first backward, lazy imports
        return timed(run_all, repeat, between=load)
    finally:
        use_data_dir(None)
        FINDER.install([])
        torch.set_num_threads(threads)


@dataclass
class Judged:
    """One Submit as the learner saw it, followed to its verdict."""

    id: int
    sent_wall: float  # time.time() when the POST was sent (the database's stamps are on this clock)
    done_wall: float  # time.time() when the answer saying done was read
    latency_ms: float
    verdict: str


def submit_and_wait(client: Client, problem: str, code: str, poll_ms: float = 0.0) -> Judged:
    """POST the code as a Submit and follow it to its verdict: with the long-poll, as the browser
    and the kit do, or by polling every `poll_ms`."""
    sent_wall, start = time.time(), time.perf_counter()
    body = {"problem_id": problem, "code": code, "mode": "submit"}
    status, sub = client.request("POST", "/api/submissions", body)
    assert status == 202, (status, sub)
    wait = ""
    while True:
        status, got = client.request("GET", f"/api/submissions/{sub['id']}{wait}")
        assert status == 200, (status, got)
        if got["status"] == "done":
            latency = (time.perf_counter() - start) * 1000
            return Judged(int(sub["id"]), sent_wall, time.time(), latency, str(got["verdict"]))
        if poll_ms:
            time.sleep(poll_ms / 1000)
        else:
            wait = "?wait=20"
