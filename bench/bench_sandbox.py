"""One judgement of problem 204 against the floor: `python bench/bench_sandbox.py [--repeat N]`.

bare     the reference's cases in this warm process (the floor, measured in every run)
local    judge_source through the local backend (a new runner process per judgement)
docker   judge_source through a new container per judgement (skipped without an engine)
The expected observations are cached first, so only the learner's run is measured.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from common import REPO, bare_ms, median, plot, print_table, row, save, timed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()

    from judge.backends import make_backend
    from judge.expected import ExpectedStore
    from judge.grading import judge_source
    from judge.package import find_problem

    problem = find_problem("204", REPO / "problems")
    source = (problem.root / "solutions/accepted/div_sqrt_sum.py").read_text()
    floor_values = bare_ms(repeat=max(30, args.repeat))
    floor = median(floor_values)
    rows = [row("bare (floor)", floor_values, floor)]
    store = ExpectedStore(Path(tempfile.mkdtemp(prefix="bench-cache-")))
    for name in ("local", "docker"):
        try:
            backend, _ = make_backend(name)
        except Exception as exc:  # no engine or no image: say so and go on
            print(f"({name}: not available: {exc})")
            continue
        judge_source(problem, source, backend, store)  # fill the reference cache

        def once(backend=backend) -> None:  # type: ignore[no-untyped-def]
            report = judge_source(problem, source, backend, store)
            assert report.verdict == "AC", report.verdict

        rows.append(row(f"{name}: cold (new runner each)", timed(once, args.repeat), floor))
    print_table("problem 204, one judgement of all cases", rows)
    print(f"results: {save('sandbox', rows)}")
    picture = plot("sandbox", rows)
    if picture:
        print(f"plot: {picture}")


if __name__ == "__main__":
    main()
