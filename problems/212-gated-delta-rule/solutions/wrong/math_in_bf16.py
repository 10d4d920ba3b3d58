"""输入是 bf16 时，你的 o 与 fp32 中算出的结果差得比一次舍入多；final_state 以 v 的 dtype 返回（bf16，fp64 输入时是 fp64，空序列时也一样），
而题目要求在 fp32 中递归、final_state 为 fp32。常见原因：递归在输入的 dtype（bf16）里做。状态是整段序列的累加，bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字），
每一步的舍入误差都会留在状态里一直传下去。先把 q、k、v、g、beta 和初始状态都转成 fp32 再算；o 最后转回 v 的 dtype，final_state 保持 fp32。
With bf16 inputs your o is further from the fp32 result than one rounding, and final_state comes
back in v's dtype (bf16, or fp64 for fp64 inputs, for an empty sequence too); the statement asks for
the recurrence in fp32 and an fp32 final_state. The usual cause: the recurrence runs in the input
dtype (bf16). The state is a sum over the whole sequence and bf16 keeps 8 significant bits, so every
step's rounding error stays in the state and is carried forward. Convert q, k, v, g, beta and the
initial state to fp32 first; convert o back to v's dtype at the end and keep final_state in fp32."""

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
