"""The one-shot version is the decoding step run token by token; each step is a batched matmul.
The loop runs on fp32 copies made once, so that backward also sums every token's gradient in fp32."""

import torch


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[..., None]], dim=-1)  # (B, C, k)
    # (B, C, 1, k) @ (C, k, 1) -> (B, C, 1, 1): one dot product per channel.
    z = (window.to(torch.float32).unsqueeze(-2) @ weight.to(torch.float32).unsqueeze(-1))[..., 0, 0]
    if bias is not None:
        z = z + bias.to(torch.float32)
    # A copy: a slice of window would share storage with the tensor the matmul saved for backward.
    return (z * torch.sigmoid(z)).to(x_t.dtype), window[..., 1:].clone()


def causal_conv1d(x, weight, bias=None, initial_state=None):
    b, c, t = x.shape
    k = weight.shape[-1]
    state = x.new_zeros(b, c, k - 1) if initial_state is None else initial_state.to(x.dtype)
    # Converted once, before the loop: casting inside every step would round each token's share
    # of the gradients of x, the state and the weight to bf16 before they are summed.
    xf, state = x.to(torch.float32), state.to(torch.float32)
    wf = weight.to(torch.float32)
    bf = None if bias is None else bias.to(torch.float32)
    outs = []
    for i in range(t):
        y_i, state = causal_conv1d_step(xf[..., i], state, wf, bf)
        outs.append(y_i)
    # The state holds x's values (a bf16 value survives the trip through fp32 exactly).
    return torch.stack(outs, dim=-1).to(x.dtype), state.to(x.dtype)
