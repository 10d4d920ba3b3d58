"""残差要加在原始输入 x 上：h = x + attn(norm(x))。你加的是归一化之后的 n = norm(x)，h = n + attn(n)：x 原来的尺度被丢掉了，残差流在每一层都被重新归一化，相当于把预归一化变回了后归一化的毛病。先把 x 留作 residual，再对它的副本做归一化。
Add the residual to the original input: h = x + attn(norm(x)). You add the normalised n = norm(x), h = n + attn(n): x's scale is thrown away and the residual stream is renormalised at every layer, bringing back post-norm's problems. Keep x as the residual and normalise a copy for the sublayer."""

import torch
import torch.nn as nn

from qwen.mlp import SwiGLU
from qwen.norm import RMSNorm
from qwen.sdpa import attention


class Attention(nn.Module):
    """Causal grouped-query attention; no RoPE and no output gate in this problem."""

    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        # (batch, seq, heads * head_dim) -> (batch, heads, seq, head_dim)
        q = self.q_proj(x).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.n_kv_heads, self.head_dim).transpose(1, 2)
        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)  # query head h reads kv head h // group
        v = v.repeat_interleave(group, dim=1)
        # Scores, softmax and the weighted sum in fp32 (the part), back in the activation dtype.
        out = attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.n_heads * self.head_dim))


class DecoderLayer(nn.Module):
    def __init__(
        self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int, hidden: int, eps: float = 1e-6
    ) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = Attention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.input_layernorm(x)
        h = x + self.self_attn(x)
        h = self.post_attention_layernorm(h)
        return h + self.mlp(h)
