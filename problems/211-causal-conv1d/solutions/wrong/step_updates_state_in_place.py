"""causal_conv1d_step 原地改写了传进来的 state（左移一格再写入 x_t）。输出和返回的新状态没错，
但调用者手里的旧状态被悄悄换掉了：束搜索、投机解码回退、同一个前缀分出多条续写时都还要用它。
用 torch.cat([state, x_t[..., None]], -1)[..., 1:] 造一个新张量返回，不要对 state 赋值或调用 copy_ / roll 写回。
Your causal_conv1d_step rewrites the state it was given (shift left, write x_t). The output and
the returned state are right, but the caller's old state is silently replaced, and beam search,
speculative-decoding rollback and several continuations of one prefix all still need it. Build a
new tensor, torch.cat([state, x_t[..., None]], -1)[..., 1:], and return it; do not assign into
state or copy_ / roll back into it."""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    before = (
        x.new_zeros(x.shape[0], x.shape[1], k - 1) if initial_state is None else initial_state.to(x.dtype)
    )
    xpad = torch.cat([before, x], dim=-1)
    xf, wf = xpad.float(), weight.float()
    z = sum(wf[:, j, None] * xf[:, :, j : j + t] for j in range(k))
    if bias is not None:
        z = z + bias.float()[:, None]
    return F.silu(z).to(x.dtype), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    state.copy_(torch.roll(state, shifts=-1, dims=-1))
    state[:, :, -1] = x_t
    return F.silu(z).to(x_t.dtype), state
