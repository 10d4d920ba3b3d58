"""Shared by the benchmarks: percentiles, the table, the floor ("bare") every run measures again."""

from __future__ import annotations

import json
import statistics
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds per call."""
    out = []
    for _ in range(repeat):
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


def save(name: str, rows: list[dict[str, float | str]]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"rows": rows, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    return path


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
