"""你的状态存了最后 kernel 个输入，多了一个。下一个 token 自己会补上最新的那个位置，
所以状态只需要它前面的 kernel-1 个：形状 (batch, channels, kernel-1)，step 里把
cat([state, x_t]) 的前 1 个丢掉就是新状态。（transformers 的缓存确实存 kernel 个，但最旧的那个从不被读到；本题的约定是 kernel-1 个。）
Your state keeps the last kernel inputs, one too many. The next token fills the newest slot
itself, so the state holds only the kernel-1 before it: shape (batch, channels, kernel-1); in
the step, drop the first of cat([state, x_t]) to get the new state. (transformers' cache does
keep kernel values, but never reads the oldest; this problem's contract is kernel-1.)"""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    before = x.new_zeros(x.shape[0], x.shape[1], k) if initial_state is None else initial_state.to(x.dtype)
    xpad = torch.cat([before, x], dim=-1)[:, :, 1:]
    xf, wf = xpad.float(), weight.float()
    z = sum(wf[:, j, None] * xf[:, :, j : j + t] for j in range(k))
    if bias is not None:
        z = z + bias.float()[:, None]
    state = torch.cat([before, x], dim=-1)[:, :, -k:].clone()
    return F.silu(z).to(x.dtype), state


def causal_conv1d_step(x_t, state, weight, bias=None):
    # state holds kernel inputs: the oldest one falls out before the window is formed
    window = torch.cat([state[:, :, 1:].to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).to(x_t.dtype), window.clone()
