"""Cases for problem 207. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU against six correct formulations (the three in
solutions/accepted, fp64 inside, and x - x.logsumexp(dim) with the tensor method):
- fp32, logits within about +-10: probabilities differ by at most 6.7e-7 relative (10 fp32
  ulps), log-probabilities by at most 9.5e-7 absolute, the loss by 1 ulp. No case uses more
  than 5% of torch's default fp32 tolerance (rtol 1.3e-6, atol 1e-5), so the default stays.
- Logits in the hundreds or thousands (STABLE): the usual "x - logsumexp(x)" rounds
  m + log(sum) at |x| ~ 1000, where one fp32 ulp is 6.1e-5, so probabilities move by up to
  2.7e-5 relative and log-probabilities by up to 2.5e-5 absolute: 13% of rtol = atol = 1e-4.
  The mistakes these cases are for give NaN, inf or -inf, which no tolerance lets through.
- bf16 / fp16 outputs (HALF): every fp32 formulation rounds to bit-identical bf16 and fp16
  outputs. Doing the maths in bf16 moves softmax by up to 10 ulps in 76% of elements and
  log_softmax by 1 ulp in 18%; fp16 maths moves softmax by 1 ulp in 28%. At most 1 ulp in 2%.
- Loss from bf16 logits: correct ones are within 1 fp32 ulp (1.1e-7 relative); bf16 maths is
  4.2e-3 off, so the default fp32 tolerance.
- Gradients (GRAD): correct ones differ by at most 9.8e-7 relative / 1.7e-8 absolute, 6% of
  rtol 1e-5, atol 1e-7; the gradients themselves are of order 1 / (counted tokens).
- cross_entropy_3d's "masked" loss (a quarter of each row at -inf, never the target): the
  accepted ones agree within 1 fp32 ulp; a one-hot *product* gives NaN (0 * -inf), which the
  earlier cases never showed, so that formulation is in solutions/wrong now.
- The all-ignored loss is NaN by definition; exact() also pins the dtype and 0-dim shape.
- softmax_backward (default fp32 tolerance): the gradients of the three accepted solutions,
  fp64 inside and the logsumexp tensor method differ by at most 2.4e-7 on values up to 1.9
  (the largest atol needed at the default rtol is 8.8e-8, under 1% of 1e-5); positions
  masked to -inf get exactly 0 in all of them.
- edge_shapes and inputs_unchanged (default fp32 tolerance): at most 9.5e-7 on log-probs up to
  10.6, 2.4e-7 on a loss of 3.6, 2.4e-7 on probabilities: under 10% of the tolerance. A
  length-1 axis gives exactly 1 and 0 everywhere. inputs_unchanged returns the inputs
  themselves after the calls, compared exactly; only in-place edits of x, logits or targets
  change them.
- each_call_its_own and non_contiguous_inputs (version 3; default fp32 tolerance, HALF for the
  bf16 calls): the five accepted formulations differ by at most 2.4e-7 on probabilities, 9.5e-7
  on log-probabilities up to 16 and 2.4e-7 on losses up to 4.8, under 10% of the tolerance, and
  round the bf16 calls to the reference's bits. A `.view(-1, V)` on the shifted
  `logits[:, :-1]` raises; a value kept from the first call (a count, a mask of the first
  ignore_index) is off by far more.
"""

import torch

from judge.core.casekit import case
from judge.core.checkers import allclose, exact, ulp

# Cases whose logits are in the hundreds or thousands test that nothing overflows; see the top.
STABLE = allclose(rtol=1e-4, atol=1e-4)
HALF = ulp(max_ulps=1, max_fraction=0.02)
GRAD = allclose(rtol=1e-5, atol=1e-7)

# ---------------------------------------------------------------- softmax


@case(points=7, public=True)
def softmax_fp32(impl, rng):
    """fp32 的 softmax，沿最后一维 / fp32 softmax over the last axis"""
    x = rng.normal(4, 33, std=3.0)
    return {"y": impl.softmax(x), "y_dim_-1": impl.softmax(x, dim=-1)}


@case(points=5, checker=STABLE)
def softmax_large_logits(impl, rng):
    """数值上千的 logits：直接 exp 会溢出 / logits in the thousands: a plain exp overflows"""
    x = rng.normal(3, 40, std=3.0)
    return {
        "plus_1000": impl.softmax(x + 1000.0),
        "minus_1000": impl.softmax(x - 1000.0),
        "spread_2000": impl.softmax(x * 700.0),
    }


@case(points=4, checker=STABLE)
def softmax_equal_rows(impl, rng):
    """每行所有元素相等（包括 ±1000）：结果是均匀分布 /
    rows of equal values (even ±1000) give a uniform distribution"""
    x = torch.tensor([0.0, 7.5, 1000.0, -1000.0]).unsqueeze(1).expand(4, 12).contiguous()
    return {"y": impl.softmax(x), "logp": impl.log_softmax(x)}


@case(points=5, checker=STABLE)
def softmax_masked(impl, rng):
    """被屏蔽为 -inf 的 logits：概率为 0、对数概率为 -inf，只剩一个有限值的行是 one-hot /
    logits masked to -inf: probability 0 and log-probability -inf; a row with one finite entry is one-hot"""
    x = rng.normal(5, 16, std=2.0)
    x[0, 3:6] = float("-inf")
    x[1, ::2] = float("-inf")
    x[2, 1:] = float("-inf")
    x[4, :8] = float("-inf")
    x[4, 8:] += 1000.0
    return {"p": impl.softmax(x), "logp": impl.log_softmax(x)}


@case(points=5)
def softmax_dims(impl, rng):
    """沿其他维做 softmax 与 log_softmax：dim=0、1、-2 /
    softmax and log_softmax along other axes: dim=0, 1, -2"""
    x = rng.normal(3, 4, 5, std=2.0)
    return {
        "dim0": impl.softmax(x, dim=0),
        "dim1": impl.softmax(x, 1),
        "dim_-2": impl.softmax(x, dim=-2),
        "dim2": impl.softmax(x, dim=2),
        "log_dim0": impl.log_softmax(x, dim=0),
        "log_dim1": impl.log_softmax(x, 1),
    }


@case(points=5, checker=HALF)
def softmax_half(impl, rng):
    """bf16 / fp16 输入：在 fp32 中计算，输出保持输入的 dtype / bf16 and fp16 input: fp32 inside, output in the input's dtype"""
    return {
        "bf16": impl.softmax(rng.normal(4, 512, std=3.0, dtype=torch.bfloat16)),
        # Around 30, exp in fp16 itself would overflow (65504 = exp(11.1)) without the max shift.
        "fp16": impl.softmax(rng.normal(4, 64, std=3.0, mean=30.0, dtype=torch.float16)),
    }


# ---------------------------------------------------------------- log_softmax


@case(points=7, public=True)
def log_softmax_fp32(impl, rng):
    """fp32 的 log_softmax / fp32 log_softmax"""
    x = rng.normal(4, 40, std=3.0)
    return {"y": impl.log_softmax(x), "big": impl.log_softmax(x * 300.0)}


@case(points=5)
def log_softmax_tiny_probs(impl, rng):
    """概率小到在 fp32 中下溢为 0 时，log_softmax 仍应是有限值 /
    log_softmax stays finite where the probability underflows to 0"""
    x = rng.normal(3, 20, std=1.0)
    x[:, 0] += 200.0  # every other entry sits about 200 below: exp(-200) is 0 in fp32
    x[2] *= 60.0
    return {"y": impl.log_softmax(x), "dim0": impl.log_softmax(x.T.contiguous(), dim=0)}


@case(points=4, checker=HALF)
def log_softmax_bf16(impl, rng):
    """bf16 输入的 log_softmax：输出为 bf16 / bf16 log_softmax: the output is bf16"""
    return {"y": impl.log_softmax(rng.normal(4, 512, std=3.0, dtype=torch.bfloat16))}


@case(points=4)
def softmax_backward(impl, rng):
    """softmax 与 log_softmax 的反向传播；被屏蔽为 -inf 的位置梯度为 0 /
    gradients through softmax and log_softmax; positions masked to -inf get zero gradient"""
    x = rng.normal(3, 7, std=2.0)
    x[1, 2] = float("-inf")
    x[2, :5] = float("-inf")
    x.requires_grad_(True)
    p = impl.softmax(x)
    (p * rng.normal(3, 7)).sum().backward()
    z = rng.normal(2, 5, 3, std=2.0).requires_grad_(True)
    logp = impl.log_softmax(z, dim=1)
    (logp * rng.normal(2, 5, 3)).sum().backward()
    return {"p": p, "logp": logp, "grads": {"softmax": x.grad, "log_softmax_dim1": z.grad}}


# ---------------------------------------------------------------- cross_entropy


def _targets(rng, shape, vocab, ignore_frac=0.0, ignore_index=-100):
    t = rng.integers(0, vocab, *shape)
    if ignore_frac:
        drop = rng.uniform(*shape) < ignore_frac
        t = t.masked_fill(drop, ignore_index)
    return t


@case(points=5)
def cross_entropy_2d(impl, rng):
    """(N, V) 的 logits 与 (N,) 的标签：fp32 标量，平均值 /
    (N, V) logits, (N,) targets: an fp32 scalar mean"""
    logits = rng.normal(16, 50, std=2.0)
    t = _targets(rng, (16,), 50)
    return {"loss": impl.cross_entropy(logits, t), "first_row": impl.cross_entropy(logits[:1], t[:1])}


@case(points=7, public=True)
def cross_entropy_ignore_index(impl, rng):
    """ignore_index 位置不计入损失，也不计入分母；ignore_index 可以是别的值 /
    ignored targets count neither in the sum nor in the denominator; ignore_index may be another value"""
    logits = rng.normal(24, 30, std=2.0)
    t = _targets(rng, (24,), 30)
    t_default = t.clone()
    t_default[::3] = -100
    t_minus1 = t.clone()
    t_minus1[1::4] = -1
    return {
        "default": impl.cross_entropy(logits, t_default),
        "minus_1": impl.cross_entropy(logits, t_minus1, ignore_index=-1),
        # A padding id that is also a valid class: targets equal to 3 are skipped.
        "class_3": impl.cross_entropy(logits, t, ignore_index=3),
    }


@case(points=5)
def cross_entropy_3d(impl, rng):
    """(B, T, V) 的 logits 与 (B, T) 的标签，含填充；数值很大的 logits；以及被屏蔽为 -inf 的非目标词 /
    (B, T, V) logits with (B, T) targets and padding; very large logits; non-target entries masked to -inf"""
    logits = rng.normal(2, 7, 40, std=2.0)
    t = _targets(rng, (2, 7), 40, ignore_frac=0.3)
    # A quarter of the vocabulary masked (as a constrained decoder does), never a row's target:
    # the masked entries must add exactly nothing, and 0 * -inf in a one-hot sum would be NaN.
    hit = t.clamp(min=0).unsqueeze(-1)
    masked = logits.masked_fill(rng.uniform(2, 7, 40) < 0.25, float("-inf")).scatter(
        -1, hit, logits.gather(-1, hit)
    )
    return {
        "loss": impl.cross_entropy(logits, t),
        "large": impl.cross_entropy(logits * 150.0, t),
        "masked": impl.cross_entropy(masked, t),
    }


@case(points=5)
def cross_entropy_bf16(impl, rng):
    """bf16 logits：在 fp32 中计算，损失是 fp32 标量 /
    bf16 logits: computed in fp32, the loss is an fp32 scalar"""
    logits = rng.normal(4, 8, 256, std=3.0, dtype=torch.bfloat16)
    t = _targets(rng, (4, 8), 256, ignore_frac=0.2)
    return {"loss": impl.cross_entropy(logits, t)}


@case(points=4, checker=exact())
def cross_entropy_all_ignored(impl, rng):
    """所有标签都被忽略：没有可平均的 token，返回 NaN（与 torch 相同）/
    every target ignored: nothing to average, the loss is NaN (as in torch)"""
    logits = rng.normal(2, 3, 10, std=2.0)
    return {
        "default": impl.cross_entropy(logits, torch.full((2, 3), -100)),
        "custom": impl.cross_entropy(logits[0], torch.full((3,), 7), ignore_index=7),
    }


@case(points=5, checkers={"grad": GRAD})
def cross_entropy_backward(impl, rng):
    """对 logits 的梯度：被忽略的行梯度为 0 / gradient with respect to the logits: zero on ignored rows"""
    logits = rng.normal(3, 5, 20, std=2.0).requires_grad_(True)
    t = _targets(rng, (3, 5), 20, ignore_frac=0.3)
    loss = impl.cross_entropy(logits, t)
    loss.backward()
    return {"loss": loss, "grad": logits.grad}


# ---------------------------------------------------------------- all three


@case(points=5)
def edge_shapes(impl, rng):
    """边界形状：长度为 1 的维（softmax 为 1，log_softmax 为 0）、一维输入、batch 1 且只有一个 token 的交叉熵 /
    edge shapes: an axis of length 1 (softmax 1, log_softmax 0), a 1-D input, cross-entropy on one token with batch 1"""
    col = rng.normal(3, 1, std=3.0)
    vec = rng.normal(7, std=3.0)
    logits = rng.normal(1, 1, 11, std=2.0)
    return {
        "softmax_len1": impl.softmax(col),
        "log_softmax_len1": impl.log_softmax(col),
        "softmax_1d": impl.softmax(vec),
        "log_softmax_1d_dim0": impl.log_softmax(vec, dim=0),
        "ce_one_token": impl.cross_entropy(logits, torch.tensor([[4]])),
    }


@case(points=5, checkers={"inputs_after_calls": exact()})
def inputs_unchanged(impl, rng):
    """三个函数都不能改动传入的张量：x、logits 和 targets（包括被忽略的标签）保持原样 /
    none of the functions may modify its inputs: x, logits and targets (ignored labels included) stay as they were"""
    x = rng.normal(4, 9, std=3.0)
    z = rng.normal(4, 9, std=3.0)
    logits = rng.normal(2, 6, 9, std=2.0)
    t = _targets(rng, (2, 6), 9)
    t[:, ::3] = -100
    p = impl.softmax(x, dim=0)
    logp = impl.log_softmax(z)
    loss = impl.cross_entropy(logits, t)
    # The inputs themselves, compared outside this process with the reference's untouched ones.
    return {
        "p": p,
        "logp": logp,
        "loss": loss,
        "inputs_after_calls": {"softmax_x": x, "log_softmax_x": z, "logits": logits, "targets": t},
    }


# ---------------------------------------------------------------- state and layouts (version 3)


@case(points=4, checkers={"softmax[2]": HALF, "log_softmax[1]": HALF})
def each_call_its_own(impl, rng):
    """每个函数连续调用几次：形状、dtype、dim 和 ignore_index 每次都不同；每次调用只能用这次的参数 /
    each function called several times in a row, with another shape, dtype, dim and ignore_index each time;
    every call uses its own arguments only"""
    logits_a = rng.normal(8, 20, std=2.0)
    logits_b = rng.normal(2, 6, 30, std=2.0, dtype=torch.bfloat16)
    logits_c = rng.normal(3, 4, 11, std=2.0)
    t_a = _targets(rng, (8,), 20, ignore_frac=0.25)
    t_b = _targets(rng, (2, 6), 30)  # targets equal to 0 are the padding of this call
    t_c = _targets(rng, (3, 4), 11, ignore_frac=0.25, ignore_index=5)
    return {
        "softmax": [
            impl.softmax(rng.normal(3, 10, std=3.0)),
            impl.softmax(rng.normal(2, 5, 7, std=3.0), dim=1),
            impl.softmax(rng.normal(4, 64, std=3.0, dtype=torch.bfloat16)),
            impl.softmax(rng.normal(6, std=3.0), dim=0),
        ],
        "log_softmax": [
            impl.log_softmax(rng.normal(4, 12, std=3.0)),
            impl.log_softmax(rng.normal(3, 6, 5, std=3.0, dtype=torch.bfloat16), dim=0),
            impl.log_softmax(rng.normal(1, 9, std=3.0), dim=-1),
        ],
        "cross_entropy": [
            impl.cross_entropy(logits_a, t_a),
            impl.cross_entropy(logits_b, t_b, ignore_index=0),
            impl.cross_entropy(logits_c, t_c, ignore_index=5),
        ],
    }


@case(points=4)
def non_contiguous_inputs(impl, rng):
    """非连续的输入：转置或扩展得到的 x，以及下一个词预测里错开一位的 `logits[:, :-1]` 与 `labels[:, 1:]`；
    结果须与同样数值的连续输入相同 /
    non-contiguous inputs: a transposed or expanded x, and the shifted `logits[:, :-1]` and `labels[:, 1:]` of
    next-token prediction; the results must equal those for the same values laid out contiguously"""
    x_t = rng.normal(9, 4, std=3.0).T  # (4, 9), strides (1, 4)
    row = rng.normal(1, 13, std=3.0).expand(3, 13)  # three rows that share one row's memory
    z_t = rng.normal(5, 3, 6, std=3.0).transpose(0, 1)  # (3, 5, 6)
    logits = rng.normal(2, 7, 25, std=2.0)
    labels = _targets(rng, (2, 7), 25)
    labels[1, 5:] = -100  # padding at the end of the second sequence
    shifted, next_ids = logits[:, :-1], labels[:, 1:]  # position t predicts token t + 1
    return {
        "softmax": {"contiguous": impl.softmax(x_t.contiguous()), "transposed_view": impl.softmax(x_t)},
        "softmax_rows": {"contiguous": impl.softmax(row.contiguous()), "expanded_view": impl.softmax(row)},
        "log_softmax": {
            "contiguous": impl.log_softmax(z_t.contiguous(), dim=1),
            "transposed_view": impl.log_softmax(z_t, dim=1),
        },
        "cross_entropy": {
            "contiguous": impl.cross_entropy(shifted.contiguous(), next_ids.contiguous()),
            "shifted_view": impl.cross_entropy(shifted, next_ids),
        },
    }
