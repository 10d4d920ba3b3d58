"""第一次调用对，权重变了之后（优化器走一步、load_state_dict 装入检查点）输出却没跟着变：层里有一个从权重算出的值（拼接好的 qkv 权重、1 + w、转置后的矩阵）在第一次调用时算好就一直复用。要么每次在 forward 里从参数现算，要么只在装入权重时（load_state_dict 的 hook 里）重算。
Right on the first call, but the output does not follow the weights once they change (an optimiser step, a checkpoint loaded with load_state_dict): the layer keeps a value derived from its weights (the fused qkv weight, 1 + w, a transposed matrix) computed on the first call and reuses it. Compute it from the parameters in forward on every call, or recompute it whenever the weights are loaded (in a load_state_dict hook)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)

    def forward(self, x):
        # gpt-fast rounds before the weight; the zero-centred norm keeps 1 + w in fp32 and rounds once.
        return (self._norm(x.float()) * (1.0 + self.weight.float())).type_as(x)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim):
        super().__init__()
        self.n_head, self.n_local_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        # Not in the state_dict; rebuilt when a longer sequence (or another device) comes.
        self.register_buffer("causal_mask", torch.ones(0, 0, dtype=torch.bool), persistent=False)

    def _mask(self, seqlen, device):
        if self.causal_mask.size(0) < seqlen or self.causal_mask.device != device:
            self.causal_mask = torch.tril(torch.ones(seqlen, seqlen, dtype=torch.bool, device=device))
        return self.causal_mask[:seqlen, :seqlen]

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        kv_size = self.n_local_heads * self.head_dim
        if getattr(self, "_wqkv", None) is None:  # fused once, on the first call
            self._wqkv = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        wqkv = self._wqkv
        q, k, v = F.linear(x, wqkv).split([self.n_head * self.head_dim, kv_size, kv_size], dim=-1)

        q = q.view(bsz, seqlen, self.n_head, self.head_dim)
        k = k.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        v = v.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))

        k = k.repeat_interleave(self.n_head // self.n_local_heads, dim=1)
        v = v.repeat_interleave(self.n_head // self.n_local_heads, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self._mask(seqlen, x.device), dropout_p=0.0)

        y = y.transpose(1, 2).contiguous().view(bsz, seqlen, self.n_head * self.head_dim)
        return self.o_proj(y)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)  # gpt-fast's w1
        self.up_proj = nn.Linear(dim, hidden, bias=False)  # w3
        self.down_proj = nn.Linear(hidden, dim, bias=False)  # w2

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, hidden, eps=1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(dim, eps)
        self.self_attn = Attention(dim, n_heads, n_kv_heads, head_dim)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.mlp = FeedForward(dim, hidden)

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        out = h + self.mlp(self.post_attention_layernorm(h))
        return out
