"""Submit -> verdict through the HTTP API of a real `judge serve` on an idle machine:
`python bench/bench_e2e.py [--n 50] [--backend auto] [--mode cold|warm|fork] [--workers W] [--pool P]
[--database-url URL] [--processes N] [--judge-processes M] [--judge-threads T]`.
One learner submits, follows the submission by long-polling (`?wait=`, as the browser and the
kit do; `--poll-ms N` polls instead) and submits again once the verdict is in. The floor
(bare) is measured in the same run. With a PostgreSQL URL the run gets a database of its own
on that server; `--processes N` is `judge serve --processes N`, `--judge-processes M` M `judge
worker`s beside it (the server then judges nothing itself), so the verdict crosses processes.
"""

from __future__ import annotations

import argparse
import time

from common import (
    REPO,
    Client,
    add_server_options,
    bare_ms,
    check_server_options,
    judge_server,
    median,
    print_table,
    register,
    row,
    run_name,
    save_and_plot,
    server_shape,
    shape_label,
    submit_and_wait,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50, help="submissions measured (default 50)")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--mode", choices=("cold", "warm", "fork"), help="JUDGE_SANDBOX__MODE")
    parser.add_argument("--workers", type=int, help="JUDGE_WORKERS: judging threads in the server")
    parser.add_argument("--pool", type=int, help="JUDGE_SANDBOX__POOL_SIZE: warm sandboxes kept ready")
    parser.add_argument(
        "--poll-ms", type=float, default=0, help="poll every N ms instead of long-polling (0, the default)"
    )
    parser.add_argument(
        "--allow-unsandboxed", action="store_true", help="JUDGE_ALLOW_UNSANDBOXED=1 (for --backend local)"
    )
    parser.add_argument(
        "--gap-ms",
        type=float,
        default=250,
        help="untimed pause between submissions (default 250: a learner reads the verdict first; "
        "0: back to back, when the sandbox is still readying its next child)",
    )
    add_server_options(parser)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs) and the database")
    parser.add_argument("--name", help="bench/results/NAME.json (default e2e_idle, e2e_idle_pg_p2, ...)")
    args = parser.parse_args()
    check_server_options(parser, args)
    floor_values = bare_ms()
    floor = median(floor_values)
    with judge_server(
        args.backend,
        mode=args.mode,
        workers=args.workers,
        pool=args.pool,
        allow_unsandboxed=args.allow_unsandboxed,
        prefix="bench-e2e-",
        **server_shape(args),
    ) as server:
        client = Client(server.url, register(server.url, "bench"))
        code = (REPO / "problems/204-rmsnorm/solutions/accepted/div_sqrt_sum.py").read_text()

        def timed() -> float:
            judged = submit_and_wait(client, "204", code, args.poll_ms)
            assert judged.verdict == "AC", judged
            return judged.latency_ms

        timed()  # the reference's cache is filled on the first judgement
        latencies = []
        for _ in range(args.n):
            time.sleep(args.gap_ms / 1000)
            latencies.append(timed())
        shape = server.describe()
        what = server.backend + (f" {args.mode}" if args.mode else "")
        rows = [
            row("bare (floor)", floor_values, floor),
            row(f"idle submit->verdict ({what}, {args.gap_ms:g} ms apart)", latencies, floor),
        ]
        print_table(
            f"problem 204 through the HTTP API, one learner, idle server ({shape_label(shape)})", rows
        )
        save_and_plot(run_name("e2e_idle", args), rows, **shape)


if __name__ == "__main__":
    main()
