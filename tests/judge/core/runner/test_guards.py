"""The forbidden-API guards keep no path back to what they replace.

Guards patch torch for the whole process, so each check runs in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.paths import REPO_ROOT

CHECK = """
import gc, inspect, torch, torch.nn.functional as F
originals = {"F.rms_norm": F.rms_norm, "torch.rms_norm": torch.rms_norm, "nn.RMSNorm": torch.nn.RMSNorm}
ids = {id(o) for o in originals.values()}
from judge.core.runner.guards import ForbiddenAPIError, Guards
guards = Guards()
guards.install(["torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm"])

HELD = ("__wrapped__", "__closure__", "__defaults__", "__kwdefaults__", "__bases__", "__mro__", "__dict__")

def reachable(obj, depth=0, seen=None):
    # Everything the guard itself holds: attributes, closure cells, defaults, bases, mro.
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 4:
        return False
    seen.add(id(obj))
    if id(obj) in ids:
        return True
    held = []
    for attr in HELD:
        try:
            held.append(object.__getattribute__(obj, attr))
        except AttributeError:
            pass
    out = []
    for h in held:
        if isinstance(h, (tuple, list)):
            out += list(h)
        elif isinstance(h, dict) or type(h).__name__ == "mappingproxy":
            out += list(h.values())
        elif h is not None:
            out.append(h)
    out = [c.cell_contents if type(c).__name__ == "cell" else c for c in out]
    return any(reachable(o, depth + 1, seen) for o in out if o is not torch.nn.Module and o is not object)

for name, guard in [("F.rms_norm", F.rms_norm), ("torch.rms_norm", torch.rms_norm),
                    ("aten.rms_norm", torch.ops.aten.rms_norm), ("nn.RMSNorm", torch.nn.RMSNorm)]:
    assert id(guard) not in ids, f"{name} is not guarded"
    assert inspect.unwrap(guard) is guard, f"{name}: inspect.unwrap reaches past the guard"
    assert not reachable(guard), f"{name}: the guard holds a path to the original"
assert isinstance(torch.nn.RMSNorm.__new__(torch.nn.RMSNorm), torch.nn.Module)
assert torch.nn.RMSNorm.__name__ == "RMSNorm" and F.rms_norm.__name__ == "rms_norm"
for call in (lambda: F.rms_norm(torch.ones(2), (2,)), lambda: torch.nn.RMSNorm(4),
             lambda: torch.ops.aten.rms_norm(torch.ones(2), [2])):
    try:
        call()
    except ForbiddenAPIError:
        pass
    else:
        raise AssertionError("a guarded call went through")
# aten.rms_norm carries the guard of the first forbidden name that reaches it.
assert guards.calls == ["torch.nn.functional.rms_norm", "torch.nn.RMSNorm"], guards.calls
print("ok")
"""


def in_a_fresh_interpreter(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_guards_keep_no_path_to_the_original() -> None:
    in_a_fresh_interpreter(CHECK)


LATER = """
import sys, types, torch, torch.nn.functional as F
from judge.core.runner import guards as g
original = F.rms_norm
g.index_torch()
# Modules that arrive after the index (a case file's imports, say), one of which holds an
# alias of a forbidden function; then one removed and one imported again, which the
# index must notice too.
late = types.ModuleType("torch._late_alias")
late.rms = original
sys.modules["torch._late_alias"] = late
sys.modules["cases"] = types.ModuleType("cases")
g.Guards().install(["torch.nn.functional.rms_norm"])
assert late.rms is not original and F.rms_norm is not original
other = types.ModuleType("torch._after_a_removal")
other.rms = torch.rms_norm
del sys.modules["cases"]
sys.modules["torch._after_a_removal"] = other
sys.modules["cases"] = types.ModuleType("cases")
kept = torch.rms_norm
g.Guards().install(["torch.rms_norm"])
assert other.rms is not kept, "a module imported after a removal was not indexed"
print("ok")
"""


def test_modules_loaded_after_the_index_are_guarded_too() -> None:
    in_a_fresh_interpreter(LATER)
