"""你在输入的 dtype（bf16）里做递归。状态是整段序列的累加，bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字），每一步的舍入误差都会
留在状态里一直传下去。先把 q、k、v、g、beta 和初始状态都转成 fp32 再算；o 最后转回 v 的 dtype，final_state 保持 fp32。
You run the recurrence in the input dtype (bf16). The state is a sum over the whole sequence and
bf16 keeps 8 significant bits, so every step's rounding error stays in the state and is carried
forward. Convert q, k, v, g, beta and the initial state to fp32 first; convert o back to v's dtype at
the end and keep final_state in fp32."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    q = _l2norm(q) * dk**-0.5
    k = _l2norm(k)
    g = g.to(v.dtype)
    S = torch.zeros(B, H, dk, dv, dtype=v.dtype) if initial_state is None else initial_state.to(v.dtype)
    outs = []
    for t in range(T):
        k_t = k[:, :, t]
        S = S * g[:, :, t].exp()[..., None, None]
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S = S + k_t[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
