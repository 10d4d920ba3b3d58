"""序列比 kernel-1 短时，你的 final_state 只从 x 里取，前面补 0，把 initial_state 丢了。
final_state 要取"补齐后的流" cat([initial_state, x]) 的最后 kernel-1 个值：x 只有 1 个 token 时，
新状态 = 旧状态的后 kernel-2 个 + 这 1 个 token。解码时每一步都是这种情况。
When the sequence is shorter than kernel-1, your final_state is taken from x alone, padded with
zeros, and the initial_state is lost. Take the last kernel-1 values of the padded stream
cat([initial_state, x]): with a single token, the new state is the old state's last kernel-2
values plus that token. Every decoding step is this case."""

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
    state = F.pad(x, (max(k - 1 - t, 0), 0))[:, :, -(k - 1) :].clone()
    return F.silu(z).to(x.dtype), state


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).to(x_t.dtype), window[:, :, 1:].clone()
