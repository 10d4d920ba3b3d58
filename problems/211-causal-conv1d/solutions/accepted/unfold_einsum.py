"""Sliding windows with Tensor.unfold and one einsum over (window, filter); F.pad for the zeros."""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.size(1)
    # F.pad for the zeros at the start of a sequence, the carried state otherwise.
    xpad = F.pad(x, (k - 1, 0)) if initial_state is None else torch.cat((initial_state.to(x.dtype), x), dim=2)
    windows = xpad.float().unfold(2, k, 1)  # (B, C, T, k): windows[..., t, :] = xpad[..., t : t + k]
    z = torch.einsum("bctk,ck->bct", windows, weight.float())
    if bias is not None:
        z = z + bias.float().view(1, -1, 1)
    return F.silu(z).type_as(x), xpad[..., -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat((state.to(x_t.dtype), x_t.unsqueeze(-1)), dim=-1)
    z = torch.einsum("bck,ck->bc", window.float(), weight.float())
    if bias is not None:
        z = z + bias.float()
    return F.silu(z).type_as(x_t), window[..., 1:].clone()
