"""Every shipped problem's Submit -> verdict over HTTP, against that problem's own floor.

`python bench/bench_problems.py [--n 20] [--problems 204,205] [--mode fork|warm|cold]
[--inner-n 10] [--database-url URL] [--processes N] [--judge-processes M] [--judge-threads T]`

For each problem (problems/2*, or --problems), one learner submits the reference solution on
an idle `judge serve` (fork mode by default, as the server judges), follows it with the
long-poll (`?wait=20`, as the page and the kit do) and submits again --gap-ms after the
verdict. A problem whose reference imports other problems' parts is judged with the
learner's accepted parts, so the parts' references are submitted first (untimed), as a
learner solves them first. The first Submit of each problem fills the reference's cache and
is not timed.

The floor of each problem is measured in the same run (bench/common.py's problem_floor_ms):
its reference's cases in this warm Python, torch imported, one torch thread as the runner
has, no sandbox. The first table: floor p50, Submit p50 and p95, Submit - floor, and
whether that is within 40 ms (issue 35).

The second table says where the rest goes, per problem, p50 ms:
  from the database's stamps of the timed submissions (as bench_load.py reads them):
    POST->row      the POST's answer written (created_at) after it was sent
    row->claimed   queued until a worker claimed it (started_at): the wake-up and the claim
    judge_source   the judgement itself (the report's elapsed_ms)
    around         claimed -> result written, less judge_source: the parts read, the stored
                   record, the result's transaction up to its stamp (finished_at)
    written->seen  the stamp until the long-poll's answer was read here: the commit, the
                   notice, the poll's read and HTTP
  and from the same judgement in this process, after the server has stopped (the same
  backend and mode, the expected observations at hand, --inner-n times; as bench_sandbox.py
  splits it), summed over the Submit's jobs (public cases, then the hidden ones):
    to ready       the job sent until the runner's first byte (the sandbox's part)
    cases          the cases in the runner (their own time_ms)
    ready->end     the rest of the jobs' runs: the runner's per-job and per-case work, the
                   frames, the exit, the end report
    judge          judge_source less the runs: building the jobs, parsing the frames,
                   comparing, diagnosing
Writes bench/results/problems.json (or --name).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_load import db_stamp, read_db
from common import (
    REPO,
    Client,
    Judged,
    add_server_options,
    check_server_options,
    judge_server,
    median,
    percentile,
    problem_floor_ms,
    register,
    run_name,
    save,
    server_shape,
    shape_label,
    submit_and_wait,
)

WITHIN_MS = 40.0  # issue 35: every problem's Submit within this of its floor


@dataclass
class Measured:
    problem: str
    floor: list[float]
    subs: list[Judged] = field(default_factory=list)
    inner: dict[str, list[float]] = field(default_factory=dict)


def shipped_problems() -> list[str]:
    return sorted(p.name.split("-", 1)[0] for p in (REPO / "problems").glob("2*") if p.is_dir())


def judged_ac(client: Client, problem: str, code: str) -> Judged:
    """A Submit followed to its verdict; the reference must be accepted."""
    judged = submit_and_wait(client, problem, code)
    if judged.verdict != "AC":
        raise SystemExit(f"problem {problem}: the reference got {judged.verdict}")
    return judged


def reference_code(problem: str) -> str:
    from judge.authoring.package import find_problem

    return find_problem(problem, REPO / "problems").reference.source()


def parts_first(problems: list[str]) -> list[str]:
    """The part problems the selected ones import, each once, every part after its own parts:
    submitted (untimed) before anything is timed, so that the learner has accepted parts
    (218 is a part of 217, which comes before it)."""
    from judge.authoring.package import find_problem

    needed: list[str] = []
    for pid in problems:
        for part in find_problem(pid, REPO / "problems").part_problems:
            if part.id not in needed:
                needed.append(part.id)
    return needed


def inner_split(problems: list[str], mode: str, repeat: int) -> dict[str, dict[str, list[float]]]:
    """Each problem's Submit judged in this process by judge_source through a fresh backend of
    the server's kind, with the reference parts, the expected observations at hand: its time
    split as bench_sandbox.py splits it, summed over the Submit's jobs."""
    from judge.authoring.package import find_problem
    from judge.backends import make_backend
    from judge.core.backend import Limits, Outcome, ResultWatch
    from judge.core.grading import judge_source
    from judge.expected import ExpectedStore
    from judge.settings import SandboxSettings

    settings = SandboxSettings(mode=mode, pool_size=1)  # type: ignore[arg-type]
    backend, _ = make_backend("docker", settings)
    outcomes: list[Outcome] = []

    class Timing:
        """The backend, keeping each run's outcome (its ready and wall times)."""

        name, is_sandbox = backend.name, backend.is_sandbox

        def runtime_id(self) -> str:
            return backend.runtime_id()

        def run(self, stdin: bytes, limits: Limits, watch: ResultWatch | None = None) -> Outcome:
            outcome = backend.run(stdin, limits, watch)
            outcomes.append(outcome)
            return outcome

        def warm_up(self) -> None:
            backend.warm_up()

        def close(self) -> None:
            backend.close()

    timing = Timing()
    store = ExpectedStore(Path(tempfile.mkdtemp(prefix="bench-problems-cache-")))
    out: dict[str, dict[str, list[float]]] = {}
    pool = getattr(backend, "pool", None)
    try:
        for pid in problems:
            problem = find_problem(pid, REPO / "problems")
            source, parts = problem.reference.source(), problem.reference_parts()
            judge_source(problem, source, timing, store, parts=parts)  # type: ignore[arg-type]
            split: dict[str, list[float]] = {
                k: [] for k in ("total", "to ready", "cases", "ready->end", "judge")
            }
            for _ in range(repeat):
                if pool is not None:
                    pool.fill(120)
                time.sleep(0.25)  # idle, as between a learner's Submits: the next child is ready
                outcomes.clear()
                start = time.perf_counter()
                report = judge_source(problem, source, timing, store, parts=parts)  # type: ignore[arg-type]
                total = (time.perf_counter() - start) * 1000
                assert report.verdict == "AC", (pid, report.verdict)
                ready = sum(1000 * (o.ready_s or 0.0) for o in outcomes)
                walls = sum(1000 * o.wall_s for o in outcomes)
                cases = sum(c.time_ms or 0.0 for c in report.cases)
                split["total"].append(total)
                split["to ready"].append(ready)
                split["cases"].append(cases)
                split["ready->end"].append(walls - ready - cases)
                split["judge"].append(total - walls)
            out[pid] = split
            print(
                f"  in-process split of {pid}: judge_source p50 {median(split['total']):.1f} ms", flush=True
            )
    finally:
        backend.close()
    return out


def http_split(m: Measured, db: dict[int, dict[str, Any]]) -> dict[str, list[float]]:
    """Where each timed Submit's time went, from the database's stamps."""
    split: dict[str, list[float]] = {
        k: [] for k in ("POST->row", "row->claimed", "judge_source", "around", "written->seen")
    }
    for s in m.subs:
        row = db.get(s.id)
        if row is None:
            continue
        created, started, finished = (db_stamp(row[k]) for k in ("created_at", "started_at", "finished_at"))
        if created is None or started is None or finished is None or row["elapsed_ms"] is None:
            continue
        elapsed = float(row["elapsed_ms"])
        split["POST->row"].append((created - s.sent_wall) * 1000)
        split["row->claimed"].append((started - created) * 1000)
        split["judge_source"].append(elapsed)
        split["around"].append((finished - started) * 1000 - elapsed)
        split["written->seen"].append((s.done_wall - finished) * 1000)
    return split


def p50(values: list[float]) -> float | None:
    return round(median(values), 1) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20, help="timed Submits per problem (default 20)")
    parser.add_argument("--problems", help="comma-separated ids (default: every problems/2*)")
    parser.add_argument(
        "--mode", choices=("cold", "warm", "fork"), default="fork", help="JUDGE_SANDBOX__MODE"
    )
    parser.add_argument("--floor-n", type=int, default=20, help="repetitions of each floor (default 20)")
    parser.add_argument(
        "--inner-n", type=int, default=10, help="in-process judgements per problem for the split (0: none)"
    )
    parser.add_argument(
        "--gap-ms", type=float, default=250, help="untimed pause between Submits (default 250)"
    )
    add_server_options(parser)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs) and the database")
    parser.add_argument("--name", help="bench/results/NAME.json (default problems, problems_pg, ...)")
    args = parser.parse_args()
    check_server_options(parser, args)
    problems = args.problems.split(",") if args.problems else shipped_problems()
    unknown = [p for p in problems if p not in shipped_problems()]
    if unknown:
        parser.error(f"no such problems: {unknown}")

    measured = {}
    for pid in problems:
        measured[pid] = Measured(pid, problem_floor_ms(pid, args.floor_n))
        print(f"floor of {pid}: p50 {median(measured[pid].floor):.1f} ms", flush=True)
    with judge_server("docker", mode=args.mode, prefix="bench-problems-", **server_shape(args)) as server:
        client = Client(server.url, register(server.url, "bench"))
        for pid in parts_first(problems):
            judged_ac(client, pid, reference_code(pid))
        for pid in problems:
            code = reference_code(pid)
            judged_ac(client, pid, code)  # fills the reference's cache
            for _ in range(args.n):
                time.sleep(args.gap_ms / 1000)
                measured[pid].subs.append(judged_ac(client, pid, code))
            lat = [s.latency_ms for s in measured[pid].subs]
            print(f"submit {pid}: p50 {median(lat):.1f} ms", flush=True)
        shape = server.describe()
        db, _ = read_db(server.database_url)
    inner = inner_split(problems, args.mode, args.inner_n) if args.inner_n > 0 else {}

    rows: list[dict[str, Any]] = []
    for pid in problems:
        m = measured[pid]
        lat = [s.latency_ms for s in m.subs]
        floor, submit = median(m.floor), median(lat)
        stages = http_split(m, db)
        rows.append(
            {
                "problem": pid,
                "floor_p50_ms": round(floor, 1),
                "floor_p95_ms": round(percentile(m.floor, 0.95), 1),
                "n": len(lat),
                "submit_p50_ms": round(submit, 1),
                "submit_p95_ms": round(percentile(lat, 0.95), 1),
                "over_floor_ms": round(submit - floor, 1),
                "x_floor_p50": round(submit / floor, 1) if floor else None,
                "within_40_ms": submit - floor <= WITHIN_MS,
                "http_split_p50_ms": {k: p50(v) for k, v in stages.items()},
                "inner_split_p50_ms": {k: p50(v) for k, v in inner.get(pid, {}).items()},
            }
        )
    print(f"\nevery problem's Submit -> verdict over HTTP, idle, docker {args.mode} ({shape_label(shape)})")
    print(
        f"{'problem':<8} {'floor p50':>10} {'submit p50':>11} {'p95':>8} {'- floor':>8} "
        f"{'x floor':>8} {'<= 40 ms':>9}"
    )
    for r in rows:
        print(
            f"{r['problem']:<8} {r['floor_p50_ms']:>10} {r['submit_p50_ms']:>11} {r['submit_p95_ms']:>8} "
            f"{r['over_floor_ms']:>8} {r['x_floor_p50']!s:>8} {'yes' if r['within_40_ms'] else 'NO':>9}"
        )
    heads = ["POST->row", "row->claimed", "judge_source", "around", "written->seen"]
    inner_heads = ["to ready", "cases", "ready->end", "judge", "total"]
    print("\nwhere the rest goes, p50 ms: the database's stamps of the timed Submits | the same Submit")
    print("judged in this process (judge_source's total split: sandbox to ready, the cases in the runner,")
    print("the rest of the runs, the judge's own parse + compare + diagnose)")
    print(
        f"{'problem':<8}"
        + "".join(f"{h:>14}" for h in heads)
        + " |"
        + "".join(f"{h:>11}" for h in inner_heads)
    )
    for r in rows:
        http, inside = r["http_split_p50_ms"], r["inner_split_p50_ms"]
        print(
            f"{r['problem']:<8}"
            + "".join(f"{http.get(h)!s:>14}" for h in heads)
            + " |"
            + "".join(f"{inside.get(h, '-')!s:>11}" for h in inner_heads)
        )
    over = [r["problem"] for r in rows if not r["within_40_ms"]]
    print(f"\nmore than {WITHIN_MS:g} ms over the floor: {', '.join(over) if over else 'none'}")
    path = save(run_name("problems", args), rows, mode=args.mode, n=args.n, gap_ms=args.gap_ms, **shape)
    print(f"results: {path}")


if __name__ == "__main__":
    main()
