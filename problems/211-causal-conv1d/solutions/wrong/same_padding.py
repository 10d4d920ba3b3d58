"""你在两边都补了值（"same" 填充：左边 (kernel-1)//2 个、右边其余），于是位置 t 的输出用到了 t 之后的输入，
模型在生成时看到了未来。因果卷积只在左边补 kernel-1 个值（initial_state 或 0），右边不补：
y[t] 只依赖 xpad[t .. t+kernel-1]，其中最新的一个就是 x[t]。
You padded both sides ("same" padding: (kernel-1)//2 on the left, the rest on the right), so the
output at t reads inputs after t: the model sees the future. A causal convolution pads only on the
left, with kernel-1 values (initial_state or zeros), and nothing on the right: y[t] depends on
xpad[t .. t+kernel-1] only, whose newest element is x[t]."""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    left = (k - 1) // 2
    right = k - 1 - left
    before = (
        x.new_zeros(x.shape[0], x.shape[1], k - 1) if initial_state is None else initial_state.to(x.dtype)
    )
    xpad = F.pad(x, (left, right))
    xf, wf = xpad.float(), weight.float()
    z = sum(wf[:, j, None] * xf[:, :, j : j + t] for j in range(k))
    if bias is not None:
        z = z + bias.float()[:, None]
    state = torch.cat([before, x], dim=-1)[:, :, -(k - 1) :].clone()
    return F.silu(z).to(x.dtype), state


def causal_conv1d_step(x_t, state, weight, bias=None):
    # With "same" padding a step cannot know the inputs still to come: treat them as zeros.
    state = state.to(x_t.dtype)
    k = weight.shape[-1]
    left = (k - 1) // 2
    right = k - 1 - left
    window = torch.cat(
        [state[:, :, state.shape[-1] - left :], x_t[:, :, None], torch.zeros_like(state[:, :, :right])], -1
    )
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    new_state = torch.cat([state, x_t[:, :, None]], dim=-1)[:, :, 1:]
    return F.silu(z).to(x_t.dtype), new_state
