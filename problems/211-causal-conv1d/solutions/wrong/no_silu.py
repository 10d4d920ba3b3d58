"""输出少了 SiLU。Gated DeltaNet 的卷积后面紧跟 SiLU：y = silu(bias + Σ_j weight[c, j] · xpad[t + j])，
silu(z) = z · sigmoid(z)。没有它，负的卷积结果原样流进 q、k、v。
The SiLU is missing. In Gated DeltaNet the convolution is followed by a SiLU:
y = silu(bias + Σ_j weight[c, j] · xpad[t + j]), with silu(z) = z · sigmoid(z). Without it,
negative convolution results flow straight into q, k and v."""

import torch


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
    return z.to(x.dtype), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return z.to(x_t.dtype), window[:, :, 1:].clone()
