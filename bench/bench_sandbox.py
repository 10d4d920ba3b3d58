"""One judgement of problem 204 against the floor: `python bench/bench_sandbox.py [--repeat N]`.

bare         the reference's cases in this warm process (the floor, measured in every run)
local        judge_source through the local backend (a new runner process per judgement)
docker cold  a new container per judgement
docker warm  a container started ahead of time with torch imported, used once
docker fork  a fork server's fresh child per judgement (per-job uid, rlimits, seccomp)

The expected observations are cached first, so only the learner's run is measured. For the
warm and fork rows the pool is refilled between judgements and the judge then stays idle
for `--idle-ms` (untimed): each timed run finds a ready container whose fork server has
its next child forked and set up, as an idle server's submission does (`--idle-ms 0`
measures judgements back to back instead). A second table splits each judgement into
where its time goes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from common import REPO, bare_ms, median, percentile, print_table, row, save_and_plot, timed


class Timing:
    """Passes runs to a backend and keeps each run's outcome, to split the time."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.outcomes: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, stdin: bytes, limits: Any, watch: Any = None) -> Any:
        outcome = self.inner.run(stdin, limits, watch)
        self.outcomes.append(outcome)
        return outcome


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--modes", default="local,cold,warm,fork", help="which rows to measure")
    parser.add_argument("--idle-ms", type=float, default=200.0, help="untimed pause before each judgement")
    args = parser.parse_args()

    from judge.authoring.package import find_problem
    from judge.backends import make_backend
    from judge.core.grading import judge_source
    from judge.expected import ExpectedStore
    from judge.settings import SandboxSettings
    from sandbox.docker_backend import DockerBackend

    problem = find_problem("204", REPO / "problems")
    source = (problem.root / "solutions/accepted/div_sqrt_sum.py").read_text()
    floor_values = bare_ms(repeat=max(30, args.repeat))
    floor = median(floor_values)
    rows = [row("bare (floor)", floor_values, floor)]
    split: list[dict[str, float | str]] = []
    store = ExpectedStore(Path(tempfile.mkdtemp(prefix="bench-cache-")))
    for mode in args.modes.split(","):
        name = "local" if mode == "local" else "docker"
        try:
            settings = SandboxSettings(mode=mode if name == "docker" else "cold", pool_size=1)  # type: ignore[arg-type]
            backend, _ = make_backend(name, settings)
        except Exception as exc:  # no engine or no image: say so and go on
            print(f"({mode}: not available: {exc})")
            continue
        pool = backend.pool if isinstance(backend, DockerBackend) else None
        timing = Timing(backend)
        try:
            judge_source(problem, source, backend, store)  # fill the reference cache
            if pool is not None:
                pool.fill(120)
            totals: list[float] = []

            def once(timing: Timing = timing, totals: list[float] = totals) -> None:
                report = judge_source(problem, source, timing, store)  # type: ignore[arg-type]
                assert report.verdict == "AC", report.verdict
                totals.append(sum(c.time_ms for c in report.cases))

            def refill(pool: Any = pool) -> None:
                if pool is not None:
                    pool.fill(120)
                time.sleep(args.idle_ms / 1000)

            values = timed(once, args.repeat, between=refill)
        finally:
            backend.close()
        label = "local: a new runner process" if mode == "local" else f"docker {mode}"
        rows.append(row(label, values, floor))
        outcomes = timing.outcomes[-len(values) :]
        ready = [1000 * (o.ready_s or 0.0) for o in outcomes]
        walls = [1000 * o.wall_s for o in outcomes]
        split.append(
            {
                "what": label,
                "total p50": median(values),
                "to ready": median(ready),
                "ready -> end": median([w - r for w, r in zip(walls, ready, strict=True)]),
                "cases (runner)": median(totals),
                "judge (parse, compare)": median([v - w for v, w in zip(values, walls, strict=True)]),
                "total p95": percentile(values, 0.95),
            }
        )
    print_table("problem 204, one judgement of all cases", rows)
    print("\nwhere one judgement's time goes (ms, p50)")
    keys = [k for k in split[0] if k != "what"] if split else []
    print(f"{'what':<30}" + "".join(f"{k:>24}" for k in keys))
    for r in split:
        print(f"{r['what']!s:<30}" + "".join(f"{float(r[k]):>24.1f}" for k in keys))
    save_and_plot("sandbox", rows, split=split)


if __name__ == "__main__":
    main()
