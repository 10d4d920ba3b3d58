"""final_state 取成了补齐后输入流最前面的 kernel-1 个值（也就是传进来的旧状态或补的 0）。
下一段要接着的是最新的输入：final_state = xpad[..., -(kernel-1):]，即补齐后的流的最后 kernel-1 个值。
Your final_state takes the first kernel-1 values of the padded stream (the old state, or the
zero padding). The next chunk continues from the newest inputs: final_state =
xpad[..., -(kernel-1):], the last kernel-1 values of the padded stream."""

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
    return F.silu(z).to(x.dtype), xpad[:, :, : k - 1].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).to(x_t.dtype), window[:, :, :-1].clone()
