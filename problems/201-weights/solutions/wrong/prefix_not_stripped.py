"""权重的名字还带着检查点里的前缀（`model.language_model.layers.0...`），课程的脚本按 `layers.0.input_layernorm.weight`、`norm.weight` 取就取不到。去掉语言模型的前缀：多模态检查点是 `model.language_model.`，只有文本的检查点是 `model.`；`lm_head.weight` 没有前缀，照原样保留。

The names still carry the checkpoint's prefix (`model.language_model.layers.0...`), so the course's scripts, which ask for `layers.0.input_layernorm.weight` and `norm.weight`, find nothing. Strip the language model's prefix: `model.language_model.` in a multimodal checkpoint, `model.` in a text-only one; `lm_head.weight` has none and stays as it is.
"""

import json
import os
import struct
import sys
from pathlib import Path

import torch

# safetensors' dtype names (the ones Qwen's checkpoints use, and a few more).
DTYPES = {
    "BF16": torch.bfloat16,
    "F16": torch.float16,
    "F32": torch.float32,
    "F64": torch.float64,
    "I64": torch.int64,
    "I32": torch.int32,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
# Prefixes of tensors that are not the text model's: the vision tower, the multi-token-prediction head.
SKIP = ("model.visual.", "mtp.")
# The text model's prefix: multimodal checkpoints first ("model.language_model.x" also starts with "model.").
TEXT_PREFIXES = ("model.language_model.", "model.")


class Config:
    """The text model's config: every field of config.json's text part, as an attribute."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    @classmethod
    def load(cls, path):
        raw = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
        # A multimodal checkpoint keeps the text model's fields under text_config.
        fields = raw.get("text_config", raw)
        return cls(**fields)


def find_model():
    """The checkpoint folder: $QWEN_MODEL, else ~/models/qwen3.5, else the kit's tiny practice one."""
    env = os.environ.get("QWEN_MODEL")
    if env:
        folder = Path(env)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"QWEN_MODEL={env}: not a checkpoint folder (no config.json in it)")
        return folder
    default = Path.home() / "models" / "qwen3.5"
    if (default / "config.json").is_file():
        return default
    tiny = Path(__file__).resolve().parent.parent / "tiny-qwen3.5"
    if (tiny / "config.json").is_file():
        print(
            f"找不到 Qwen3.5 检查点，先用练习用的小检查点 {tiny}；把 QWEN_MODEL 设为真实检查点的文件夹，"
            f"脚本就会用它 / no Qwen3.5 checkpoint found: using the tiny practice checkpoint {tiny}; "
            "set QWEN_MODEL to the real checkpoint's folder to run the scripts on it",
            file=sys.stderr,
        )
        return tiny
    raise FileNotFoundError(
        "no Qwen3.5 checkpoint: set QWEN_MODEL to its folder, or put it in ~/models/qwen3.5 "
        f"(looked in {default})"
    )


def read_safetensors(path):
    """{name: tensor} of one .safetensors file: an u64 header size, a JSON header, raw bytes."""
    raw = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    header.pop("__metadata__", None)
    data = raw[8 + size :]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(data[start:end]), dtype=DTYPES[info["dtype"]])
        tensors[name] = flat.reshape(info["shape"])
    return tensors


def load_weights(path):
    """Every tensor of the text model, by its name inside the text model; lm_head.weight as it is."""
    folder = Path(path)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        files = sorted(set(weight_map.values()))
    else:
        files = sorted(p.name for p in folder.glob("*.safetensors"))
    weights = {}
    for file in files:
        for key, tensor in read_safetensors(folder / file).items():
            if key.startswith(SKIP):
                continue
            weights[key] = tensor
    return weights


def load(module, W, prefix):
    """The entries of W under `prefix` into `module`'s parameters and buffers, strictly; the module."""
    entries = {key[len(prefix) :]: value for key, value in W.items() if key.startswith(prefix)}
    targets = module.state_dict(keep_vars=True)
    missing = [name for name in targets if name not in entries]
    unexpected = [name for name in entries if name not in targets]
    mismatched = [
        f"{name}: {tuple(entries[name].shape)} vs {tuple(t.shape)}"
        for name, t in targets.items()
        if name in entries and entries[name].shape != t.shape
    ]
    if missing or unexpected or mismatched:
        raise RuntimeError(
            f"loading {prefix!r} into {type(module).__name__}: "
            f"missing {missing}, unexpected {unexpected}, shape mismatch {mismatched}"
        )
    with torch.no_grad():
        for name, t in targets.items():
            t.copy_(entries[name])
    return module
