"""空序列（seq = 0）时你把 initial_state 原样交回：没有初始状态时 final_state 成了 None，
初始状态是 bf16 时它也还是 bf16。final_state 的约定不因序列为空而改变：形状 (batch, heads, d_k, d_v)、
fp32，没有初始状态时是全零。下一次调用（例如解码的下一步）要拿它当 initial_state，
拿到 None 就会从零开始，把前面的记忆全丢掉。空序列时也返回 initial_state.float()（None 时返回全零）。
On an empty sequence (seq = 0) you hand initial_state back as it came: without an initial state
final_state is None, and a bf16 initial state stays bf16. The contract of final_state does not
change because the sequence is empty: shape (batch, heads, d_k, d_v), fp32, zeros without an
initial state. The next call (the next decoding step, say) takes it as its initial_state, and a
None there starts from zeros, forgetting everything before. On an empty sequence too, return
initial_state.float() (zeros when it is None)."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    if T == 0:
        # Nothing to compute: hand back what came in.
        return v.new_zeros(B, H, 0, dv), initial_state
    q = _l2norm(q.float()) * dk**-0.5
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
    return torch.stack(outs, dim=2).to(out_dtype), S
