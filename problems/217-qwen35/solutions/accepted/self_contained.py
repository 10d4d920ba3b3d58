"""Every part written here again, in the style of transformers' modeling_qwen3_5: F.conv1d for the
causal conv, the chunked (WY) form of the gated delta rule for prompts and its recurrent form for
single tokens, scaled_dot_product_attention with an explicit mask, keys and values kept by
torch.cat, RoPE angles computed from inv_freq at every call, and a loader of its own."""

import json
import math
import struct
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def read_safetensors(path):
    raw = Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = bytearray(raw[8 + n + a : 8 + n + b])
        out[name] = torch.frombuffer(buf, dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


class ZeroCentredRMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).type_as(x)


class GatedNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, gate):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight.float() * y * F.silu(gate.float())).to(x.dtype)


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


def chunk_delta_rule(q, k, v, g, beta, state, chunk=64):
    """(B, H, T, d) inputs in fp32, state (B, H, dk, dv): the WY form, as transformers computes it."""
    b, h, t, _ = k.shape
    dv = v.shape[-1]
    pad = (chunk - t % chunk) % chunk
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    g, beta = (F.pad(x, (0, pad)) for x in (g, beta))
    n = (t + pad) // chunk
    v_beta, k_beta = v * beta[..., None], k * beta[..., None]
    q, k, k_beta, v_beta = (x.reshape(b, h, n, chunk, -1) for x in (q, k, k_beta, v_beta))
    g = g.reshape(b, h, n, chunk).cumsum(-1)
    upper = torch.ones(chunk, chunk, dtype=torch.bool).triu(1)
    decay = (g[..., :, None] - g[..., None, :]).masked_fill(upper, float("-inf")).exp()
    system = (k_beta @ k.transpose(-1, -2)) * decay
    new_v = torch.linalg.solve_triangular(system, v_beta, upper=False, unitriangular=True)
    k_cum = torch.linalg.solve_triangular(system, k_beta * g.exp()[..., None], upper=False, unitriangular=True)
    attn = (q @ k.transpose(-1, -2)) * decay
    q = q * g.exp()[..., None]
    k = k * (g[..., -1:] - g).exp()[..., None]
    out = torch.zeros(b, h, n, chunk, dv)
    for i in range(n):
        v_new = new_v[:, :, i] - k_cum[:, :, i] @ state
        out[:, :, i] = q[:, :, i] @ state + attn[:, :, i] @ v_new
        state = state * g[:, :, i, -1].exp()[..., None, None] + k[:, :, i].transpose(-1, -2) @ v_new
    return out.reshape(b, h, -1, dv)[:, :, :t], state


def recurrent_delta_rule(q, k, v, g, beta, state):
    outs = []
    for t in range(k.shape[2]):
        state = state * g[:, :, t].exp()[..., None, None]
        k_t = k[:, :, t]
        delta = (v[:, :, t] - torch.einsum("bhkv,bhk->bhv", state, k_t)) * beta[:, :, t, None]
        state = state + torch.einsum("bhk,bhv->bhkv", k_t, delta)
        outs.append(torch.einsum("bhkv,bhk->bhv", state, q[:, :, t]))
    return torch.stack(outs, dim=2), state


class LinearAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.nk, self.nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.kernel = c["linear_conv_kernel_dim"]
        self.conv_dim = 2 * self.nk * self.dk + self.nv * self.dv
        self.in_proj_qkv = nn.Linear(d, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(d, self.nv * self.dv, bias=False)
        self.in_proj_b = nn.Linear(d, self.nv, bias=False)
        self.in_proj_a = nn.Linear(d, self.nv, bias=False)
        self.conv1d = nn.Conv1d(self.conv_dim, self.conv_dim, self.kernel, groups=self.conv_dim, bias=False)
        self.dt_bias = nn.Parameter(torch.ones(self.nv))
        self.A_log = nn.Parameter(torch.zeros(self.nv))
        self.norm = GatedNorm(self.dv, c["rms_norm_eps"])
        self.out_proj = nn.Linear(self.nv * self.dv, d, bias=False)

    def forward(self, x, state):
        b, t, _ = x.shape
        mixed = self.in_proj_qkv(x).transpose(1, 2)  # (B, C, T)
        past = state.get("conv")
        if past is None:
            past = mixed.new_zeros(b, self.conv_dim, self.kernel - 1)
        window = torch.cat([past.to(mixed.dtype), mixed], dim=-1)
        state["conv"] = window[:, :, -(self.kernel - 1) :]
        mixed = F.silu(F.conv1d(window.float(), self.conv1d.weight.float(), groups=self.conv_dim)).to(x.dtype)
        q, k, v = mixed.transpose(1, 2).split([self.nk * self.dk, self.nk * self.dk, self.nv * self.dv], -1)
        rep = self.nv // self.nk
        q = q.reshape(b, t, self.nk, self.dk).repeat_interleave(rep, 2).transpose(1, 2).float()
        k = k.reshape(b, t, self.nk, self.dk).repeat_interleave(rep, 2).transpose(1, 2).float()
        v = v.reshape(b, t, self.nv, self.dv).transpose(1, 2).float()
        beta = torch.sigmoid(self.in_proj_b(x).float()).transpose(1, 2)
        g = (-self.A_log.float().exp() * F.softplus(self.in_proj_a(x).float() + self.dt_bias.float())).transpose(1, 2)
        q, k = l2norm(q) / math.sqrt(self.dk), l2norm(k)
        s = state.get("recurrent")
        if s is None:
            s = torch.zeros(b, self.nv, self.dk, self.dv)
        rule = recurrent_delta_rule if t == 1 else chunk_delta_rule
        o, state["recurrent"] = rule(q, k, v, g, beta, s)
        o = o.transpose(1, 2).to(x.dtype)  # (B, T, Hv, dv)
        z = self.in_proj_z(x).reshape(b, t, self.nv, self.dv)
        return self.out_proj(self.norm(o, z).reshape(b, t, -1))


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, self.h, self.kv, self.hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.q_proj = nn.Linear(d, self.h * self.hd * 2, bias=False)
        self.k_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(d, self.kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.h * self.hd, d, bias=False)
        self.q_norm = ZeroCentredRMSNorm(self.hd, c["rms_norm_eps"])
        self.k_norm = ZeroCentredRMSNorm(self.hd, c["rms_norm_eps"])

    def forward(self, x, cos, sin, state):
        b, t, _ = x.shape
        q, gate = self.q_proj(x).view(b, t, self.h, 2 * self.hd).chunk(2, dim=-1)
        q = self.q_norm(q).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(b, t, self.kv, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        r = cos.shape[-1]
        c, s = cos[None, None].to(x.dtype), sin[None, None].to(x.dtype)  # as transformers: tables in x's dtype
        q = torch.cat([q[..., :r] * c + rotate_half(q[..., :r]) * s, q[..., r:]], dim=-1)
        k = torch.cat([k[..., :r] * c + rotate_half(k[..., :r]) * s, k[..., r:]], dim=-1)
        if "k" in state:
            k, v = torch.cat([state["k"], k], dim=2), torch.cat([state["v"], v], dim=2)
        state["k"], state["v"] = k, v
        total = k.shape[2]
        allowed = torch.ones(t, total, dtype=torch.bool).tril(total - t)
        k, v = k.repeat_interleave(self.h // self.kv, 1), v.repeat_interleave(self.h // self.kv, 1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        out = out.transpose(1, 2).reshape(b, t, -1) * torch.sigmoid(gate.reshape(b, t, -1))
        return self.o_proj(out)


class Layer(nn.Module):
    def __init__(self, c, kind):
        super().__init__()
        self.kind = kind
        self.input_layernorm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        if kind == "linear_attention":
            self.linear_attn = LinearAttention(c)
        else:
            self.self_attn = Attention(c)
        self.post_attention_layernorm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = MLP(c["hidden_size"], c["intermediate_size"])

    def forward(self, x, cos, sin, state):
        h = self.input_layernorm(x)
        if self.kind == "linear_attention":
            h = self.linear_attn(h, state)
        else:
            h = self.self_attn(h, cos, sin, state)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x))


class DecodeState:
    def __init__(self, n_layers):
        self.seen = 0
        self.layers = [{} for _ in range(n_layers)]


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c, kind) for kind in c["layer_types"])
        self.norm = ZeroCentredRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        rope = c["rope_parameters"]
        dim = int(c["head_dim"] * rope["partial_rotary_factor"])
        self.inv_freq = 1.0 / rope["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)

    def new_cache(self, batch, max_len):
        return DecodeState(len(self.layers))

    def forward(self, input_ids, cache=None, hidden_states=False):
        state = cache if cache is not None else DecodeState(len(self.layers))
        t = input_ids.shape[1]
        pos = torch.arange(state.seen, state.seen + t, dtype=torch.float32)
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = F.embedding(input_ids, self.embed_tokens.weight)
        hidden = [x]
        for layer, layer_state in zip(self.layers, state.layers, strict=True):
            x = layer(x, cos, sin, layer_state)
            hidden.append(x)
        x = self.norm(x)
        hidden[-1] = x
        state.seen += t
        logits = x.float() @ self.embed_tokens.weight.float().T
        return (logits, tuple(hidden)) if hidden_states else logits

    def generate(self, input_ids, max_new_tokens):
        cache = self.new_cache(input_ids.shape[0], input_ids.shape[1] + max_new_tokens)
        out = input_ids
        step = input_ids
        for _ in range(max_new_tokens):
            nxt = self(step, cache=cache)[:, -1].argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            step = nxt
        return out


def load_model(checkpoint_dir):
    d = Path(checkpoint_dir)
    config = json.loads((d / "config.json").read_text())
    model = Model(config)
    params = dict(model.named_parameters())
    weights = {k.removeprefix("model."): v for k, v in read_safetensors(d / "model.safetensors").items()}
    if set(weights) != set(params):
        raise ValueError(f"checkpoint does not fit: {sorted(set(weights) ^ set(params))}")
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(weights[name])
    return model
