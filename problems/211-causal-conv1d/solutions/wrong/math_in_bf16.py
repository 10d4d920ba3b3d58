"""bf16 输入时你直接在 bf16 里做乘法、累加和 SiLU。bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字），每一次加法都要舍入，
几个乘积相加后误差就有好几个 ulp。先 .float() 把输入、权重和 bias 转成 fp32，算完再转回 x 的 dtype。
With bf16 input you multiply, accumulate and apply the SiLU in bf16. bf16 keeps 8 significant
bits and every addition rounds, so after a few products the result is several ulps off. Convert
the input, weight and bias to fp32 with .float(), compute, then convert back to x's dtype."""

import torch
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, initial_state=None):
    k = weight.shape[-1]
    t = x.shape[-1]
    before = (
        x.new_zeros(x.shape[0], x.shape[1], k - 1) if initial_state is None else initial_state.to(x.dtype)
    )
    xpad = torch.cat([before, x], dim=-1)
    z = sum(weight[:, j, None] * xpad[:, :, j : j + t] for j in range(k))
    if bias is not None:
        z = z + bias[:, None]
    return F.silu(z), xpad[:, :, -(k - 1) :].clone()


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[:, :, None]], dim=-1)
    z = (window * weight).sum(-1)
    if bias is not None:
        z = z + bias
    return F.silu(z), window[:, :, 1:].clone()
