"""Cases for problem 206. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU (one thread). Weights are drawn with std
1/sqrt(fan_in), so the gates sit where silu is curved and outputs have an rms of about 0.6.
Besides the accepted solutions, an einsum version and one that computes in fp64 and rounds
at the end were measured, as the farthest a correct answer can reasonably drift.

- fp32 forward (torch defaults rtol 1.3e-6, atol 1e-5): z * sigmoid(z), matmul with .t() and
  einsum differ from the reference by at most 2.4e-7 (shapes) and 1.9e-6 (worked example,
  |y| up to 17); fp64-then-round by at most 8.3e-7. The worst case uses 7% of the tolerance.
- large_gates (rtol 1e-5, atol 1e-2): inputs with std 40 put 71 of 2304 gates beyond ±89,
  where exp overflows fp32, and make |y| about 1100 (rms). At that scale the fp32 reference
  itself is 1.1e-3 from the fp64 answer and z * sigmoid(z) moves elements by 1.2e-4, which is
  94% of the default fp32 tolerance; atol 1e-2 is 1e-5 of the output's rms. Every wrong
  activation is still off by whole units, since a tenth of the gates lie in [-5, 5].
- bf16 forward: the ulp checker cannot be used. Each output is a sum of a few hundred
  products, so elements near zero come out of cancellation and a correct formulation can be
  tens of thousands of ulps away there. The absolute error is what stays bounded: z * sigmoid(z)
  instead of F.silu, or computing in fp32 (or fp64) and rounding once at the end, changes
  52-63% of the elements, each by at most 0.0156 (one bf16 ulp for |y| in [2, 4)). Over 20
  seeds and four sizes no correct element exceeded 0.02 + 0.016 |y|; 0.01 + 0.016 |y| already
  failed 0.1% of elements of the fp32-then-round version. allclose(rtol=0.02, atol=0.03)
  leaves room for another machine's accumulation order; the nearest mistake (GELU instead of
  silu) still fails 64-71% of the elements there; the other wrong activations 84-95%.
- gradients (rtol 1e-5, atol 1e-5): stacked gate/up weights, z * sigmoid(z) and matmul differ
  by at most 9.5e-7 on values up to 20; fp64-then-round by 3.8e-6 (14% of the tolerance).
- edge_shapes (one token, batch 1, widths 7 -> 19, 12 -> 5, 1 -> 5 and 6 -> 1), default fp32
  tolerance: correct formulations differ by at most 2.4e-7 on |y| up to 3.3, and by 9.5e-7 on
  the 6 -> 1 block whose |y| reaches 6 (fp64-then-round 4.8e-7), under 10% of the tolerance.
  Widths of 1 are the narrowest a config has.
- Removed in version 5 (issue 29): input_dtype_converted, bad_sizes_rejected and
  wrong_hidden_rejected, and the bf16 x given to an fp32 module in one_module_many_calls. They
  asked for a dtype conversion and two ValueErrors that neither the course nor transformers'
  Qwen3_5MLP has; transformers' block (solutions/accepted/transformers_mlp.py) got RE on them,
  and without them no real mistake goes unseen: a mixed dtype or a wrong last axis raises in
  the first matmul anyway, and a width of 0 is a config nobody writes.
- parameters observes the fresh weights themselves (param_table), seeded so that the reference's
  are the same in every run, with facts("finite", "varied"): names, shapes and dtypes are compared
  exactly, the values not at all (any initialisation is right), and the judge computes whether
  each weight is finite and not all equal. The case computed an `initialised` flag itself until
  version 3, in the learner's process, where a module that looks at its caller answered
  `(p != 0).any()` with True for all-zero weights (solutions/wrong/init_zeros.py). "varied"
  rather than "not all zero": a constant weight is as symmetric as a zero one, and a diagnoser
  that shifts a zero tensor by a constant cannot make it pass.
- backward_bf16 (BF16 for y, BF16_GRADS = rtol 2e-2, atol 8e-2 for the gradients): over 40
  seeds and four sizes with four tokens, the correct formulations (fp32 or fp64 inside and
  rounded once, matmul with z * sigmoid(z), stacked gate/up) needed at most atol 0.040 at
  rtol 0.02 (the down_proj weight gradient; x's gradient 0.014, y 0.010), so the margin is 2x.
  A weight gradient is a sum over tokens of bf16 products, each already rounded, so its error
  grows with the number of tokens (0.054 with six, 0.096 with twelve): the case uses four. At
  this tolerance GELU still fails 11-40% of the gradient elements and ReLU 40-66%.
- The state cases of version 4 (one_module_many_calls, weights_edited_between_calls,
  non_contiguous_input, two_modules_interleaved) use the default fp32 tolerance and, for the
  call after `.to(torch.bfloat16)`, BF16. The accepted formulations differ from the
  reference by at most 3.6e-7 on |y| up to 3.3 in fp32 (under 4% of the tolerance) and by
  0.016 in bf16 (one bf16 ulp near 3, half of atol). A weight kept from the first call (a
  stacked gate/up weight, solutions/wrong/weights_cached_first_call.py) returns the first
  call's output again after the edit, off by 0.1 and more.
"""

import torch

from judge.core.casekit import case, load_params, param_table
from judge.core.checkers import allclose, facts

BF16 = allclose(rtol=2e-2, atol=3e-2)
GRADS = allclose(rtol=1e-5, atol=1e-5)
LARGE = allclose(rtol=1e-5, atol=1e-2)
BF16_GRADS = allclose(rtol=2e-2, atol=8e-2)
# Computed by the judge from the observed weights: finite, and not all equal.
USABLE_INIT = facts("finite", "varied")

WEIGHTS = ("gate_proj.weight", "up_proj.weight", "down_proj.weight")


def _build(impl, rng, hidden: int, inter: int, dtype: torch.dtype = torch.float32):
    """A SwiGLU with trained-looking weights: std 1/sqrt(fan_in) keeps every activation O(1)."""
    m = impl.SwiGLU(hidden, inter)
    load_params(
        m,
        **{
            "gate_proj.weight": rng.normal(inter, hidden, std=hidden**-0.5),
            "up_proj.weight": rng.normal(inter, hidden, std=hidden**-0.5),
            "down_proj.weight": rng.normal(hidden, inter, std=inter**-0.5),
        },
    )
    return m.to(dtype)


@case(points=8, public=True, checker=USABLE_INIT)
def parameters(impl, rng):
    """参数名和形状：只有三个权重，没有偏置；新建的权重是有限值且不全相同 /
    parameter names and shapes: three weights, no biases; fresh weights are finite and not all equal"""
    torch.manual_seed(206)
    a = impl.SwiGLU(8, 24)
    b = impl.SwiGLU(16, 40)
    # The fresh weights themselves, by name. The judge checks names, shapes and dtypes, and that
    # each weight is finite and not all equal (all-zero weights never learn), outside this process;
    # the values are not compared: any initialisation will do.
    return {"hidden8_inter24": param_table(a), "hidden16_inter40": param_table(b)}


@case(points=8, public=True)
def worked_example(impl, rng):
    """题面中的小例子：gate 为单位矩阵，up 为 2 倍单位矩阵 / the statement's example: gate = I, up = 2I, down = I"""
    m = impl.SwiGLU(2, 2)
    eye = torch.eye(2)
    load_params(m, **{"gate_proj.weight": eye, "up_proj.weight": 2 * eye, "down_proj.weight": eye})
    x = torch.tensor([[1.0, -1.0], [0.0, 3.0], [-4.0, 0.5]])
    return {"y": m(x)}


@case(points=10, public=True)
def forward_fp32(impl, rng):
    """fp32 前向，输入形状 (batch, seq, hidden) / fp32 forward on a (batch, seq, hidden) input"""
    m = _build(impl, rng, 64, 176)
    return {"y": m(rng.normal(2, 5, 64))}


@case(points=11, checker=BF16)
def forward_bf16(impl, rng):
    """bf16 模块与 bf16 输入：输出也是 bf16 / bf16 module and bf16 input: the output is bf16 too"""
    m = _build(impl, rng, 128, 352, torch.bfloat16)
    return {"y": m(rng.normal(4, 16, 128, dtype=torch.bfloat16))}


@case(points=8)
def shapes(impl, rng):
    """任意前导维度：1 维、2 维、4 维输入 / any leading shape: 1-D, 2-D and 4-D inputs"""
    m = _build(impl, rng, 48, 128)
    return {
        "1d": m(rng.normal(48)),
        "2d": m(rng.normal(6, 48)),
        "4d": m(rng.normal(2, 3, 4, 48)),
    }


@case(points=6, checker=LARGE)
def large_gates(impl, rng):
    """很大的输入：gate 的绝对值超过 89，exp 会溢出 / large inputs: gates beyond ±89, where exp overflows fp32"""
    m = _build(impl, rng, 32, 96)
    return {"y": m(rng.normal(3, 8, 32, std=40.0))}


@case(points=11, checkers={"grads": GRADS})
def backward(impl, rng):
    """反向传播：对输入和三个权重的梯度 / gradients with respect to the input and all three weights"""
    m = _build(impl, rng, 32, 88)
    x = rng.normal(3, 5, 32).requires_grad_(True)
    y = m(x)
    y.backward(rng.normal(3, 5, 32))
    params = dict(m.named_parameters())
    grads = {"x": x.grad, **{name: params[name].grad for name in WEIGHTS}}
    return {"y": y, "grads": grads}


@case(points=11)
def edge_shapes(impl, rng):
    """边界形状：batch 1 的单个 token（解码的一步）、奇数宽度、中间层比 hidden 还窄、宽度为 1 /
    edge shapes: one token with batch 1 (a decode step), odd widths, an intermediate narrower than hidden, widths of 1"""
    odd = _build(impl, rng, 7, 19)
    narrow = _build(impl, rng, 12, 5)
    # 1 is the smallest width the statement allows: a check that refuses it is off by one.
    hidden1 = _build(impl, rng, 1, 5)
    inter1 = _build(impl, rng, 6, 1)
    return {
        "one_token": odd(rng.normal(1, 1, 7)),
        "batch1_odd": odd(rng.normal(1, 3, 7)),
        "narrow": narrow(rng.normal(1, 5, 12)),
        "hidden_1": hidden1(rng.normal(4, 1)),
        "intermediate_1": inter1(rng.normal(4, 6)),
    }


@case(points=12, checker=BF16, checkers={"grads": BF16_GRADS})
def backward_bf16(impl, rng):
    """bf16 模块的反向传播：对输入和三个权重的梯度都是 bf16 /
    backward through a bf16 module: the gradients of the input and all three weights are bf16"""
    m = _build(impl, rng, 48, 136, torch.bfloat16)
    # Four tokens: each weight gradient sums four bf16 products, which keeps its rounding small.
    x = rng.normal(2, 2, 48, dtype=torch.bfloat16).requires_grad_(True)
    y = m(x)
    y.backward(rng.normal(2, 2, 48, dtype=torch.bfloat16))
    params = dict(m.named_parameters())
    grads = {"x": x.grad, **{name: params[name].grad for name in WEIGHTS}}
    return {"y": y, "grads": grads}


# ---------------------------------------------------------------- state across calls (version 4)


@case(points=6, checkers={"calls[3]": BF16})
def one_module_many_calls(impl, rng):
    """同一个模块连续调用：不同形状的输入（其中一次只有一个 token），再 `.to(bfloat16)` 后用 bf16 输入调用一次；
    每次调用只能用这次的输入和模块此刻的权重 /
    one module called again and again: inputs of several shapes (one of them a single token), then once more
    after `.to(bfloat16)` with a bf16 input; every call uses its own input and the module's weights as they are now"""
    m = _build(impl, rng, 64, 176)
    calls = [
        m(rng.normal(2, 5, 64)),
        m(rng.normal(1, 1, 64)),
        m(rng.normal(3, 4, 64)),
    ]
    m.to(torch.bfloat16)
    calls.append(m(rng.normal(2, 6, 64, dtype=torch.bfloat16)))
    return {"calls": calls}


@case(points=3)
def weights_edited_between_calls(impl, rng):
    """第一次调用之后修改参数：先原地加一步更新（像优化器那样），再 `load_state_dict` 换一套权重；
    之后的调用必须用新的参数 /
    the parameters change after the first call: an in-place step (as an optimiser takes), then `load_state_dict`
    with other weights; every later call must use the parameters as they are now"""
    m = _build(impl, rng, 48, 128)
    x = rng.normal(2, 5, 48)
    calls = [m(x)]
    with torch.no_grad():
        for name in WEIGHTS:
            p = m.get_parameter(name)
            p.add_(rng.normal(*p.shape, std=0.05))
    calls.append(m(x))
    other = _build(impl, rng, 48, 128)
    m.load_state_dict(other.state_dict())
    calls.append(m(x))
    return {"calls": calls}


@case(points=3)
def non_contiguous_input(impl, rng):
    """x 是非连续的视图：由 (seq, batch, hidden) 的张量转置而来，或从更宽的张量中切出；结果须与同样数值的连续输入相同 /
    x is a non-contiguous view: a (seq, batch, hidden) tensor transposed, or a slice of a wider tensor; the result
    must equal the one for the same values laid out contiguously"""
    m = _build(impl, rng, 32, 96)
    seq_first = rng.normal(5, 3, 32)
    transposed = seq_first.transpose(0, 1)  # (batch 3, seq 5, hidden 32), strides (32, 96, 1)
    wide = rng.normal(3, 5, 80)
    sliced = wide[..., 16:48]  # (3, 5, 32), each row 80 apart
    return {
        "transposed": {"contiguous": m(transposed.contiguous()), "transposed_view": m(transposed)},
        "sliced": {"contiguous": m(sliced.contiguous()), "sliced_view": m(sliced)},
    }


@case(points=3)
def two_modules_interleaved(impl, rng):
    """两个模块（宽度和权重都不同）交替调用：第一个、第二个、再第一个（换一个形状）；两个对象不能共享任何状态 /
    two modules with different widths and weights called in turn: the first, the second, the first again (another
    shape); the two objects share no state"""
    a = _build(impl, rng, 24, 64)
    b = _build(impl, rng, 16, 40)
    return {
        "first": a(rng.normal(2, 3, 24)),
        "second": b(rng.normal(2, 3, 16)),
        "first_again": a(rng.normal(4, 24)),
    }
