"""qwen/weights.py with a dataclass-free Config (SimpleNamespace), one read of each file whose
tensors are cloned out of a single buffer, and a hand-written strict load that lists every problem."""

import json
import os
import struct
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

DT = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


class Config(SimpleNamespace):
    @staticmethod
    def load(path):
        raw = json.loads(Path(path, "config.json").read_bytes())
        return Config(**raw.get("text_config", raw))


def find_model():
    value = os.environ.get("QWEN_MODEL", "")
    if value:
        if not os.path.isfile(os.path.join(value, "config.json")):
            raise FileNotFoundError(f"QWEN_MODEL={value!r} is not a Qwen3.5 checkpoint folder")
        return Path(value)
    home = Path(os.path.expanduser("~")) / "models" / "qwen3.5"
    if (home / "config.json").is_file():
        return home
    tiny = Path(__file__).resolve().parents[1] / "tiny-qwen3.5"
    if (tiny / "config.json").is_file():
        sys.stderr.write(f"tiny practice checkpoint {tiny} (QWEN_MODEL points the scripts at the real one)\n")
        return tiny
    raise FileNotFoundError("no checkpoint found: set QWEN_MODEL, or download it to ~/models/qwen3.5")


def _tensors(file):
    blob = memoryview(Path(file).read_bytes())
    n = struct.unpack_from("<Q", blob)[0]
    header = json.loads(bytes(blob[8 : 8 + n]))
    data = torch.frombuffer(bytearray(blob[8 + n :]), dtype=torch.uint8)
    for name, info in header.items():
        if name != "__metadata__":
            a, b = info["data_offsets"]
            yield name, data[a:b].view(DT[info["dtype"]]).reshape(info["shape"]).clone()


def _name(key):
    if key.startswith(("model.visual.", "mtp.")):
        return None
    for prefix in ("model.language_model.", "model."):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def load_weights(path):
    folder = Path(path)
    index = folder / "model.safetensors.index.json"
    shards = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.exists() else None
    files = [folder / s for s in shards] if shards else sorted(folder.glob("*.safetensors"))
    return {name: t for f in files for key, t in _tensors(f) if (name := _name(key)) is not None}


def load(module, W, prefix):
    sub = {k[len(prefix) :]: v for k, v in W.items() if k.startswith(prefix)}
    own = dict(module.named_parameters())
    own.update((n, b) for n, b in module.named_buffers() if n in module.state_dict())
    problems = [f"missing {n}" for n in own if n not in sub]
    problems += [f"unexpected {n}" for n in sub if n not in own]
    problems += [f"{n}: shape {tuple(sub[n].shape)} vs {tuple(t.shape)}" for n, t in own.items() if n in sub and sub[n].shape != t.shape]
    if problems:
        raise RuntimeError(f"cannot load {prefix!r}: " + "; ".join(problems))
    with torch.no_grad():
        for n, t in own.items():
            t.copy_(sub[n])
    return module
