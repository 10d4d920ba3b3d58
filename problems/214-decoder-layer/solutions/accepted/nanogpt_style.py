"""Accepted: nanoGPT's CausalSelfAttention and Block, with GQA and the zero-centred norm. The
scores are q @ k^T scaled by 1 / sqrt(head_dim), masked with masked_fill(tril == 0, -inf) and
softmaxed, all in fp32 and cast back (nanoGPT relies on autocast for that); nanoGPT's fixed `bias` buffer of block_size needs a maximum length that this
constructor does not take, so the tril is kept per (length, device) in a dict on the instance,
which is right for every length it meets."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, ndim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(ndim))
        self.eps = eps

    def forward(self, input):
        x = input.float()
        x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (x * (1.0 + self.weight.float())).to(input.dtype)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, n_kv_head, head_dim):
        super().__init__()
        self.n_head, self.n_kv_head, self.head_dim = n_head, n_kv_head, head_dim
        self.q_proj = nn.Linear(n_embd, n_head * head_dim, bias=False)
        self.k_proj = nn.Linear(n_embd, n_kv_head * head_dim, bias=False)
        self.v_proj = nn.Linear(n_embd, n_kv_head * head_dim, bias=False)
        self.o_proj = nn.Linear(n_head * head_dim, n_embd, bias=False)
        self._tril = {}  # (T, device) -> (T, T) lower-triangular ones; not part of the state

    def _causal(self, T, device):
        key = (T, device)
        if key not in self._tril:
            self._tril[key] = torch.tril(torch.ones(T, T, device=device)).view(1, 1, T, T)
        return self._tril[key]

    def forward(self, x):
        B, T, _ = x.size()
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, nh, T, hs)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        rep = self.n_head // self.n_kv_head
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)

        att = (q.float() @ k.float().transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self._causal(T, x.device) == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v.float()).to(x.dtype)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, self.n_head * self.head_dim)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(n_embd, hidden, bias=False)
        self.up_proj = nn.Linear(n_embd, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, n_embd, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = CausalSelfAttention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = MLP(dim, hidden)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x
