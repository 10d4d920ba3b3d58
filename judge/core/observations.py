"""Observation trees: what a case returns, as a JSON manifest plus a flat set of tensors.

A case returns tensors, numbers, bools, strings, dtypes, None, and lists, tuples and dicts
(string keys) of these. The runner encodes such a tree into a manifest node (plain JSON)
and a dict of named tensors (sent as one safetensors blob). The judge decodes the manifest
strictly: it is untrusted data written by a process that ran learner code.

Manifest nodes:
  {"t": "tensor", "k": "<key in the blob>"}
  {"t": "int" | "bool" | "str", "v": ...}     {"t": "float", "v": 1.5 | "nan" | "inf" | "-inf"}
  {"t": "none"}                               {"t": "dtype", "v": "torch.float32"}
  {"t": "list" | "tuple", "v": [node, ...]}   {"t": "dict", "v": [["key", node], ...]}
  {"t": "other", "type": "numpy.ndarray"}     (a value of a type that cannot be observed)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from judge.core.errors import JudgeError

MAX_DEPTH = 16
MAX_NODES = 4096
MAX_STR = 4096
# No case observes an integer beyond int64; a larger one can only be a forged manifest (and
# one of 10**400 would overflow float() in a checker).
MAX_INT = 2**63


class ObservationError(JudgeError, ValueError):
    """A manifest that is not a well-formed observation tree."""


@dataclass(frozen=True)
class Unobservable:
    """Stands for a value whose type cannot be sent back (for example a numpy array)."""

    type_name: str


def encode(value: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Turn an observation tree into (manifest node, tensors). Runs inside the sandbox."""
    tensors: dict[str, torch.Tensor] = {}
    count = [0]

    def enc(v: Any, depth: int) -> dict[str, Any]:
        count[0] += 1
        if count[0] > MAX_NODES:
            raise ObservationError(f"observation has more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise ObservationError(f"observation is nested deeper than {MAX_DEPTH}")
        if isinstance(v, torch.Tensor):
            key = str(len(tensors))
            # A plain, contiguous, detached CPU copy: subclasses, views and autograd state stay behind.
            tensors[key] = v.detach().as_subclass(torch.Tensor).to("cpu").contiguous().clone()
            return {"t": "tensor", "k": key}
        if v is None:
            return {"t": "none"}
        if isinstance(v, bool):
            return {"t": "bool", "v": v}
        if isinstance(v, int):
            return {"t": "int", "v": int(v)}
        if isinstance(v, float):
            f = float(v)
            return {"t": "float", "v": f if math.isfinite(f) else repr(f)}
        if isinstance(v, str):
            return {"t": "str", "v": v[:MAX_STR]}
        if isinstance(v, torch.dtype):
            return {"t": "dtype", "v": str(v)}
        if isinstance(v, dict):
            items = []
            for k, item in v.items():
                if not isinstance(k, str):
                    raise ObservationError(f"observation dict keys must be strings, got {type(k).__name__}")
                items.append([k[:MAX_STR], enc(item, depth + 1)])
            return {"t": "dict", "v": items}
        if isinstance(v, (list, tuple)):
            kind = "tuple" if isinstance(v, tuple) else "list"
            return {"t": kind, "v": [enc(item, depth + 1) for item in v]}
        cls = type(v)
        return {"t": "other", "type": f"{cls.__module__}.{cls.__qualname__}"[:200]}

    return enc(value, 0), tensors


def decode(node: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """Rebuild an observation tree from an untrusted manifest; raises ObservationError."""
    count = [0]
    used: set[str] = set()

    def dec(n: Any, depth: int) -> Any:
        count[0] += 1
        if count[0] > MAX_NODES or depth > MAX_DEPTH:
            raise ObservationError("observation manifest is too large or too deep")
        if not isinstance(n, dict) or not isinstance(n.get("t"), str):
            raise ObservationError("observation node is not an object with a type")
        t = n["t"]
        v = n.get("v")
        if t == "tensor":
            key = n.get("k")
            if not isinstance(key, str) or key not in tensors:
                raise ObservationError(f"observation names a tensor {key!r} that the blob lacks")
            if key in used:
                raise ObservationError(f"observation uses tensor {key!r} twice")
            used.add(key)
            return tensors[key]
        if t == "none":
            return None
        if t == "bool" and isinstance(v, bool):
            return v
        if t == "int" and isinstance(v, int) and not isinstance(v, bool) and -MAX_INT <= v <= MAX_INT:
            return v
        if t == "float":
            if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_INT):
                return float(v)
            if v in ("nan", "inf", "-inf"):
                return float(v)
        if t == "str" and isinstance(v, str) and len(v) <= MAX_STR:
            return v
        if t == "dtype" and isinstance(v, str) and v.startswith("torch."):
            dtype = getattr(torch, v[len("torch.") :], None)
            if isinstance(dtype, torch.dtype):
                return dtype
        if t in ("list", "tuple") and isinstance(v, list):
            items = [dec(item, depth + 1) for item in v]
            return tuple(items) if t == "tuple" else items
        if t == "dict" and isinstance(v, list):
            out: dict[str, Any] = {}
            for pair in v:
                if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                    raise ObservationError("observation dict entry is not a [key, value] pair")
                if pair[0] in out:
                    raise ObservationError(f"observation dict repeats key {pair[0]!r}")
                out[pair[0]] = dec(pair[1], depth + 1)
            return out
        if t == "other" and isinstance(n.get("type"), str):
            return Unobservable(n["type"][:200])
        raise ObservationError(f"malformed observation node of type {t!r}")

    result = dec(node, 0)
    if len(used) != len(tensors):
        raise ObservationError("the blob holds tensors that the manifest does not name")
    return result
