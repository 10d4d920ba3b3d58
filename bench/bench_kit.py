"""The practice kit against `import torch`: `python bench/bench_kit.py [--repeat N] [--cold]`.

Builds a kit of problem 204 into a temporary folder (`judge kit`), puts an accepted solution
in the learner's file (practice/qwen/norm.py), and then times, alternating, N times each:

torch (floor)       `python -c "import torch"`: what any judging in the learner's Python pays
torch, no shutdown  the same ending with os._exit: the interpreter's shutdown with torch
                    loaded takes longer than judging, and the kit skips it (exit_now)
torch + backward    the floor plus one `backward(gradient)`, which 204's cases call: torch then
                    imports torch.fx and sympy (a third of a second here), whoever runs them
kit                 `python practice/judge.py 204`: the public cases of the learner's file
kit, new process    the same with JUDGE_LOCAL_FORK=0: a new runner process per job, as the
                    kit judged before issue 35 (its other savings kept), with --cold

Each is a new process from the shell's point of view (start-up and exit included); a second
table gives the same runs' CPU time, which other work on the machine disturbs less. The
target (issue 35) is the kit's p50 within 0.3 s of the floor's, both measured in this run; the
table also gives the median of the pairwise differences (each kit run less the floor run just
before it), which the machine's drift disturbs less than a difference of two medians.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, percentile, print_table, row, save

TARGET_S = 0.3
BACKWARD = "import torch; x = torch.ones(2, requires_grad=True); (x * 2).backward(torch.ones(2))"
NO_SHUTDOWN = "import os, torch; os._exit(0)"


def build_kit(out: Path, solution: Path) -> Path:
    made = subprocess.run(
        [sys.executable, "-m", "judge", "kit", "--out", str(out), "--problems", "204"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if made.returncode != 0:
        raise SystemExit(f"judge kit failed:\n{made.stderr[-3000:]}")
    practice = out / "practice"
    shutil.copyfile(solution, practice / "qwen" / "norm.py")
    return practice


def timed_run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU milliseconds of one command (its children's CPU included: the runner)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cold", action="store_true", help="also time the kit with a new runner process")
    parser.add_argument(
        "--solution",
        type=Path,
        default=REPO / "problems/204-rmsnorm/solutions/accepted/div_sqrt_sum.py",
        help="the learner's file to judge (an accepted one by default)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-kit-") as tmp:
        practice = build_kit(Path(tmp), args.solution)
        # The learner's shell: their environment, the folder that holds practice/.
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
        cold_env = {**env, "JUDGE_LOCAL_FORK": "0"}
        python = sys.executable
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "torch (floor)": ([python, "-c", "import torch"], env),
            "torch, no shutdown": ([python, "-c", NO_SHUTDOWN], env),
            "torch + backward(gradient)": ([python, "-c", BACKWARD], env),
            "kit: judge.py 204": ([python, "practice/judge.py", "204"], env),
        }
        if args.cold:
            commands["kit, new runner process"] = ([python, "practice/judge.py", "204"], cold_env)
        for argv, run_env in commands.values():  # untimed: page cache, .pyc files
            timed_run(argv, practice.parent, run_env)
        values: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # alternating, so that drift falls on every row alike
            for name, (argv, run_env) in commands.items():
                wall, used = timed_run(argv, practice.parent, run_env)
                values[name].append(wall)
                cpu[name].append(used)

    floor_values = values["torch (floor)"]
    floor = percentile(floor_values, 0.5)
    rows = [row(name, v, floor) for name, v in values.items()]
    print_table(f"python practice/judge.py 204 against python -c 'import torch' (n={args.repeat})", rows)
    cpu_floor = percentile(cpu["torch (floor)"], 0.5)
    cpu_rows = [row(name, v, cpu_floor) for name, v in cpu.items()]
    print_table("the same runs' CPU time (user + system, the runner child's included)", cpu_rows)
    kit = values["kit: judge.py 204"]
    pairwise = statistics.median(k - f for k, f in zip(kit, floor_values, strict=True))
    over = percentile(kit, 0.5) - floor
    backward = percentile(values["torch + backward(gradient)"], 0.5) - floor
    shutdown = floor - percentile(values["torch, no shutdown"], 0.5)
    met = "met" if over <= TARGET_S * 1000 else "missed"
    print(f"\nkit p50 - floor p50: {over:.0f} ms (target {TARGET_S * 1000:.0f} ms: {met})")
    print(f"median of pairwise differences (kit - floor just before): {pairwise:.0f} ms")
    print(f"torch's first backward(gradient): {backward:.0f} ms over the floor")
    print(f"the floor's own shutdown (the kit skips its own): {shutdown:.0f} ms")
    path = save(
        "kit",
        rows,
        floor_p50_ms=round(floor, 1),
        kit_minus_floor_p50_ms=round(over, 1),
        kit_minus_floor_pairwise_ms=round(pairwise, 1),
        backward_minus_floor_p50_ms=round(backward, 1),
        floor_shutdown_p50_ms=round(shutdown, 1),
        target_ms=TARGET_S * 1000,
        cpu_rows=cpu_rows,
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
