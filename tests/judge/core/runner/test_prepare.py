"""What a sandbox's runner has ready before any job: no shipped problem's forbidden API is left
for the guards to import during a job (importing torch.onnx cost each of 205's jobs 120 ms)."""

from __future__ import annotations

import json
import subprocess
import sys

from judge.authoring.package import Problem, all_problem_dirs
from tests.paths import REPO_ROOT

# After prepare(), which modules resolving each forbidden name (as Guards.install does) imports.
PROBE = """
import json, sys
from judge.core.runner.guards import resolve
from judge.core.runner.main import prepare
prepare()
imported = {}
for name in json.loads(sys.argv[1]):
    before = set(sys.modules)
    try:
        resolve(name)
    except (ImportError, AttributeError):
        pass  # not in this torch: nothing to guard, nothing imported for it
    imported[name] = sorted(set(sys.modules) - before)
print(json.dumps(imported))
"""


def test_no_forbidden_api_of_a_shipped_problem_makes_a_job_import_its_module() -> None:
    forbidden = sorted(
        {name for d in all_problem_dirs(REPO_ROOT / "problems") for name in Problem(d).spec.forbidden}
    )
    assert "torch.onnx.ops.rotary_embedding" in forbidden  # 205's, in a module torch loads lazily
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(forbidden)], capture_output=True, text=True, check=True
    )
    imported = json.loads(out.stdout.splitlines()[-1])
    assert imported == {name: [] for name in forbidden}
