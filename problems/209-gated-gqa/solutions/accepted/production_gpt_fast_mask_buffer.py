"""The layer in the style of gpt-fast / nanoGPT: a boolean causal mask kept as a non-persistent
buffer and grown when a longer sequence arrives (sliced to each call's length), and the parts'
RMSNorm and RoPE. The buffer depends on a length only, never on a call's values or the weights."""

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from qwen.norm import RMSNorm
from qwen.rope import apply_rope


class GatedAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int, eps: float = 1e-6):
        super().__init__()
        assert n_heads % n_kv_heads == 0
        self.n_head, self.n_local_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)
        # Not in the state dict (persistent=False): load_state_dict sees the six parameters only.
        self.register_buffer("causal_mask", torch.ones(0, 0, dtype=torch.bool), persistent=False)

    def _mask(self, seqlen: int, device: torch.device) -> Tensor:
        if self.causal_mask.shape[0] < seqlen or self.causal_mask.device != device:
            self.causal_mask = torch.tril(torch.ones(seqlen, seqlen, dtype=torch.bool, device=device))
        return self.causal_mask[:seqlen, :seqlen]

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        bsz, seqlen, _ = x.shape
        q, gate = self.q_proj(x).view(bsz, seqlen, self.n_head, 2 * self.head_dim).chunk(2, dim=-1)
        k = self.k_proj(x).view(bsz, seqlen, self.n_local_heads, self.head_dim)
        v = self.v_proj(x).view(bsz, seqlen, self.n_local_heads, self.head_dim)

        input_pos = torch.arange(seqlen, device=x.device)
        q = apply_rope(self.q_norm(q), cos, sin, input_pos)
        k = apply_rope(self.k_norm(k), cos, sin, input_pos)

        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        k = k.repeat_interleave(self.n_head // self.n_local_heads, dim=1)
        v = v.repeat_interleave(self.n_head // self.n_local_heads, dim=1)

        att = (q.float() @ k.float().transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(~self._mask(seqlen, x.device), float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v.float()).to(x.dtype)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(bsz, seqlen, self.n_head * self.head_dim)
        y = (y.float() * torch.sigmoid(gate.reshape(bsz, seqlen, -1).float())).to(x.dtype)
        return self.o_proj(y)
