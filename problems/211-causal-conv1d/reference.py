"""Reference for problem 211: a causal depthwise conv1d + SiLU, one-shot and one token at a time."""

import torch
import torch.nn.functional as F


def _padded_stream(x: torch.Tensor, kernel: int, initial_state: torch.Tensor | None) -> torch.Tensor:
    # The kernel-1 inputs before x: the carried state, or zeros at the start of a sequence.
    batch, channels, _ = x.shape
    before = x.new_zeros(batch, channels, kernel - 1) if initial_state is None else initial_state.to(x.dtype)
    return torch.cat([before, x], dim=-1)


def causal_conv1d(x, weight, bias=None, initial_state=None):
    seq = x.shape[-1]
    kernel = weight.shape[-1]
    xpad = _padded_stream(x, kernel, initial_state)  # (B, C, kernel - 1 + seq), x's dtype
    xf, wf = xpad.float(), weight.float()
    # Output t sees xpad[t .. t + kernel - 1]; weight[:, -1] meets the newest input x[t].
    z = wf[:, 0, None] * xf[:, :, 0:seq]
    for j in range(1, kernel):
        z = z + wf[:, j, None] * xf[:, :, j : j + seq]
    if bias is not None:
        z = z + bias.float()[:, None]
    y = F.silu(z).to(x.dtype)
    # The state is the raw stream, not a result: the newest kernel-1 inputs, kept in x's dtype.
    final_state = xpad[:, :, xpad.shape[-1] - (kernel - 1) :].clone()
    return y, final_state


def causal_conv1d_step(x_t, state, weight, bias=None):
    # A new tensor, so the caller's state is left as it was.
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)  # (B, C, kernel)
    z = (window.float() * weight.float()).sum(dim=-1)
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).to(x_t.dtype), window[:, :, 1:].clone()
