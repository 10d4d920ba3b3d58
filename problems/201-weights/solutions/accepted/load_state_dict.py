"""qwen/weights.py in the style of Hugging Face's loaders: a Config that reads its fields through
__getattr__, torch's own strict load_state_dict, and safetensors read tensor by tensor with seek."""

import json
import os
import struct
import sys
from pathlib import Path

import torch

SAFETENSORS_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "I64": torch.int64}


class Config:
    def __init__(self, fields):
        self._fields = dict(fields)

    def __getattr__(self, name):
        try:
            return self.__dict__["_fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    @classmethod
    def load(cls, path):
        with open(os.path.join(path, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        return cls(config.get("text_config", config))


def find_model():
    if os.getenv("QWEN_MODEL"):
        path = Path(os.environ["QWEN_MODEL"])
        if not path.joinpath("config.json").exists():
            raise FileNotFoundError(f"QWEN_MODEL is set to {path}, which holds no config.json")
        return path
    candidates = [
        Path.home() / "models" / "qwen3.5",
        Path(__file__).resolve().parent.parent / "tiny-qwen3.5",
    ]
    for i, path in enumerate(candidates):
        if path.joinpath("config.json").exists():
            if i == 1:
                print(f"using the tiny practice checkpoint {path}; set QWEN_MODEL for the real one", file=sys.stderr)
            return path
    raise FileNotFoundError("set QWEN_MODEL to the checkpoint folder, or put the checkpoint in ~/models/qwen3.5")


def _read(file):
    out = {}
    with open(file, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
        base = 8 + n
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            f.seek(base + start)
            buf = bytearray(f.read(end - start))
            out[name] = torch.frombuffer(buf, dtype=SAFETENSORS_DTYPES[info["dtype"]]).view(info["shape"])
    return out


def load_weights(path):
    path = Path(path)
    index = path / "model.safetensors.index.json"
    if index.exists():
        files = {path / f for f in json.loads(index.read_text())["weight_map"].values()}
    else:
        files = set(path.glob("*.safetensors"))
    W = {}
    for file in sorted(files):
        for key, t in _read(file).items():
            if key.startswith("model.visual.") or key.startswith("mtp."):
                continue
            W[key.removeprefix("model.language_model.").removeprefix("model.")] = t
    return W


def load(module, W, prefix):
    state = {k[len(prefix) :]: v for k, v in W.items() if k.startswith(prefix)}
    module.load_state_dict(state, strict=True)  # copies into the existing tensors, in their dtype
    return module
