"""Everything in float64, the taps summed from the newest input backwards, rounded once at the end."""

import torch


def _silu(z):
    return z / (1.0 + torch.exp(-z))


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    if initial_state is None:
        initial_state = torch.zeros(*x.shape[:2], k - 1, dtype=x.dtype)
    stream = torch.cat([initial_state.to(x.dtype), x], dim=-1)
    s = stream.double()
    w = weight.double()
    z = torch.zeros(*x.shape, dtype=torch.float64)
    # Lag d = 0 is the newest input x[t] and meets the last tap weight[:, k - 1].
    for d in range(k):
        z += w[:, k - 1 - d].unsqueeze(-1) * s[..., k - 1 - d : k - 1 - d + t]
    if bias is not None:
        z += bias.double().unsqueeze(-1)
    state = stream[..., stream.shape[-1] - k + 1 :].clone()
    return _silu(z).to(x.dtype), state


def causal_conv1d_step(x_t, state, weight, bias=None):
    k = weight.shape[-1]
    state = state.to(x_t.dtype)  # the window, like the padded stream, is in x_t's dtype
    z = weight[:, k - 1].double() * x_t.double()
    for d in range(1, k):
        z = z + weight[:, k - 1 - d].double() * state[..., k - 1 - d].double()
    if bias is not None:
        z = z + bias.double()
    new_state = torch.cat([state[..., 1:], x_t.unsqueeze(-1)], dim=-1)
    return _silu(z).to(x_t.dtype), new_state
