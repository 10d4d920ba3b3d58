"""第一次调用的结果是对的，参数改过之后（优化器原地更新一步、load_state_dict 换权重、.to(bfloat16)）的调用却还按旧权重算。常见原因：在第一次 forward 里把 q_proj、k_proj、v_proj 的权重拼成一个融合矩阵（或者算好 1 + weight、转置好的权重）存在 self 上，之后一直复用这份拷贝。拷贝不会跟着参数变：训练中每一步之后、加载检查点之后都用的是过期的权重。要么每次调用都从当前参数现算，要么只缓存与参数无关的东西（例如只依赖长度的掩码）。
Right on the first call, but after the parameters change (an in-place optimiser step, load_state_dict with other weights, .to(bfloat16)) the calls still compute with the old weights. The usual cause: on the first forward the q_proj, k_proj and v_proj weights are concatenated into one fused matrix (or 1 + weight, or a transposed weight, is worked out) and stored on self, and that copy is reused ever after. A copy does not follow the parameters: after every training step, or after loading a checkpoint, it serves stale weights. Compute it from the current parameters on every call, or cache only what does not depend on them (a mask that depends on the length alone, say)."""

import torch
import torch.nn as nn

from qwen.norm import RMSNorm
from qwen.rope import apply_rope
from qwen.sdpa import attention


class GatedAttention(nn.Module):
    def __init__(self, dim: int, n_heads: int, n_kv_heads: int, head_dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = RMSNorm(head_dim, eps)
        self.k_norm = RMSNorm(head_dim, eps)
        self._wqkv = None

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        hd = self.head_dim
        if self._wqkv is None:
            # One fused projection, built once: the mistake (it never sees later parameter edits).
            self._wqkv = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight]).detach()
        nq, nkv = self.n_heads * hd * 2, self.n_kv_heads * hd
        qkv = torch.nn.functional.linear(x, self._wqkv)
        qg, k, v = qkv.split([nq, nkv, nkv], dim=-1)
        q, gate = qg.reshape(batch, seq, self.n_heads, 2 * hd).split(hd, dim=-1)
        k = k.reshape(batch, seq, self.n_kv_heads, hd)
        v = v.reshape(batch, seq, self.n_kv_heads, hd)

        positions = torch.arange(seq, device=x.device)
        q = apply_rope(self.q_norm(q), cos, sin, positions).transpose(1, 2)
        k = apply_rope(self.k_norm(k), cos, sin, positions).transpose(1, 2)
        v = v.transpose(1, 2)

        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        out = attention(q, k, v)

        out = out.transpose(1, 2).reshape(batch, seq, self.n_heads * hd)
        gate = gate.reshape(batch, seq, self.n_heads * hd)
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return self.o_proj(out)
