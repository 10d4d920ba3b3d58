"""你的逐 token 循环每一步都把 bf16 的输入、状态和 weight 转成 fp32 再转回来。前向的 y 没错，但反向传播时，
每个 token 对 x、状态和 weight 的那一份梯度都先舍入成 bf16 再一项一项相加：weight 的梯度要加 T 次，
会差几十上百个 ulp。在循环开始前把 x、状态、weight 和 bias 各转成 fp32 一次，循环全在 fp32 里跑，
最后再把 y 和状态转回 x 的 dtype，梯度就和 y 一样在 fp32 里累加、只舍入一次。
Your token-by-token loop converts the bf16 input, state and weight to fp32 and back inside every
step. y comes out right, but in the backward pass each token's share of the gradients of x, the
state and the weight is rounded to bf16 before the shares are summed: the weight's gradient is a
sum of T of them and ends up tens to hundreds of ulps off. Convert x, the state, the weight and
the bias to fp32 once, before the loop, run the loop in fp32, and convert y and the state back to
x's dtype at the end: the gradients are then summed in fp32 and rounded once, like y."""

import torch


def causal_conv1d_step(x_t, state, weight, bias=None):
    window = torch.cat([state.to(x_t.dtype), x_t[..., None]], dim=-1)
    z = (window.to(torch.float32).unsqueeze(-2) @ weight.to(torch.float32).unsqueeze(-1))[..., 0, 0]
    if bias is not None:
        z = z + bias.to(torch.float32)
    return (z * torch.sigmoid(z)).to(x_t.dtype), window[..., 1:].clone()


def causal_conv1d(x, weight, bias=None, initial_state=None):
    b, c, t = x.shape
    k = weight.shape[-1]
    state = x.new_zeros(b, c, k - 1) if initial_state is None else initial_state.to(x.dtype)
    outs = []
    for i in range(t):
        # x[..., i], the state and the weight stay bf16 between the steps
        y_i, state = causal_conv1d_step(x[..., i], state, weight, bias)
        outs.append(y_i)
    return torch.stack(outs, dim=-1), state
