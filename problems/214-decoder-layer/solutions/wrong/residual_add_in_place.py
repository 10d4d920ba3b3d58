"""x += ... 是原地加法，会改掉调用者传进来的 x（它在外面可能还有用，比如要再送进另一层，或是需要梯度的叶子张量，原地修改会直接报错）。写成 h = x + self.self_attn(...)，让残差加到一个新张量上。
x += ... adds in place and changes the caller's x (which may still be needed outside, say to feed another layer; on a leaf that requires grad it is an error outright). Write h = x + self.self_attn(...) so the residual sum is a new tensor."""

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
        x += self.self_attn(self.input_layernorm(x))
        x += self.mlp(self.post_attention_layernorm(x))
        return x
