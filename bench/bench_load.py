"""Closed-loop load: K learners submit -> verdict through the HTTP API of a real `judge serve`.

`python bench/bench_load.py [--learners 8 | --sweep 1,2,4,8] [--duration 60] [--warmup 10]
[--backend docker] [--mode cold|warm|fork] [--workers W] [--pool P] [--allow-unsandboxed]
[--database-url URL] [--processes N] [--judge-processes M] [--judge-threads T]`

The server: `judge serve` on a temp SQLite file by default. With a PostgreSQL URL the run
creates a database of its own on that server (dropped at the end unless --keep);
--processes N is `judge serve --processes N` (PostgreSQL only); --judge-processes M starts M
`judge worker --threads T` beside it, and the server's own judging threads are then 0 unless
--workers says otherwise. All their logs are read for trouble at the end.

Each learner has its own account and API token, and loops: POST /api/submissions (problem
204, submit), follow GET /api/submissions/{id}?wait=20 (a long-poll, as the browser does; or
poll every --poll-ms) until it is done, check the verdict,
submit again at once. One submission in four (--wrong-every) is a known wrong solution from
the package: the reference must be AC, a wrong solution anything but AC or SE.

Counting, per learner count K (one server for the whole sweep, drained between counts):
  submitted  POSTs started inside the measured window (after the warm-up); their latencies
             (POST sent -> done seen) are the percentiles
  judged/s   verdicts seen inside the window / its length, whenever they were submitted: in a
             closed loop past the warm-up this is the server's steady throughput
  errors     HTTP errors, unexpected verdicts and SE, over the whole run (warm-up included)
  lost       accepted but never seen done before the drain timeout, over the whole run
Afterwards the database is read to cross-check: one row per accepted POST, none left
queued or running, every row finished exactly once (one done/failed event), verdicts as
seen through the API, and each learner's score row equal to the best of their submits.
The same rows give where the time went (queue wait, judging, result -> seen by the poll).
The floor (bare) is measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from common import (
    REPO,
    RESULTS,
    Client,
    Server,
    add_server_options,
    bare_ms,
    check_server_options,
    judge_server,
    machine_cpu,
    median,
    percentile,
    register,
    run_name,
    save,
    server_shape,
    shape_label,
)


@dataclass
class Sub:
    """One submission as a learner saw it. Times: perf_counter seconds since the phase began."""

    learner: int
    solution: str  # "reference" or the wrong solution's file name
    expect_ac: bool
    sent: float
    sent_wall: float  # time.time() when the POST was sent, to compare with the DB's stamps
    id: int | None = None
    accepted: float | None = None  # POST answered 202
    done: float | None = None  # the poll that saw status done returned
    done_wall: float | None = None
    verdict: str | None = None
    polls: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def latency_ms(self) -> float | None:
        return None if self.done is None else (self.done - self.sent) * 1000


@dataclass
class Phase:
    learners: int
    warmup_s: float
    duration_s: float
    subs: list[Sub]
    post_ms: list[float]
    get_ms: list[float]
    cpu: dict[str, float]
    drained_s: float  # from the window's end until the last submission was seen done


@dataclass
class Codes:
    reference: str
    wrong: list[tuple[str, str]]  # (file name, source)


def load_codes(problem_id: str) -> Codes:
    (root,) = sorted((REPO / "problems").glob(f"{problem_id}-*"))
    wrong = [(p.name, p.read_text()) for p in sorted((root / "solutions" / "wrong").glob("*.py"))]
    return Codes((root / "reference.py").read_text(), wrong)


def learner_loop(
    index: int,
    client: Client,
    args: argparse.Namespace,
    codes: Codes,
    t0: float,
    stop_at: float,
    give_up_at: float,
    subs: list[Sub],
    post_ms: list[float],
    get_ms: list[float],
) -> None:
    poll_s = args.poll_ms / 1000
    n = 0
    wrong_n = index  # learners start at different wrong solutions
    # Learners start spread over one poll interval, not in lock step.
    time.sleep(random.Random(index).uniform(0, max(poll_s, 0.05)))
    while time.perf_counter() < stop_at:
        wrong = (
            args.wrong_every > 0
            and bool(codes.wrong)
            and (n + index) % args.wrong_every == args.wrong_every - 1
        )
        n += 1
        if wrong:
            name, code = codes.wrong[wrong_n % len(codes.wrong)]
            wrong_n += 1
        else:
            name, code = "reference", codes.reference
        body = {"problem_id": args.problem, "code": code, "mode": "submit"}
        sub = Sub(index, name, not wrong, time.perf_counter() - t0, time.time())
        subs.append(sub)
        start = time.perf_counter()
        try:
            status, got = client.request("POST", "/api/submissions", body)
        except Exception as exc:  # no answer: whether it was queued is for the DB check to say
            sub.errors.append(f"POST: {type(exc).__name__}: {exc}")
            time.sleep(poll_s)
            continue
        post_ms.append((time.perf_counter() - start) * 1000)
        if status != 202:
            sub.errors.append(f"POST: HTTP {status}: {str(got)[:200]}")
            time.sleep(poll_s)
            continue
        sub.id, sub.accepted = int(got["id"]), time.perf_counter() - t0
        wait = "" if poll_s else "?wait=20"  # poll_s 0: long-poll, as the browser and the kit do
        while time.perf_counter() < give_up_at:
            time.sleep(poll_s)
            start = time.perf_counter()
            try:
                status, got = client.request("GET", f"/api/submissions/{sub.id}{wait}")
            except Exception as exc:
                sub.errors.append(f"GET: {type(exc).__name__}: {exc}")
                continue
            get_ms.append((time.perf_counter() - start) * 1000)
            sub.polls += 1
            if status != 200:
                sub.errors.append(f"GET: HTTP {status}: {str(got)[:200]}")
                continue
            if got["status"] == "done":
                sub.done, sub.done_wall = time.perf_counter() - t0, time.time()
                sub.verdict = str(got["verdict"])
                if sub.verdict == "SE":
                    sub.errors.append(f"SE: {got.get('warnings')}")
                elif (sub.verdict == "AC") != sub.expect_ac:
                    sub.errors.append(f"verdict {sub.verdict} for {name}")
                break
        else:
            return  # drain timeout: this one is lost, and so is the rest of the run


def run_phase(server: Server, tokens: list[str], args: argparse.Namespace, codes: Codes) -> Phase:
    k = len(tokens)
    t0 = time.perf_counter()
    window_start, stop_at = t0 + args.warmup, t0 + args.warmup + args.duration
    give_up_at = stop_at + args.drain_timeout
    per_learner: list[tuple[list[Sub], list[float], list[float]]] = [([], [], []) for _ in tokens]
    clients = [Client(server.url, token) for token in tokens]
    threads = [
        threading.Thread(
            target=learner_loop,
            args=(i, clients[i], args, codes, t0, stop_at, give_up_at, *per_learner[i]),
            name=f"learner-{i}",
            daemon=True,
        )
        for i in range(k)
    ]
    for t in threads:
        t.start()
    # CPU over the measured window: the web processes (with their judging threads), the
    # `judge worker` processes, their reaped children (the runner processes of the local
    # backend), PostgreSQL's backends of the run's database, this load generator, the machine.
    time.sleep(max(0.0, window_start - time.perf_counter()))
    before = (server.cpu(), time.process_time(), machine_cpu(), time.perf_counter())
    time.sleep(max(0.0, stop_at - time.perf_counter()))
    after = (server.cpu(), time.process_time(), machine_cpu(), time.perf_counter())
    for t in threads:
        t.join()
    drained = time.perf_counter() - stop_at
    for c in clients:
        c.close()
    span = after[3] - before[3]
    cpu = {
        "server_cores": (after[0]["web"] - before[0]["web"]) / span,
        "server_children_cores": (after[0]["runners"] - before[0]["runners"]) / span,
        "judge_processes_cores": (after[0]["judges"] - before[0]["judges"]) / span,
        "load_generator_cores": (after[1] - before[1]) / span,
        "machine_busy_cores": (after[2][0] - before[2][0]) / span,
        "machine_cores": (after[2][1] - before[2][1]) / span,
    }
    if "postgres" in after[0]:
        cpu["postgres_cores"] = (after[0]["postgres"] - before[0]["postgres"]) / span
    subs = [s for lst, _, _ in per_learner for s in lst]
    subs.sort(key=lambda s: s.sent)
    post_ms = [v for _, lst, _ in per_learner for v in lst]
    get_ms = [v for _, _, lst in per_learner for v in lst]
    return Phase(k, args.warmup, args.duration, subs, post_ms, get_ms, cpu, drained)


# --- the database afterwards -------------------------------------------------------------


def db_stamp(value: datetime | None) -> float | None:
    """A stamp of the database (timezone-aware UTC, web.db.UTCDateTime) as a Unix time."""
    return None if value is None else value.timestamp()


def read_db(url: str) -> tuple[dict[int, dict[str, Any]], list[tuple[int, str, int, int, bool]]]:
    """The submissions (with their events counted by kind) and the score rows, through the
    platform's own models: one code path for SQLite and PostgreSQL."""
    from sqlalchemy import func, select

    from web.db import make_engine
    from web.scores.models import Score
    from web.submissions.models import Submission, SubmissionEvent

    engine = make_engine(url)
    try:
        with engine.connect() as db:
            columns = [
                Submission.id,
                Submission.user_id,
                Submission.problem_id,
                Submission.mode,
                Submission.status,
                Submission.verdict,
                Submission.score,
                Submission.max_score,
                Submission.attempts,
                Submission.created_at,
                Submission.started_at,
                Submission.finished_at,
                Submission.report["elapsed_ms"].as_float().label("elapsed_ms"),
            ]
            subs = {int(r.id): {**r._asdict(), "events": {}} for r in db.execute(select(*columns))}
            events = select(SubmissionEvent.submission_id, SubmissionEvent.kind, func.count()).group_by(
                SubmissionEvent.submission_id, SubmissionEvent.kind
            )
            for sub_id, kind, count in db.execute(events):
                subs[int(sub_id)]["events"][kind] = int(count)
            scores = [
                (int(u), str(p), int(b), int(m), bool(v))
                for u, p, b, m, v in db.execute(
                    select(Score.user_id, Score.problem_id, Score.best_score, Score.max_score, Score.solved)
                )
            ]
    finally:
        engine.dispose()
    return subs, scores


def check_db(url: str, phases: list[Phase], extra_ids: set[int]) -> dict[str, Any]:
    """What the database says, against what the learners saw. Problems go to `problems`."""
    subs, scores = read_db(url)
    seen = {s.id: s for p in phases for s in p.subs if s.id is not None}
    unanswered = sum(1 for p in phases for s in p.subs if s.id is None and s.errors)
    problems: list[str] = []
    expected_rows = len(seen) + len(extra_ids)
    if len(subs) != expected_rows:
        problems.append(
            f"{len(subs)} submission rows, {expected_rows} accepted POSTs ({unanswered} POSTs without answer)"
        )
    missing = [i for i in [*seen, *extra_ids] if i not in subs]
    if missing:
        problems.append(f"accepted but not in the database: {missing[:10]}")
    unfinished = [i for i, s in subs.items() if s["status"] != "done"]
    if unfinished:
        problems.append(f"{len(unfinished)} left queued or running: {unfinished[:10]}")
    finished = {i: s["events"].get("done", 0) + s["events"].get("failed", 0) for i, s in subs.items()}
    twice = [i for i, n in finished.items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} finished more than once (done/failed events): {twice[:10]}")
    never = [i for i, n in finished.items() if n == 0]
    if never:
        problems.append(f"{len(never)} without a done/failed event: {never[:10]}")
    reclaimed = [i for i, s in subs.items() if (s["attempts"] or 0) > 1 or s["events"].get("claimed", 0) > 1]
    if reclaimed:
        problems.append(f"{len(reclaimed)} claimed more than once (lease lost or requeued): {reclaimed[:10]}")
    mismatched = [i for i, s in seen.items() if i in subs and s.verdict and subs[i]["verdict"] != s.verdict]
    if mismatched:
        problems.append(f"{len(mismatched)} verdicts differ from what the API showed: {mismatched[:10]}")
    best: dict[tuple[int, str], int] = {}
    for s in subs.values():
        if s["mode"] == "submit" and s["score"] is not None:
            key = (int(s["user_id"]), str(s["problem_id"]))
            best[key] = max(best.get(key, 0), int(s["score"]))
    score_map = {(u, p): (b, m, v) for u, p, b, m, v in scores}
    if set(score_map) != set(best):
        problems.append(f"score rows for {len(score_map)} (user, problem) pairs, submits from {len(best)}")
    wrong_scores = [k for k, v in best.items() if k in score_map and score_map[k][0] != v]
    if wrong_scores:
        problems.append(f"{len(wrong_scores)} score rows differ from the best submit: {wrong_scores[:5]}")
    return {
        "rows": len(subs),
        "accepted_posts": expected_rows,
        "posts_without_answer": unanswered,
        "requeued_events": sum(s["events"].get("requeued", 0) for s in subs.values()),
        "failed_events": sum(s["events"].get("failed", 0) for s in subs.values()),
        "score_rows": len(score_map),
        "problems": problems,
        "subs": subs,
    }


# --- the figures --------------------------------------------------------------------------


def pct(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None}
    return {
        "p50": round(percentile(values, 0.5), 1),
        "p95": round(percentile(values, 0.95), 1),
        "p99": round(percentile(values, 0.99), 1),
        "max": round(max(values), 1),
    }


def summarise(phase: Phase, db: dict[int, dict[str, Any]], floor: float, label: str) -> dict[str, Any]:
    w0, w1 = phase.warmup_s, phase.warmup_s + phase.duration_s
    measured = [s for s in phase.subs if w0 <= s.sent < w1]
    latencies = [s.latency_ms for s in measured if s.latency_ms is not None]
    seen_in_window = [s for s in phase.subs if s.done is not None and w0 <= s.done < w1]
    lost = [s for s in phase.subs if s.id is not None and s.done is None]
    errors = [e for s in phase.subs for e in s.errors]
    p = pct(latencies)
    # Where the time went, from the DB's stamps (same clock as time.time() here).
    queue_wait, judging, judge_elapsed, write_to_seen, post_to_row = [], [], [], [], []
    for s in measured:
        row = db.get(s.id) if s.id is not None else None
        if row is None or s.done_wall is None:
            continue
        created, started, finished = (db_stamp(row[k]) for k in ("created_at", "started_at", "finished_at"))
        if created is None or started is None or finished is None:
            continue
        post_to_row.append((created - s.sent_wall) * 1000)
        queue_wait.append((started - created) * 1000)
        judging.append((finished - started) * 1000)
        if row["elapsed_ms"] is not None:
            judge_elapsed.append(float(row["elapsed_ms"]))
        write_to_seen.append((s.done_wall - finished) * 1000)
    mean_latency_s = sum(latencies) / len(latencies) / 1000 if latencies else 0.0
    return {
        "name": label,
        "learners": phase.learners,
        "submitted": len(measured),
        "judged_in_window": len(seen_in_window),
        "judged_per_s": round(len(seen_in_window) / phase.duration_s, 3),
        # Little's law for a closed loop without think time: throughput = K / mean latency.
        "littles_law_per_s": round(phase.learners / mean_latency_s, 3) if mean_latency_s else None,
        "n": len(latencies),
        "p50_ms": p["p50"],
        "p95_ms": p["p95"],
        "p99_ms": p["p99"],
        "max_ms": p["max"],
        "x_bare_p50": round(p["p50"] / floor, 1) if p["p50"] is not None and floor else None,
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:10],
        "lost": len(lost),
        "wrong_submitted": sum(1 for s in measured if not s.expect_ac),
        "total_submitted": len(phase.subs),
        "drained_s": round(phase.drained_s, 1),
        "breakdown_ms": {
            "post_to_row": pct(post_to_row),
            "queue_wait": pct(queue_wait),
            "claim_to_result_written": pct(judging),
            "judge_source_elapsed": pct(judge_elapsed),
            "result_written_to_seen": pct(write_to_seen),
            "http_post": pct(phase.post_ms),
            "http_get_poll": pct(phase.get_ms),
        },
        "polls_per_submission": round(sum(s.polls for s in measured) / len(measured), 1)
        if measured
        else None,
        "cpu_cores": {k: round(v, 2) for k, v in phase.cpu.items()},
    }


def timeline(phase: Phase, bucket_s: float) -> list[dict[str, float | None]]:
    """Per bucket of verdicts seen: judged per second and their latency percentiles."""
    end = phase.warmup_s + phase.duration_s + phase.drained_s
    out = []
    for b in range(int(end // bucket_s) + 1):
        lo, hi = b * bucket_s, (b + 1) * bucket_s
        lat = [
            s.latency_ms
            for s in phase.subs
            if s.done is not None and lo <= s.done < hi and s.latency_ms is not None
        ]
        out.append(
            {
                "t_s": lo,
                "judged_per_s": len(lat) / bucket_s,
                "p50_ms": percentile(lat, 0.5) if lat else None,
                "p95_ms": percentile(lat, 0.95) if lat else None,
            }
        )
    return out


BREAKDOWN_HEADS = {
    "post_to_row": "POST->row",
    "queue_wait": "row->claimed",
    "claim_to_result_written": "claimed->written",
    "judge_source_elapsed": "(judge_source)",
    "result_written_to_seen": "written->seen",
    "http_post": "HTTP POST",
    "http_get_poll": "HTTP GET (poll)",
}


def print_tables(title: str, floor_values: list[float], rows: list[dict[str, Any]]) -> None:
    floor = median(floor_values)
    print(f"\n{title}")
    head = f"{'what':<30} {'K':>3} {'subm':>5} {'judged':>6} {'judged/s':>9} {'p50 ms':>8} {'p95 ms':>8} "
    head += f"{'p99 ms':>8} {'max ms':>8} {'x bare':>7} {'err':>4} {'lost':>4}"
    print(head)
    f = pct(floor_values)
    print(
        f"{'bare (floor)':<30} {'-':>3} {len(floor_values):>5} {'-':>6} {round(1000 / floor, 1):>9} "
        f"{f['p50']:>8} {f['p95']:>8} {f['p99']:>8} {f['max']:>8} {1.0:>7} {'-':>4} {'-':>4}"
    )
    for r in rows:
        print(
            f"{r['name']:<30} {r['learners']:>3} {r['submitted']:>5} {r['judged_in_window']:>6} "
            f"{r['judged_per_s']:>9} "
            f"{r['p50_ms']!s:>8} {r['p95_ms']!s:>8} {r['p99_ms']!s:>8} {r['max_ms']!s:>8} "
            f"{r['x_bare_p50']!s:>7} {r['errors']:>4} {r['lost']:>4}"
        )
    print(
        "(subm: POSTs sent in the window; judged: verdicts seen in it; bare's judged/s: one core "
        "running the cases back to back; x bare: p50 / bare p50)"
    )
    print("\nwhere the time went (measured submissions, from the DB's stamps), p50 / p95 ms")
    parts = list(BREAKDOWN_HEADS)
    print(f"{'K':>3} " + " ".join(f"{BREAKDOWN_HEADS[p]:>18}" for p in parts))
    for r in rows:
        cells = [f"{r['breakdown_ms'][p]['p50']!s} / {r['breakdown_ms'][p]['p95']!s}" for p in parts]
        print(f"{r['learners']:>3} " + " ".join(f"{c:>18}" for c in cells))
    print("\nCPU in the window, cores busy on average (server: every web process with its judging")
    print("threads; runners: reaped child processes, i.e. the local backend's runners; containers show")
    print("only in machine)")
    # The columns of the judge workers and PostgreSQL only on runs that have them.
    judges = any(r["cpu_cores"]["judge_processes_cores"] for r in rows)
    postgres = any("postgres_cores" in r["cpu_cores"] for r in rows)
    extra_head = (f" {'workers':>8}" if judges else "") + (f" {'pg':>6}" if postgres else "")
    print(
        f"{'K':>3} {'server':>7}{extra_head} {'runners':>8} {'loadgen':>8} {'machine':>8} {'of':>4} "
        f"{'polls':>6} {'Little':>7}"
    )
    for r in rows:
        c = r["cpu_cores"]
        extra = (f" {c['judge_processes_cores']:>8}" if judges else "") + (
            f" {c.get('postgres_cores', '-')!s:>6}" if postgres else ""
        )
        print(
            f"{r['learners']:>3} {c['server_cores']:>7}{extra} {c['server_children_cores']:>8} "
            f"{c['load_generator_cores']:>8} {c['machine_busy_cores']:>8} {round(c['machine_cores']):>4} "
            f"{r['polls_per_submission']!s:>6} {r['littles_law_per_s']!s:>7}"
        )


def plot_timelines(name: str, title: str, phases: list[Phase], bucket_s: float) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot; pip install -r bench/requirements.txt)")
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for phase in phases:
        line = timeline(phase, bucket_s)
        t = [(i + 0.5) * bucket_s for i in range(len(line))]
        (drawn,) = top.plot(
            t, [b["judged_per_s"] for b in line], marker="o", ms=3, label=f"K={phase.learners}"
        )
        colour = drawn.get_color()
        bottom.plot(
            t, [b["p50_ms"] for b in line], color=colour, marker="o", ms=3, label=f"K={phase.learners} p50"
        )
        bottom.plot(t, [b["p95_ms"] for b in line], color=colour, ls="--", label=f"K={phase.learners} p95")
    for ax in (top, bottom):
        ax.axvspan(0, phases[0].warmup_s, color="#eeeeee", label=None)
        ax.axvline(phases[0].warmup_s + phases[0].duration_s, color="#999999", lw=0.8)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    top.set_ylabel(f"judged / s ({bucket_s:g} s buckets)")
    top.set_title(title + "\n(grey: warm-up; line: end of the window, then the drain)", fontsize=9)
    top.legend(fontsize=8)
    bottom.set_ylabel("submit -> verdict ms (by time seen)")
    bottom.set_xlabel("s since the learners started")
    bottom.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.png"
    fig.savefig(path, dpi=120)
    return path


def server_log_findings(text: str) -> dict[str, int]:
    """Counts of trouble in serve.log (tracebacks, locked database, lost leases, 5xx)."""
    return {
        "traceback": text.count("Traceback (most recent call last)"),
        "database_is_locked": text.count("database is locked"),
        "lease_lost": len(re.findall(r"lease of submission \d+ was lost", text)),
        "http_5xx": len(re.findall(r'" 5\d\d ', text)),
        "http_429": len(re.findall(r'" 429 ', text)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="docker")
    parser.add_argument("--mode", choices=("cold", "warm", "fork"), help="JUDGE_SANDBOX__MODE")
    parser.add_argument("--workers", type=int, help="JUDGE_WORKERS: judging threads in the server")
    parser.add_argument("--pool", type=int, help="JUDGE_SANDBOX__POOL_SIZE: warm sandboxes kept ready")
    parser.add_argument(
        "--allow-unsandboxed", action="store_true", help="JUDGE_ALLOW_UNSANDBOXED=1 (for --backend local)"
    )
    parser.add_argument("--learners", type=int, default=8, help="concurrent learners K (default 8)")
    parser.add_argument("--sweep", help="several learner counts in one run, e.g. 1,2,4,8 (one server)")
    parser.add_argument("--duration", type=float, default=60, help="measured window, s (default 60)")
    parser.add_argument("--warmup", type=float, default=10, help="s before the window (default 10)")
    parser.add_argument(
        "--poll-ms", type=float, default=0, help="status poll interval (default 0: long-poll with ?wait=)"
    )
    parser.add_argument("--wrong-every", type=int, default=4, help="every Nth submission is wrong (0: none)")
    parser.add_argument(
        "--drain-timeout", type=float, default=300, help="s to wait for verdicts after the window"
    )
    parser.add_argument("--bucket", type=float, default=5, help="s per bucket of the timeline plot")
    parser.add_argument("--problem", default="204")
    add_server_options(parser)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs) and the database")
    parser.add_argument(
        "--name", help="results file name: bench/results/NAME.json/.png (default load, load_pg_p2_j2, ...)"
    )
    args = parser.parse_args()
    check_server_options(parser, args)
    name = run_name("load", args)
    counts = [int(k) for k in args.sweep.split(",")] if args.sweep else [args.learners]
    if min(counts) < 1:
        parser.error("learner counts must be >= 1")

    codes = load_codes(args.problem)
    floor_values = bare_ms(args.problem)
    floor = median(floor_values)
    phases: list[Phase] = []
    with judge_server(
        args.backend,
        mode=args.mode,
        workers=args.workers,
        pool=args.pool,
        allow_unsandboxed=args.allow_unsandboxed,
        prefix="bench-load-",
        **server_shape(args),
    ) as server:
        log_head = server.log_text()
        found = re.search(r"(\d+) workers on the (\S+) backend", log_head)
        workers = found.group(1) if found else str(args.workers or "?")
        backend = server.backend
        mode = args.mode or "default"
        shape = server.describe()
        config = {
            "backend": backend,
            "mode": mode,
            "workers": workers,
            **shape,
            "pool": args.pool,
            "health": server.health,
            "poll_ms": args.poll_ms,
            "warmup_s": args.warmup,
            "duration_s": args.duration,
            "wrong_every": args.wrong_every,
            "problem": args.problem,
        }
        print(
            f"judge serve: {backend}, mode {mode}, {workers} workers, pool {args.pool}; "
            f"{shape_label(shape)}; health {server.health}"
        )
        tokens = [register(server.url, f"learner{i}") for i in range(max(counts))]
        # The first judgement fills the reference's cache (and may build the runtime image).
        priming = Client(server.url, register(server.url, "priming"))
        status, got = priming.request(
            "POST",
            "/api/submissions",
            {"problem_id": args.problem, "code": codes.reference, "mode": "submit"},
        )
        assert status == 202, (status, got)
        extra_ids = {int(got["id"])}
        started = time.perf_counter()
        while True:
            status, seen = priming.request("GET", f"/api/submissions/{got['id']}")
            if status == 200 and seen["status"] == "done":
                break
            if time.perf_counter() - started > max(args.drain_timeout, 600):
                raise SystemExit(f"the priming submission was not judged:\n{server.log_tail()}")
            time.sleep(0.1)
        if seen["verdict"] != "AC":
            raise SystemExit(f"the reference was not accepted: {seen['verdict']} {seen.get('warnings')}")
        print(f"priming submission judged in {time.perf_counter() - started:.1f} s")
        for k in counts:
            print(f"K={k}: {args.warmup:g} s warm-up + {args.duration:g} s measured ...", flush=True)
            phases.append(run_phase(server, tokens[:k], args, codes))
        db = check_db(server.database_url, phases, extra_ids)
        logs = server.logs()
        findings = {log: server_log_findings(text) for log, text in logs.items()}

    # Judging threads: the server's, or M judge workers x T threads ("2x2") when they judge.
    judging = f"{shape['judge_processes']}x{shape['judge_threads']}" if shape["judge_processes"] else workers
    label = f"{backend} {mode}, {judging} workers" + (f", pool {args.pool}" if args.pool is not None else "")
    rows = [summarise(p, db["subs"], floor, f"K={p.learners} {label}") for p in phases]
    following = f"polling every {args.poll_ms:g} ms" if args.poll_ms else "long-polling"
    title = f"problem {args.problem}, closed loop of K learners, {following} ({label})"
    if shape["database"] != "sqlite" or shape["processes"] > 1 or shape["judge_processes"]:
        title += f"\n{shape_label(shape)}"
    print_tables(title, floor_values, rows)
    print(
        f"\ndatabase: {db['rows']} rows for {db['accepted_posts']} accepted POSTs, "
        f"{db['score_rows']} score rows"
    )
    for problem in db["problems"]:
        print(f"  ! {problem}")
    if not db["problems"]:
        print("  ok: none left queued/running, each finished once, verdicts and scores as seen")
    for log, found_in in findings.items():
        print(f"{log}: {found_in}")
    for r in rows:
        if r["p50_ms"] is not None and r["p50_ms"] / 1000 > args.warmup:
            print(
                f"  note (K={r['learners']}): p50 latency {r['p50_ms'] / 1000:.1f} s > warm-up "
                f"{args.warmup:g} s: the window began before the queue was steady; use a longer --warmup"
            )
    for r in rows:
        for example in r["error_examples"]:
            print(f"  error (K={r['learners']}): {example}")
    bare = {
        "name": "bare (floor)",
        "n": len(floor_values),
        **{f"{k}_ms": v for k, v in pct(floor_values).items()},
    }
    path = save(
        name,
        [bare, *rows],
        config=config,
        database={k: v for k, v in db.items() if k != "subs"},
        server_log=findings.pop("serve.log"),
        worker_logs=findings,
        timelines={str(p.learners): timeline(p, args.bucket) for p in phases},
        submissions={str(p.learners): [asdict(s) for s in p.subs] for p in phases},
    )
    print(f"results: {path}")
    picture = plot_timelines(name, title, phases, args.bucket)
    if picture:
        print(f"plot: {picture}")
    if db["problems"] or any(r["lost"] or r["errors"] for r in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
