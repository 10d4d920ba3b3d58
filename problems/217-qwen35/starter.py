import json
import struct
from pathlib import Path

import torch
import torch.nn as nn

# 你自己的零件（对应题目通过之后即可导入）：
# Your own parts (importable once you have solved their problems):
# from qwen.embedding import TiedEmbedding              # 203
# from qwen.norm import RMSNorm                         # 204
# from qwen.rope import rope_frequencies, apply_rope    # 205
# from qwen.mlp import SwiGLU                           # 206
# from qwen.attention import GatedAttention             # 209
# from qwen.kv_cache import KVCache, cached_attention   # 210
# from qwen.checkpoint import load_checkpoint           # 215
# from qwen.linear_attention import GatedDeltaNet       # 218

SAFETENSORS_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def read_safetensors(path):
    """读 .safetensors 文件，返回 {名字: 张量}（已经写好，不是本题的重点）。
    Read a .safetensors file into {name: tensor} (given: it is not the lesson here).

    格式：8 字节小端 u64 = 头的长度 n；n 字节 JSON 头
    {name: {"dtype", "shape", "data_offsets": [start, end]}, "__metadata__": {...}}；然后是原始字节。
    Layout: an 8-byte little-endian u64 n, an n-byte JSON header (as above), then the raw bytes
    (offsets count from there).
    """
    raw = Path(path).read_bytes()
    (header_size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_size])
    header.pop("__metadata__", None)
    data = raw[8 + header_size :]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(data[start:end]), dtype=SAFETENSORS_DTYPES[info["dtype"]])
        tensors[name] = flat.reshape(info["shape"])
    return tensors


class Qwen35(nn.Module):
    """Qwen3.5 文本模型。
    The Qwen3.5 text model.

    子模块的名字就是检查点里去掉 "model." 的名字：embed_tokens, layers.N.{input_layernorm,
    linear_attn | self_attn, post_attention_layernorm, mlp}, norm（LM 头与 embed_tokens 共用权重）。
    Submodules are named as in the checkpoint without "model.": embed_tokens, layers.N.{input_layernorm,
    linear_attn | self_attn, post_attention_layernorm, mlp}, norm (the LM head is embed_tokens).

    forward(input_ids, cache=None, hidden_states=False):
        input_ids (batch, seq) int64 -> logits (batch, seq, vocab) fp32；
        hidden_states=True 时返回 (logits, hidden)，hidden 有 层数 + 1 个张量：嵌入、除最后一层外
        每层的输出、最后的归一化输出；cache 不为 None 时从缓存接着算（位置接着往后数）并更新缓存。
        input_ids (batch, seq) int64 -> logits (batch, seq, vocab) fp32;
        hidden_states=True returns (logits, hidden), hidden holding layers + 1 tensors: the
        embeddings, each layer's output but the last's, the final normed output; with a cache,
        continue from it (positions go on) and update it.
    new_cache(batch, max_len): 一个空的解码状态
                               an empty decoding state
    generate(input_ids, max_new_tokens): 贪心续写，返回 (batch, seq + max_new_tokens)
                                         greedy continuation, returns (batch, seq + max_new_tokens)
    """

    def __init__(self, config):
        super().__init__()
        raise NotImplementedError

    def new_cache(self, batch, max_len):
        raise NotImplementedError

    def forward(self, input_ids, cache=None, hidden_states=False):
        raise NotImplementedError

    def generate(self, input_ids, max_new_tokens):
        raise NotImplementedError


def load_model(checkpoint_dir):
    """读 checkpoint_dir/config.json 建模型，再把 checkpoint_dir/model.safetensors 装进去。
    Build the model from checkpoint_dir/config.json and load checkpoint_dir/model.safetensors into it.
    """
    raise NotImplementedError
