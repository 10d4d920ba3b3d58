"""滤波器方向反了：你让 weight[c, 0] 乘最新的输入 x[t]（像教科书里"翻转核"的卷积那样）。
本题和 PyTorch 的 conv1d 一样是互相关：y[t] = silu(bias + Σ_j weight[c, j] · xpad[t + j])，
所以 weight[c, kernel-1] 乘最新的输入，weight[c, 0] 乘最旧的那个。不要 flip 权重。
Your filter is the wrong way round: weight[c, 0] multiplies the newest input x[t] (as in the
textbook convolution that flips the kernel). Here, as in PyTorch's conv1d, it is a
cross-correlation: y[t] = silu(bias + Σ_j weight[c, j] · xpad[t + j]), so weight[c, kernel-1]
meets the newest input and weight[c, 0] the oldest. Do not flip the weight."""

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
    # lag d = 0 is the newest input; this pairs it with weight[:, 0]
    z = sum(wf[:, d, None] * xf[:, :, k - 1 - d : k - 1 - d + t] for d in range(k))
    if bias is not None:
        z = z + bias.float()[:, None]
    return F.silu(z).to(x.dtype), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float().flip(-1)).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).to(x_t.dtype), window[:, :, 1:].clone()
