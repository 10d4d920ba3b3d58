"""这是后归一化（post-norm，原始 Transformer 的写法）：先加残差再归一化，norm(x + attn(x))。Qwen3.5 用的是预归一化：归一化只作用在送进子层的那一份上，h = x + attn(norm(x))，残差流本身从不被归一化。后归一化让每一层的输出都被压回单位尺度、梯度也要穿过每一层的归一化，深层网络训练时更不稳定，而且加载 Qwen 的权重后输出完全不对。
This is post-norm (the original Transformer): add the residual, then normalise, norm(x + attn(x)). Qwen3.5 is pre-norm: only the copy fed to the sublayer is normalised, h = x + attn(norm(x)), and the residual stream itself never is. Post-norm squeezes every layer's output back to unit scale and makes gradients pass through every norm, which trains less stably in deep stacks; and Qwen's weights give nonsense with it."""

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
        h = self.input_layernorm(x + self.self_attn(x))
        return self.post_attention_layernorm(h + self.mlp(h))
