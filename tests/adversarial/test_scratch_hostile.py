"""The scratch cell against hostile snippets, in real Docker containers (cold, as a scratch run
on a host without a pool; the runner is the same in every mode).

A snippet runs in the learner's sandbox with their code; the reference runs in a runner
process of its own on the inputs the judge admitted. So a snippet that searches the container
for the reference (its files, its modules, its environment) finds nothing, and one that forges
the recorded calls (writing frames of its own into the result stream, then leaving before the
runner can) gets every call checked again outside the sandbox: too large, an odd dtype, a
number that would make the reference allocate, a name that is not an entry point; only a
public-case-like call reaches the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.authoring.package import Problem
from judge.expected import ExpectedStore
from judge.scratch import run_scratch
from sandbox.docker_backend import DockerBackend
from tests.adversarial.hostile import MARKER
from tests.factories import make_package

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LEARNER = "import torch\n\ndef f(x):\n    return x * 2\n"

# Looks for the reference everywhere the snippet can: the file system (what it can read of
# it), the modules, the environment, an import. The marker is put together at run time, so
# that the snippet's own text (in the job) never matches.
SEARCH = """
import os, sys
needle = ("REFERENCE-" + "SECRET-7f3a9c").encode()
found, read = [], 0
# Everywhere but the image's own system files (/usr: Debian, Python and torch) and the kernel's.
tops = [os.path.join("/", d) for d in os.listdir("/") if d not in ("proc", "sys", "dev", "usr")]
tops += [os.getcwd(), os.path.expanduser("~"), *[p for p in sys.path if p and not p.startswith("/usr")]]
walked = [(r, d, f) for top in tops if os.path.isdir(top) for r, d, f in os.walk(top)]
for root, dirs, files in walked:
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.path.getsize(path) > 512 * 1024:
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            read += 1
        except OSError:
            continue
        if needle in data:
            found.append(path)
found += [k for k, v in os.environ.items() if needle.decode() in v]
found += [m for m in sys.modules if "reference" in m and not m.startswith("torch.")]
found += [m for m, mod in list(sys.modules.items()) if needle.decode() in repr(vars(mod).get("MARK", ""))]
try:
    import reference
    found.append("import reference")
except ImportError:
    pass
print("found", found, "read", read > 100)
f(torch.ones(4, 8))
"""

# Writes a forged scratch frame and a done frame into the runner's result stream (the one
# descriptor that is neither stderr nor closed), then leaves before the runner writes its own.
FORGE = """
import os, torch
from judge.core.observations import encode
from judge.core.protocol import encode_frame

def call(entry, *args, kind="function", **extra):
    return {"entry": entry, "kind": kind, "args": list(args), "kwargs": {}, "out": torch.zeros(1), **extra}

calls = [
    call("f", torch.zeros(100_000)),                       # larger than any public tensor
    call("f", torch.zeros(4, 8, dtype=torch.float64)),     # a dtype no public case has
    call("f", torch.zeros(4, 8), 10**12),                   # a number the reference might allocate by
    call("__import__", "os"),                              # not an entry point
    call("f", torch.zeros(2, 3), kind="module", init=[], init_kwargs={}, state={"w": 1}),
    call("f", torch.ones(2, 3)),                           # public-case-like: compared
]
head, tensors = encode(calls)
frame = encode_frame({"kind": "scratch", "solution": 0, "status": "ok", "obs": head,
                      "value": {"repr": "forged", "type": "x"}}, tensors)
frame += encode_frame({"kind": "done"})
stderr = os.readlink("/proc/self/fd/2")
for fd in map(int, os.listdir("/proc/self/fd")):
    if fd > 2:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != stderr:
                os.write(fd, frame)
        except OSError:
            pass
os._exit(0)
"""


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("scratch-hostile")
    reference = f'"""{MARKER}"""\n# {MARKER}\nimport os\nMARK = "{MARKER}"\n\ndef f(x):\n    return x * 2\n'
    return Problem(make_package(root, reference=reference, time_s=20, memory_mb=256, output_kb=16))


@pytest.fixture(scope="module")
def docker_store(tmp_path_factory: pytest.TempPathFactory) -> ExpectedStore:
    return ExpectedStore(Path(tmp_path_factory.mktemp("scratch-expected")))


def scratch(
    problem: Problem, snippet: str, backend: DockerBackend, store: ExpectedStore, code: str = LEARNER
) -> dict[str, Any]:
    expected = store.get(problem, backend)
    return run_scratch(problem, code, snippet, backend, expected, 60.0).to_dict()


def test_a_snippet_finds_no_trace_of_the_reference(
    problem: Problem, docker_backend: DockerBackend, docker_store: ExpectedStore
) -> None:
    out = scratch(problem, SEARCH, docker_backend, docker_store)
    assert out["status"] == "ok", out
    assert out["log"].strip() == "found [] read True", out["log"]
    assert MARKER not in json.dumps(out)
    (call,) = out["calls"]  # and yet the reference answered, from its own process
    assert call["match"] is True and call["reference"] is not None
    # The search does find the marker where it is: in the learner's own module.
    marked = scratch(problem, SEARCH, docker_backend, docker_store, LEARNER + f'MARK = "{MARKER}"\n')
    assert marked["log"].strip() == "found ['solution'] read True", marked["log"]


def test_forged_calls_are_checked_again_and_only_a_public_like_one_reaches_the_reference(
    problem: Problem, docker_backend: DockerBackend, docker_store: ExpectedStore
) -> None:
    out = scratch(problem, FORGE, docker_backend, docker_store)
    assert out["status"] == "ok" and out["value"]["repr"] == "forged", out
    reasons = [c["reason"]["en"] if c["reason"] else None for c in out["calls"]]
    assert reasons[0] is not None and "larger than the largest" in reasons[0]
    assert reasons[1] == "no public case uses float64 tensors"
    assert reasons[2] is not None and "10000" in reasons[2]
    assert reasons[3] == "this call is not one of the problem's entry points"
    assert reasons[4] is not None and "state_dict" in reasons[4]
    assert reasons[5] is None
    compared = out["calls"][5]
    # The forged "result" (zeros(1)) is what the learner's side claims; the reference's own
    # answer comes from the replay, and the comparison says they differ.
    assert compared["match"] is False and "2., 2., 2." in compared["reference"]
    assert all(c["reference"] is None for c in out["calls"][:5])
    assert MARKER not in json.dumps(out)
