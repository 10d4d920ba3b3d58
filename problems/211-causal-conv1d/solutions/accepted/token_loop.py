"""The one-shot version is the decoding step run token by token; each step is a batched matmul."""

import torch


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[..., None]], dim=-1)  # (B, C, k)
    # (B, C, 1, k) @ (C, k, 1) -> (B, C, 1, 1): one dot product per channel.
    z = (window.to(torch.float32).unsqueeze(-2) @ weight.to(torch.float32).unsqueeze(-1))[..., 0, 0]
    if bias is not None:
        z = z + bias.to(torch.float32)
    return (z * torch.sigmoid(z)).to(x_t.dtype), window[..., 1:]


def causal_conv1d(x, weight, bias=None, initial_state=None):
    b, c, t = x.shape
    k = weight.shape[-1]
    state = x.new_zeros(b, c, k - 1) if initial_state is None else initial_state.to(x.dtype)
    outs = []
    for i in range(t):
        y_i, state = causal_conv1d_step(x[..., i], state, weight, bias)
        outs.append(y_i)
    return torch.stack(outs, dim=-1), state
