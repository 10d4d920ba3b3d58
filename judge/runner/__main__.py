import contextlib
import os
import sys
import warnings

# Before anything imports torch: torch without numpy (the practice kit's venvs) warns about it
# when some of its modules load, and the learner's printed output must not show that.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

from judge.runner.main import main  # noqa: E402

code = main()
# Leave without the interpreter's shutdown: it would wait for threads the learner's code
# started and run its atexit hooks, after the result stream is already complete.
for stream in (sys.stdout, sys.stderr):
    with contextlib.suppress(Exception):
        stream.flush()
os._exit(code)
