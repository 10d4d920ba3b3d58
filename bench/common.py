"""Shared by the benchmarks: percentiles, the table, the floor ("bare") every run measures again."""

from __future__ import annotations

import http.client
import json
import os
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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
    from judge.casekit import Rng
    from judge.package import find_problem

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


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    tmp: Path
    db: Path
    log: Path
    health: dict[str, Any]

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""


def server_env(
    tmp: Path,
    backend: str,
    *,
    mode: str | None = None,
    workers: int | None = None,
    pool: int | None = None,
    allow_unsandboxed: bool = False,
) -> dict[str, str]:
    """The server's environment: a temp SQLite DB and cache, submission rate limits out of the
    way, and the judging settings asked for (unset ones keep the server's defaults)."""
    env = {
        **os.environ,
        "JUDGE_DATABASE_URL": f"sqlite:///{tmp / 'bench.db'}",
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
) -> Iterator[Server]:
    """`judge serve` on a free loopback port with a temp SQLite DB; its output goes to
    TMP/serve.log. Stopped (and TMP removed unless `keep`) when the block ends."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    port = free_port()
    env = server_env(tmp, backend, mode=mode, workers=workers, pool=pool, allow_unsandboxed=allow_unsandboxed)
    log = tmp / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "judge", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(f"http://127.0.0.1:{port}", process, tmp, tmp / "bench.db", log, {})
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if process.poll() is not None:
                raise SystemExit(f"judge serve exited while starting:\n{server.log_tail()}")
            try:
                server.health = call(server.url, "GET", "/healthz", timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"judge serve did not start:\n{server.log_tail()}") from None
                time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if keep:
            print(f"(kept {tmp}: the database and serve.log)")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


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
