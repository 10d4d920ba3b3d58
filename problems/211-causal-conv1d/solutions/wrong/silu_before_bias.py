"""bias 加在了 SiLU 之后：你算的是 silu(conv) + bias。bias 是卷积的一部分，要先加再激活：
y = silu(bias + Σ_j weight[c, j] · xpad[t + j])。
The bias is added after the SiLU: you compute silu(conv) + bias. The bias belongs to the
convolution, so add it first and activate afterwards: y = silu(bias + Σ_j weight[c, j] · xpad[t + j])."""

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
    y = F.silu(sum(wf[:, j, None] * xf[:, :, j : j + t] for j in range(k)))
    if bias is not None:
        y = y + bias.float()[:, None]
    return y.to(x.dtype), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    y = F.silu((window.float() * weight.float()).sum(-1))
    if bias is not None:
        y = y + bias.float()
    return y.to(x_t.dtype), window[:, :, 1:].clone()
