"""Submit -> verdict through the HTTP API of a real `judge serve` on an idle machine:
`python bench/bench_e2e.py [--n 20] [--backend auto]`. The floor (bare) is measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import REPO, bare_ms, median, plot, print_table, row, save


def call(url: str, method: str, path: str, body: object = None, token: str = "") -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=120) as res:
        return json.loads(res.read() or b"null")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()
    floor_values = bare_ms()
    floor = median(floor_values)
    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "JUDGE_DATABASE_URL": f"sqlite:///{tmp / 'bench.db'}",
        "JUDGE_SECRET_KEY": "bench-0123456789-abcdefghijklmnopqrstuvwxyz",
        "JUDGE_BACKEND": args.backend,
        "JUDGE_SUBMITS_PER_USER": "100000",
        "JUDGE_SUBMITS_PER_ADDRESS": "100000",
        "JUDGE_CACHE_DIR": str(tmp / "cache"),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "judge", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                health = call(url, "GET", "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise SystemExit("judge serve did not start")
        account = {"username": "bench", "password": "bench password"}
        call(url, "POST", "/api/auth/register", account)
        token = call(url, "POST", "/api/auth/token", account)["token"]
        code = (REPO / "problems/204-rmsnorm/solutions/accepted/div_sqrt_sum.py").read_text()

        def submit_and_wait() -> float:
            start = time.perf_counter()
            body = {"problem_id": "204", "code": code, "mode": "submit"}
            sub = call(url, "POST", "/api/submissions", body, token)
            while True:
                got = call(url, "GET", f"/api/submissions/{sub['id']}", token=token)
                if got["status"] == "done":
                    assert got["verdict"] == "AC", got
                    return (time.perf_counter() - start) * 1000
                time.sleep(0.02)

        submit_and_wait()  # the reference's cache is filled on the first judgement
        latencies = [submit_and_wait() for _ in range(args.n)]
        rows = [
            row("bare (floor)", floor_values, floor),
            row(f"idle submit->verdict ({health['backend']})", latencies, floor),
        ]
        print_table("problem 204 through the HTTP API, one learner, idle server", rows)
        print(f"results: {save('e2e_idle', rows)}")
        picture = plot("e2e_idle", rows)
        if picture:
            print(f"plot: {picture}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
