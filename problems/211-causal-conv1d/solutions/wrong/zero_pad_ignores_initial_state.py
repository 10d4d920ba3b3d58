"""给了 initial_state 时你仍然在左边补 0：每段的前 kernel-1 个输出就像序列刚开始一样，
分段预填充和"预填充 + 逐个解码"都会在段与段的接缝处出错。有 initial_state 时，
xpad = cat([initial_state, x], -1)；只有 initial_state 是 None 时才补 0。
You pad with zeros on the left even when an initial_state is given: the first kernel-1 outputs
of every chunk behave as if the sequence had just started, so chunked prefill and prefill
followed by decoding go wrong at every seam. With an initial_state, xpad =
cat([initial_state, x], -1); pad with zeros only when initial_state is None."""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    xpad = F.pad(x, (k - 1, 0))
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
    return F.silu(z).to(x_t.dtype), window[:, :, 1:].clone()
