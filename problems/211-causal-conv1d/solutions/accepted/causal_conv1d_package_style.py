"""In the style of the causal-conv1d package's reference functions (causal_conv1d_ref and
causal_conv1d_update_ref): weight (dim, width), x (batch, dim, seqlen), and one update function
that serves both the whole sequence and a single token (`unsqueeze = x.dim() == 2`). The state it
returns is written with `copy_` into a buffer of its own, as the package updates its conv_state
in place; the caller's state is never that buffer."""

import torch
import torch.nn.functional as F


def _causal_conv1d_update_ref(x, conv_state, weight, bias=None):
    """x: (batch, dim) or (batch, dim, seqlen); conv_state: (batch, dim, width - 1).
    Returns (out in x's dtype, the new state in x's dtype)."""
    dtype_in = x.dtype
    unsqueeze = x.dim() == 2
    if unsqueeze:
        x = x.unsqueeze(-1)
    batch, dim, seqlen = x.shape
    width = weight.shape[1]
    state_len = conv_state.shape[-1]
    assert weight.shape == (dim, width) and state_len == width - 1
    x_new = torch.cat([conv_state.to(dtype_in), x], dim=-1)  # (batch, dim, state_len + seqlen)
    new_state = torch.empty(batch, dim, state_len, dtype=dtype_in, device=x.device)
    new_state.copy_(x_new[:, :, -state_len:])
    # The depthwise conv without padding, in fp32: out[t] = sum_w weight[:, w] * x_new[t + w].
    x_f, w_f = x_new.float(), weight.float()
    out = torch.stack([x_f[:, :, w : w + seqlen] for w in range(width)], dim=-1) @ w_f[:, :, None]
    out = out.squeeze(-1)
    if bias is not None:
        out = out + bias.float()[:, None]
    out = F.silu(out).to(dtype=dtype_in)
    if unsqueeze:
        out = out.squeeze(-1)
    return out, new_state


def causal_conv1d(x, weight, bias=None, initial_state=None):
    batch, dim, _ = x.shape
    if initial_state is None:
        initial_state = torch.zeros(batch, dim, weight.shape[1] - 1, dtype=x.dtype, device=x.device)
    return _causal_conv1d_update_ref(x, initial_state, weight, bias)


def causal_conv1d_step(x_t, state, weight, bias=None):
    return _causal_conv1d_update_ref(x_t, state, weight, bias)
