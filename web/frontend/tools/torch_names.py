"""Write src/torch_names.json: the public names of torch's modules and of Tensor, for the editor.

The editor completes `torch.`, `torch.nn.`, `F.` and tensor methods from this static list, so
the front end's build needs no torch. Re-run it when the platform's torch changes:

    .venv/bin/python web/frontend/tools/torch_names.py
"""

from __future__ import annotations

import inspect
import json
import types
import warnings
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parent.parent / "src" / "torch_names.json"

# The modules a learner's solution reaches for; each is completed after its dotted path.
MODULES = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.linalg",
    "torch.special",
    "torch.fft",
    "torch.autograd",
)
# Classes whose members follow a dot: a tensor's methods after any expression, a module's
# after `self.` (the learner's nn.Module subclass).
CLASSES = {"Tensor": torch.Tensor, "Module": torch.nn.Module}

# One letter per kind, the editor's completion types (function, class, namespace, constant...).
KINDS = {"f": "function", "c": "class", "n": "namespace", "v": "variable", "m": "method", "p": "property"}


def kind_of(value: object) -> str:
    if isinstance(value, types.ModuleType):
        return "n"
    if inspect.isclass(value):
        return "c"
    if callable(value):
        return "f"
    return "v"


def from_torch(value: object) -> bool:
    kind = type(value).__module__
    plain = not (inspect.isclass(value) or callable(value) or isinstance(value, types.ModuleType))
    if isinstance(value, bool | str | dict | list | tuple) or kind == "typing" or (plain and "._" in kind):
        return False  # flags, docstring fragments, type aliases, internals: not for a solution
    if isinstance(value, types.ModuleType):
        return value.__name__.startswith("torch")
    if inspect.isclass(value) or inspect.isfunction(value):
        return (getattr(value, "__module__", None) or "torch").startswith("torch")
    return True  # dtypes, constants and C builtins


def public(names: list[str]) -> list[str]:
    return sorted(n for n in set(names) if not n.startswith("_"))


def module_names(path: str) -> dict[str, str]:
    module = __import__(path, fromlist=["_"])
    exported = getattr(module, "__all__", None)
    names = public(list(exported) if exported else dir(module))
    if path == "torch":
        # torch.__all__ leaves out the dtypes and the submodules a learner types every day.
        names = public(dir(module))
    by_kind: dict[str, list[str]] = {}
    for name in names:
        try:
            value = getattr(module, name)
        except Exception:  # lazy attributes that fail on import: not worth completing
            continue
        if not from_torch(value):
            continue  # what the module imported for itself (typing's Optional, math, warnings)
        by_kind.setdefault(kind_of(value), []).append(name)
    return {kind: " ".join(items) for kind, items in sorted(by_kind.items())}


def class_names(cls: type) -> dict[str, str]:
    by_kind: dict[str, list[str]] = {}
    for name in public(dir(cls)):
        raw = inspect.getattr_static(cls, name, None)
        kind = "p" if isinstance(raw, property) or not callable(getattr(cls, name, None)) else "m"
        by_kind.setdefault(kind, []).append(name)
    return {kind: " ".join(items) for kind, items in sorted(by_kind.items())}


def main() -> None:
    warnings.simplefilter("ignore")  # deprecated names still warn when touched
    data = {
        "version": torch.__version__,
        "kinds": KINDS,
        "modules": {path: module_names(path) for path in MODULES},
        "classes": {name: class_names(cls) for name, cls in CLASSES.items()},
    }
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"{OUT}: {OUT.stat().st_size} bytes for torch {torch.__version__}")


if __name__ == "__main__":
    main()
