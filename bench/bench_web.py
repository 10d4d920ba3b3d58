"""The web under load: Debian's `wrk` against a real `judge serve` on this machine.

`python bench/bench_web.py [--duration 10] [--connections 1,4,8,16,32] [--threads 2]
[--endpoints floor,learner,anonymous,API] [--database-url URL] [--processes N] [--name web]`

Three endpoints and a floor, each at every connection count (closed loop: a connection sends
its next request when the answer arrives; wrk's percentiles are of those answers):
  health check (floor)      GET /healthz: the cheapest answer of the same server, on this machine now
  problem page (learner)    GET /problems/204, HTML, with the session cookie of a logged-in learner
  problem page (anonymous)  the same page for a visitor without an account
  submission API            GET /api/submissions/{id} with a Bearer token, for a finished one
The submission is real: an accepted solution of 204 judged by the server's own worker on the
local backend before the load starts. Each answer is checked once before its load (the
learner's page is the learner's, the visitor's asks to log in, the verdict is AC); during the
load wrk counts non-2xx answers and socket errors.

The target: each endpoint sustains >= 500 requests/s with p95 < 50 ms. The table marks, per
endpoint, the most requests/s among runs with p95 under 50 ms and no errors.

wrk runs on the same cores as the server, and so does anything else on the machine: the table
shows the CPU that the server, wrk and everything else took during each run (in % of one
core; 100% x cores = all of them), and the server's CPU milliseconds per request, which
changes less with what else runs than requests/s does. With --processes N (PostgreSQL, where
the run creates a database of its own) the server is `judge serve --processes N`: its CPU is
the supervisor's and every web process's together. A fixed Python loop timed before and
after the run says how fast the machine itself was (on a shared virtual machine that changes).

Needs wrk: `apt-get install -y wrk`. Writes bench/results/NAME.json and NAME.png.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from common import (
    REPO,
    RESULTS,
    Server,
    add_server_options,
    call,
    check_server_options,
    judge_server,
    machine_cpu,
    run_name,
    save,
    server_shape,
)

TARGET_RPS = 500.0
TARGET_P95_MS = 50.0
# Only the visitor's problem page has this banner (running and submitting need an account).
LOGIN_NEEDED = 'data-testid="login-needed"'

# wrk's done() hook: one JSON line with the run's totals and latency percentiles (µs).
WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p95_us": %d, '
    .. '"p99_us": %d, "max_us": %d, "connect": %d, "read": %d, "write": %d, "status": %d, '
    .. '"timeout": %d}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50),
    latency:percentile(95), latency:percentile(99), latency.max, e.connect, e.read, e.write,
    e.status, e.timeout))
end
"""


def fetch(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as res:
        return res.status, res.read().decode()


def session_cookie(url: str, account: dict[str, str]) -> str:
    """Log in as a browser does (POST /api/auth/login) and keep the session cookie."""
    body = json.dumps(account).encode()
    request = urllib.request.Request(
        url + "/api/auth/login", data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    cookie: SimpleCookie = SimpleCookie()
    with urllib.request.urlopen(request, timeout=60) as res:
        for header in res.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
    return cookie["judge_session"].value


def judged_submission(url: str, token: str) -> int:
    """An accepted solution of 204, submitted and judged by the server's own worker."""
    code = (REPO / "problems/204-rmsnorm/solutions/accepted/div_sqrt_sum.py").read_text()
    sub = call(url, "POST", "/api/submissions", {"problem_id": "204", "code": code}, token)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        got = call(url, "GET", f"/api/submissions/{sub['id']}", token=token)
        if got["status"] == "done":
            if got["verdict"] != "AC":
                raise SystemExit(f"the benchmark's submission was judged {got['verdict']}, not AC")
            return int(sub["id"])
        time.sleep(0.2)
    raise SystemExit("the benchmark's submission was not judged within 10 minutes")


def run_wrk(
    url: str, headers: dict[str, str], connections: int, threads: int, seconds: float, script: Path
) -> dict[str, Any]:
    args = ["wrk", "-t", str(min(threads, connections)), "-c", str(connections), "-d", f"{seconds:g}s"]
    args += ["--timeout", "10s", "-s", str(script)]
    for name, value in headers.items():
        args += ["-H", f"{name}: {value}"]
    done = subprocess.run([*args, url], capture_output=True, text=True, check=True)
    line = next((x for x in done.stdout.splitlines() if x.startswith("WRK_JSON ")), None)
    if line is None:
        raise SystemExit(f"wrk printed no report:\n{done.stdout}\n{done.stderr}")
    out: dict[str, Any] = json.loads(line.removeprefix("WRK_JSON "))
    return out


def measured(
    url: str, headers: dict[str, str], conns: int, threads: int, seconds: float, script: Path, server: Server
) -> dict[str, Any]:
    """One wrk run, with the CPU the server (all its web processes), wrk and the rest of the
    machine took meanwhile."""
    cpu0, wrk0, (busy0, _), t0 = server.cpu(), _children(), machine_cpu(), time.monotonic()
    out = run_wrk(url, headers, conns, threads, seconds, script)
    cpu1, wrk1, (busy1, _), wall = server.cpu(), _children(), machine_cpu(), time.monotonic() - t0
    spent, wrk = cpu1["web"] - cpu0["web"], wrk1 - wrk0
    # PostgreSQL's backends for this run's database, when the server runs on this machine.
    database = cpu1["postgres"] - cpu0["postgres"] if "postgres" in cpu1 else None
    other = max(0.0, (busy1 - busy0) - spent - wrk - (database or 0.0))
    errors = out["connect"] + out["read"] + out["write"] + out["status"] + out["timeout"]
    return {
        "connections": conns,
        "rps": round(out["requests"] / (out["duration_us"] / 1e6), 1),
        "p50_ms": round(out["p50_us"] / 1000, 2),
        "p95_ms": round(out["p95_us"] / 1000, 2),
        "p99_ms": round(out["p99_us"] / 1000, 2),
        "max_ms": round(out["max_us"] / 1000, 2),
        "requests": out["requests"],
        "errors": errors,
        "non_2xx": out["status"],
        "server_cpu_ms_per_req": round(1000 * spent / max(out["requests"], 1), 2),
        "server_cpu_pct": round(100 * spent / wall, 1),
        "wrk_cpu_pct": round(100 * wrk / wall, 1),
        "postgres_cpu_pct": None if database is None else round(100 * database / wall, 1),
        "postgres_cpu_ms_per_req": None
        if database is None
        else round(1000 * database / max(out["requests"], 1), 2),
        "other_cpu_pct": round(100 * other / wall, 1),
    }


def _children() -> float:
    """CPU seconds of this script's finished children (the wrk runs)."""
    usage = os.times()
    return usage.children_user + usage.children_system


def python_speed_ms() -> float:
    """A fixed pure-Python loop, best of 3: how fast this machine runs Python right now (shared
    virtual machines vary by half from one hour to the next). Lower is faster."""
    best = float("inf")
    for _ in range(3):
        start, total = time.process_time(), 0
        for i in range(1_000_000):
            total += i * i
        best = min(best, (time.process_time() - start) * 1000)
    return round(best, 1)


def best_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per endpoint: the most requests/s among runs with p95 under the target and no errors."""
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["p95_ms"] >= TARGET_P95_MS or r["errors"]:
            continue
        if r["endpoint"] not in best or r["rps"] > best[r["endpoint"]]["rps"]:
            best[r["endpoint"]] = r
    return best


def against_floor(rows: list[dict[str, Any]]) -> None:
    """Each run's server CPU per request as a multiple of the floor's (/healthz) at the same
    connection count, in this run: the cost of the endpoint's own work, whatever the machine's
    speed was (it varies by half from one hour to the next)."""
    floor = {r["connections"]: r["server_cpu_ms_per_req"] for r in rows if "floor" in r["endpoint"]}
    for r in rows:
        base = floor.get(r["connections"])
        r["server_cpu_x_floor"] = round(r["server_cpu_ms_per_req"] / base, 2) if base else None


def print_load_table(rows: list[dict[str, Any]], best: dict[str, dict[str, Any]]) -> None:
    head = (
        f"{'endpoint':<25} {'conns':>5} {'req/s':>6} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'errors':>6}"
    )
    # PostgreSQL's CPU is a column of its own when the run has it (it is "other" on SQLite's
    # runs: there the database is inside the server's processes).
    postgres = any(r.get("postgres_cpu_pct") is not None for r in rows)
    pg_head = f" {'pg cpu':>6}" if postgres else ""
    print(f"\n{head} {'srv ms/req':>10} {'x floor':>7} {'srv cpu':>7} {'wrk cpu':>7}{pg_head} {'other':>6}")
    for r in rows:
        mark = "  <- best, p95 < 50 ms" if best.get(r["endpoint"]) is r else ""
        pg = f" {r['postgres_cpu_pct']:>5.0f}%" if postgres else ""
        ratio = r.get("server_cpu_x_floor")
        times = f"{ratio:>6.2f}x" if ratio is not None else f"{'-':>7}"
        print(
            f"{r['endpoint']:<25} {r['connections']:>5} {r['rps']:>6.0f} {r['p50_ms']:>7.1f} "
            f"{r['p95_ms']:>7.1f} {r['p99_ms']:>7.1f} {r['errors']:>6} "
            f"{r['server_cpu_ms_per_req']:>10.2f} {times} "
            f"{r['server_cpu_pct']:>6.0f}% {r['wrk_cpu_pct']:>6.0f}%{pg} {r['other_cpu_pct']:>5.0f}%{mark}"
        )


def plot_load(name: str, rows: list[dict[str, Any]], shape: dict[str, Any]) -> Path | None:
    """Requests/s and p95 against connections, one line per endpoint, with the targets."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import ScalarFormatter
    except ImportError:
        print("(matplotlib not installed: no plot; pip install -r bench/requirements.txt)")
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for endpoint in dict.fromkeys(r["endpoint"] for r in rows):
        mine = [r for r in rows if r["endpoint"] == endpoint]
        conns = [r["connections"] for r in mine]
        left.plot(conns, [r["rps"] for r in mine], marker="o", label=endpoint)
        right.plot(conns, [r["p95_ms"] for r in mine], marker="o", label=endpoint)
    left.axhline(TARGET_RPS, color="grey", linestyle="--", linewidth=1, label=f"target {TARGET_RPS:g}/s")
    right.axhline(
        TARGET_P95_MS, color="grey", linestyle="--", linewidth=1, label=f"p95 < {TARGET_P95_MS:g} ms"
    )
    left.set(xscale="log", xlabel="connections (wrk)", ylabel="requests/s", title="throughput")
    right.set(xscale="log", yscale="log", xlabel="connections (wrk)", ylabel="p95 ms", title="p95 latency")
    for ax in (left, right):
        ax.set_xticks(sorted({r["connections"] for r in rows}))
        ax.get_xaxis().set_major_formatter(ScalarFormatter())
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    server = f"judge serve ({shape['processes']} web process(es), {shape['database']})"
    fig.suptitle(f"{server} under wrk, {os.cpu_count()} cores shared by the server, wrk and the rest")
    fig.tight_layout()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.png"
    fig.savefig(path, dpi=120)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of uncounted load per endpoint")
    parser.add_argument("--connections", default="1,4,8,16,32", help="comma-separated connection counts")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (at most the connections)")
    parser.add_argument(
        "--endpoints", default="floor,learner,anonymous,API", help="words of the endpoints' names"
    )
    add_server_options(parser, judging=False)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir and the database")
    parser.add_argument(
        "--name", help="results go to bench/results/NAME.json and .png (default web, web_pg_p2, ...)"
    )
    args = parser.parse_args()
    check_server_options(parser, args)
    result_name = run_name("web", args)
    if shutil.which("wrk") is None:
        raise SystemExit("bench_web.py needs wrk, the HTTP load generator: apt-get install -y wrk")
    connection_counts = [int(c) for c in args.connections.split(",") if c.strip()]
    wanted = [w.strip() for w in args.endpoints.split(",") if w.strip()]

    speed_before = python_speed_ms()
    # The local backend judges the one submission (a loopback server may use it); the load
    # itself never reaches a judge.
    with judge_server("local", prefix="bench-web-", **server_shape(args)) as server:
        url = server.url
        account = {"username": "bench", "password": "bench password"}
        call(url, "POST", "/api/auth/register", account)
        token = call(url, "POST", "/api/auth/token", account)["token"]
        cookie = session_cookie(url, account)
        sub_id = judged_submission(url, token)
        shape = server.describe()
        print(
            f"judge serve on {url}: {shape['processes']} web process(es) on {shape['database']}, "
            f"backend {server.health['backend']}, submission {sub_id} judged AC"
        )

        # (name, path, headers, what the right answer holds): checked once before the load.
        endpoints: list[tuple[str, str, dict[str, str], Callable[[str], bool]]] = [
            # The floor: the cheapest answer of the same server (a SELECT 1 and a small JSON).
            ("health check (floor)", "/healthz", {}, lambda text: json.loads(text)["status"] == "ok"),
            (
                "problem page (learner)",
                "/problems/204",
                {"Cookie": f"judge_session={cookie}"},
                lambda text: LOGIN_NEEDED not in text and 'href="/settings"' in text,
            ),
            ("problem page (anonymous)", "/problems/204", {}, lambda text: LOGIN_NEEDED in text),
            (
                "submission API",
                f"/api/submissions/{sub_id}",
                {"Authorization": f"Bearer {token}"},
                lambda text: json.loads(text)["verdict"] == "AC",
            ),
        ]
        endpoints = [e for e in endpoints if any(word in e[0] for word in wanted)]
        rows: list[dict[str, Any]] = []
        with tempfile.TemporaryDirectory(prefix="bench-web-wrk-") as tmp:
            script = Path(tmp) / "report.lua"
            script.write_text(WRK_REPORT)
            for name, path, headers, right in endpoints:
                status, text = fetch(url + path, headers)
                if status != 200 or not right(text):
                    raise SystemExit(f"{name}: {path} answered {status}, not what this reader should get")
                run_wrk(url + path, headers, 4, args.threads, args.warmup, script)
                for conns in connection_counts:
                    got = measured(url + path, headers, conns, args.threads, args.duration, script, server)
                    rows.append({"endpoint": name, **got})
                    print(".", end="", flush=True)

    speed = [speed_before, python_speed_ms()]
    against_floor(rows)
    best = best_rows(rows)
    print(
        f"\njudge serve: {shape['processes']} web process(es), {shape['database']} ({shape['database_url']})"
    )
    print_load_table(rows, best)
    cores = os.cpu_count()
    print(
        f"\ncpu: % of one core ({cores} cores: {100 * (cores or 1)}% = all); srv: every web process; "
        + "x floor: srv ms/req over the floor's at the same connections; "
        + ("pg: PostgreSQL's backends of the run's database; " if shape["database"] == "postgresql" else "")
        + "other: the rest of the machine"
    )
    print(f"this machine's Python speed: a fixed loop took {speed[0]} ms before and {speed[1]} ms after")
    print(f"target per endpoint: >= {TARGET_RPS:g} requests/s with p95 < {TARGET_P95_MS:g} ms")
    summary = {}
    for name, *_ in endpoints:
        if "floor" in name:
            continue
        top = best.get(name)
        met = top is not None and top["rps"] >= TARGET_RPS
        said = f"{top['rps']:.0f} req/s at {top['connections']} connections" if top else "none"
        print(f"  {name:<25} best {said}: {'met' if met else 'NOT met'}")
        summary[name] = {"best_rps": top["rps"] if top else None, "target_met": met}
    saved = save(
        result_name,
        rows,
        target=summary,
        duration_s=args.duration,
        cores=cores,
        python_speed_ms=speed,
        **shape,
    )
    print(f"results: {saved}")
    picture = plot_load(result_name, rows, shape)
    if picture:
        print(f"plot: {picture}")


if __name__ == "__main__":
    main()
