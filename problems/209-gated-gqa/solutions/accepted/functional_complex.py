"""F.linear on the weights, F.rms_norm with 1 + weight, RoPE as complex multiplication, kv heads by expand."""

import torch
import torch.nn.functional as F
from torch import nn


class Norm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        y = F.rms_norm(x.float(), (x.shape[-1],), 1.0 + self.weight.float(), self.eps)
        return y.to(x.dtype)


def rope_complex(x, cos, sin):
    # Pair i with i + r/2 and treat the pair as a complex number rotated by e^{i·angle}.
    r = cos.shape[-1]
    xf = x.float()
    z = torch.complex(xf[..., : r // 2], xf[..., r // 2 : r])
    turn = torch.complex(cos[..., : r // 2].float(), sin[..., : r // 2].float())
    z = z * turn
    return torch.cat([z.real, z.imag, xf[..., r:]], dim=-1).to(x.dtype)


class GatedAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, eps=1e-6):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.q_proj = nn.Linear(dim, n_heads * head_dim * 2, bias=False)
        self.k_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.q_norm = Norm(head_dim, eps)
        self.k_norm = Norm(head_dim, eps)

    def forward(self, x, cos, sin):
        bsz, seq, _ = x.shape
        nh, nkv, hd = self.n_heads, self.n_kv_heads, self.head_dim
        q_and_gate = F.linear(x, self.q_proj.weight).unflatten(-1, (nh, 2 * hd))
        q, gate = torch.chunk(q_and_gate, 2, dim=-1)
        gate = gate.flatten(-2)
        q = self.q_norm(q).permute(0, 2, 1, 3)  # (bsz, nh, seq, hd)
        k = self.k_norm(F.linear(x, self.k_proj.weight).unflatten(-1, (nkv, hd))).permute(0, 2, 1, 3)
        v = F.linear(x, self.v_proj.weight).unflatten(-1, (nkv, hd)).permute(0, 2, 1, 3)
        q, k = rope_complex(q, cos, sin), rope_complex(k, cos, sin)

        group = nh // nkv
        k = k[:, :, None].expand(bsz, nkv, group, seq, hd).reshape(bsz, nh, seq, hd)
        v = v[:, :, None].expand(bsz, nkv, group, seq, hd).reshape(bsz, nh, seq, hd)

        scores = torch.matmul(q.float(), k.float().transpose(2, 3)) / hd**0.5
        allowed = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
        probs = torch.softmax(scores.masked_fill(~allowed, torch.finfo(torch.float32).min), dim=-1)
        out = torch.matmul(probs, v.float()).to(x.dtype)

        out = out.permute(0, 2, 1, 3).flatten(-2)
        out = (out.float() * torch.sigmoid(gate.float())).to(x.dtype)
        return F.linear(out, self.o_proj.weight)
