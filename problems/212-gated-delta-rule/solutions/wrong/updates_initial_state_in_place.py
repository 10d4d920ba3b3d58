"""你把 initial_state 当成工作缓冲区原地更新（mul_ / add_），调用者传进来的状态被改掉了。
同一个前缀的状态可能还要再用（多条续写、束搜索、重新生成），而且它需要梯度时原地修改还会让反向传播报错。
先 S = initial_state.float().clone()（或者用不带下划线的运算得到新张量），再在 S 上更新。
You use initial_state as a work buffer and update it in place (mul_ / add_), so the caller's state
is changed. The state of a prefix may be needed again (several continuations, beam search,
regeneration), and when it requires grad an in-place edit also breaks backward. Start from
S = initial_state.float().clone() (or use out-of-place operations that make new tensors) and update S."""

import torch


def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    out_dtype = v.dtype
    q = _l2norm(q.float()) * dk**-0.5
    k = _l2norm(k.float())
    v, g, beta = v.float(), g.float(), beta.float()
    S = torch.zeros(B, H, dk, dv) if initial_state is None else initial_state.float()
    outs = []
    for t in range(T):
        k_t = k[:, :, t]
        S.mul_(g[:, :, t].exp()[..., None, None])
        recalled = torch.einsum("bhkv,bhk->bhv", S, k_t)
        delta = beta[:, :, t, None] * (v[:, :, t] - recalled)
        S.add_(k_t[..., :, None] * delta[..., None, :])
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(outs, dim=2) if outs else v.new_zeros(B, H, 0, dv)
    return o.to(out_dtype), S
