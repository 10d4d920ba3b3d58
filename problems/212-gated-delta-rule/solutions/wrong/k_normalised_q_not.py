"""你只归一化了 k，q 没有归一化。q 也要沿 d_k 做 L2 归一化（x / sqrt(Σx² + 1e-6)），再乘 1/sqrt(d_k)；
否则输出随 q 的长度变大变小，读出的尺度和模型训练时不一样。
You normalised k but not q. q too must be L2-normalised over d_k (x / sqrt(Σx² + 1e-6)) and then
scaled by 1/sqrt(d_k); otherwise the output grows and shrinks with the length of q, and the read-out
has a different scale from the one the model was trained with."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    q = q.float() * dk**-0.5
    k = _l2norm(k.float())
    v, g, beta = v.float(), g.float(), beta.float()
    S = torch.zeros(B, H, dk, dv) if initial_state is None else initial_state.float().clone()
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
