"""解码时线性注意力层的递推状态没有带到下一次调用：卷积状态接着用了，delta 规则却每次都从全 0 的状态开始，模型忘掉了前面所有的 token。完整前向完全正确，只在通过缓存接着算时才错，而且从第一个线性注意力层就开始错。把 GatedDeltaNet 返回的新递推状态存起来，下次调用时传回去。
While decoding, the linear-attention layers do not carry the recurrent state to the next call: the conv state goes on, but the delta rule starts from a zero state every time, and the model forgets every earlier token. A full forward is exact; only a call that continues from the cache is wrong, from the first linear-attention layer on. Keep the recurrent state GatedDeltaNet returns and pass it back at the next call."""

import json
import struct
from pathlib import Path

import torch
import torch.nn as nn

from qwen.attention import GatedAttention
from qwen.checkpoint import load_checkpoint
from qwen.embedding import TiedEmbedding
from qwen.kv_cache import KVCache, cached_attention
from qwen.linear_attention import GatedDeltaNet
from qwen.mlp import SwiGLU
from qwen.norm import RMSNorm
from qwen.rope import apply_rope, rope_frequencies

SAFETENSORS_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def read_safetensors(path):
    """{name: tensor} from a .safetensors file: an u64 header size, a JSON header, raw bytes."""
    raw = Path(path).read_bytes()
    (header_size,) = struct.unpack("<Q", raw[:8])
    header_end = 8 + header_size
    header = json.loads(raw[8:header_end])
    header.pop("__metadata__", None)
    data = raw[header_end:]
    tensors = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        flat = torch.frombuffer(bytearray(data[start:end]), dtype=SAFETENSORS_DTYPES[info["dtype"]])
        tensors[name] = flat.reshape(info["shape"])
    return tensors


class FullAttention(GatedAttention):
    """Problem 209's layer, and the same layer decoding: keys and values kept in problem 210's cache."""

    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps):
        super().__init__(dim, n_heads, n_kv_heads, head_dim, eps)
        self.shape = (n_heads, n_kv_heads, head_dim)

    def forward(self, x, cos, sin, positions, cache=None):
        if cache is None:  # the whole sequence at once, from position 0: problem 209 as it is
            return super().forward(x, cos[positions], sin[positions])
        batch, seq, _ = x.shape
        n_heads, n_kv_heads, hd = self.shape
        q, gate = self.q_proj(x).view(batch, seq, n_heads, 2 * hd).split(hd, dim=-1)
        k = self.k_proj(x).view(batch, seq, n_kv_heads, hd)
        v = self.v_proj(x).view(batch, seq, n_kv_heads, hd)
        # QK-norm, then RoPE at the tokens' absolute positions (problem 205 takes (batch, seq, heads, d)).
        q = apply_rope(self.q_norm(q), cos, sin, positions).transpose(1, 2)
        k = apply_rope(self.k_norm(k), cos, sin, positions).transpose(1, 2)
        out = cached_attention(q, k, v.transpose(1, 2), cache)  # stores k, v; attends to all so far
        out = out.transpose(1, 2).reshape(batch, seq, n_heads * hd)
        # The gate in the activations' dtype, as transformers applies it.
        return self.o_proj(out * torch.sigmoid(gate.reshape(batch, seq, n_heads * hd)))


class DecoderLayer(nn.Module):
    """Pre-norm: x + mixer(norm(x)), then + mlp(norm(.)). The mixer is linear or full attention."""

    def __init__(self, config, kind):
        super().__init__()
        dim, eps = config["hidden_size"], config["rms_norm_eps"]
        self.kind = kind
        self.input_layernorm = RMSNorm(dim, eps)
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(
                dim,
                config["linear_num_key_heads"],
                config["linear_num_value_heads"],
                config["linear_key_head_dim"],
                config["linear_value_head_dim"],
                config["linear_conv_kernel_dim"],
                eps,
            )
        elif kind == "full_attention":
            self.self_attn = FullAttention(
                dim, config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"], eps
            )
        else:
            raise ValueError(f"unknown layer type {kind!r}")
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = SwiGLU(dim, config["intermediate_size"])

    def forward(self, x, cos, sin, positions, cache, index):
        h = self.input_layernorm(x)
        if self.kind == "full_attention":
            h = self.self_attn(h, cos, sin, positions, None if cache is None else cache.layers[index])
        elif cache is None:
            h = self.linear_attn(h)
        else:
            # The conv window and the recurrent state go in, their successors come back out.
            fresh_recurrent = self.linear_attn.zero_state(x.shape[0])[1]
            h, (conv, _) = self.linear_attn(h, (cache.layers[index][0], fresh_recurrent))
            cache.layers[index] = (conv, fresh_recurrent)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x))


class Cache:
    """What decoding carries between calls: per layer a KV cache (full attention) or the conv
    and recurrent states (linear attention), and how many tokens the model has seen."""

    def __init__(self, model, batch, max_len):
        self.length = 0
        dtype = model.embed_tokens.weight.dtype
        self.layers = []
        for layer in model.layers:
            if layer.kind == "full_attention":
                _, n_kv_heads, hd = layer.self_attn.shape
                self.layers.append(KVCache(batch, n_kv_heads, max_len, hd, dtype=dtype))
            else:
                self.layers.append(layer.linear_attn.zero_state(batch))


class Qwen35(nn.Module):
    def __init__(self, config):
        super().__init__()
        dim = config["hidden_size"]
        self.embed_tokens = TiedEmbedding(config["vocab_size"], dim)  # also the LM head
        self.layers = nn.ModuleList(DecoderLayer(config, kind) for kind in config["layer_types"])
        self.norm = RMSNorm(dim, config["rms_norm_eps"])
        rope = config["rope_parameters"]
        rotary_dim = int(config["head_dim"] * rope["partial_rotary_factor"])
        # Plain attributes, not buffers: model.to(torch.bfloat16) must leave the tables in fp32.
        self.cos, self.sin = rope_frequencies(rotary_dim, config["max_position_embeddings"], rope["rope_theta"])

    def new_cache(self, batch, max_len):
        return Cache(self, batch, max_len)

    def forward(self, input_ids, cache=None, hidden_states=False):
        seq = input_ids.shape[1]
        past = 0 if cache is None else cache.length  # positions go on from the tokens already seen
        positions = torch.arange(past, past + seq)
        x = self.embed_tokens.embed(input_ids)
        hidden = [x]
        for index, layer in enumerate(self.layers):
            x = layer(x, self.cos, self.sin, positions, cache, index)
            hidden.append(x)
        x = self.norm(x)
        hidden[-1] = x  # as transformers gives them: the last entry is the normed output
        if cache is not None:
            cache.length = past + seq
        logits = self.embed_tokens.logits(x)
        return (logits, tuple(hidden)) if hidden_states else logits

    def generate(self, input_ids, max_new_tokens):
        """Greedy decoding: the prompt in one call, then one token per call through the cache."""
        cache = self.new_cache(input_ids.shape[0], input_ids.shape[1] + max_new_tokens)
        logits = self(input_ids, cache=cache)
        tokens = [logits[:, -1:].argmax(dim=-1)]  # (batch, 1): the token after the prompt
        for _ in range(max_new_tokens - 1):  # the last token chosen is never fed back
            logits = self(tokens[-1], cache=cache)
            tokens.append(logits.argmax(dim=-1))
        return torch.cat([input_ids, *tokens], dim=1)


def load_model(checkpoint_dir):
    folder = Path(checkpoint_dir)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    model = Qwen35(config)
    # Problem 215: by name, strict, "model." stripped; the tied head needs nothing of its own.
    load_checkpoint(model, read_safetensors(folder / "model.safetensors"))
    return model
