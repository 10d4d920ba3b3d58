"""bf16 输入时你返回了 fp32 的 y。在 fp32 里累加是对的，但最后要转回输入的 dtype：
y.to(x.dtype)（step 里是 x_t.dtype）。否则下一层收到的 dtype 和模型其余部分对不上，还多占一倍显存。
With bf16 input you return y in fp32. Accumulating in fp32 is right, but convert back to the
input's dtype at the end: y.to(x.dtype) (x_t.dtype in the step). Otherwise the next layer gets a
dtype the rest of the model does not use, at twice the memory."""

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
    return F.silu(z), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z), window[:, :, 1:].clone()
