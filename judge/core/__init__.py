"""What a judgement needs, and what the practice kit copies whole to a learner's machine.

Standard library and torch only, Python 3.10 (tests/test_layers.py): the runner (which
also runs inside the sandbox), cases and checkers, the frame protocol, running a solution
through a backend, comparing, diagnosing, grading and the report. The backend interface
(`backend.py`) is declared here and implemented by `sandbox/`'s containers and by the local
backend (`local.py`), which the kit uses.
"""
