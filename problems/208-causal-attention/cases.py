"""Cases for problem 208. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU against four other correct formulations (einsum
with a finfo.min fill and empty rows zeroed afterwards, an online softmax over blocks of four
keys, an additive 0/-inf bias with empty rows replaced by torch.where, and float64 throughout):
- fp32 outputs and gradients (FP32): up to length 9 the formulations differ from the reference
  by at most 8.3e-7 (values up to 3.7); at length 96 by at most 3.0e-6 (outputs and gradients
  up to 4.6). rtol 1e-5 with atol 2e-5 leaves a margin of six or more; every mistake is off by
  0.1 or more, or NaN.
- large_logits, "y": q and k of std 100 give scores of std 1e4. In every row the best visible
  key leads the runner-up by at least 243, so the weights are one-hot in fp32 and all correct
  formulations agree bit for bit. In 7 of the 52 rows with both kinds of key, a masked key
  scores more than 1e4 above the best visible one, which is what defeats a -1e4 bias.
- large_logits, "hundreds": scores of std 144, top-two gap at least 1.5, correct formulations
  within 4.8e-7. Masked keys lead the visible maximum by 1.3 to 384 in 31 rows, some beyond
  what fp32's exp can bridge (about 104), which separates "mask after softmax" with and without
  renormalising.
- bf16 (BF16): the values are shifted into [0.5, 3.5], so every output is a weighted average
  well away from 0. In a stress run (300 random shapes, 1.9M outputs) every correct fp32
  formulation stays within 1 ulp of the reference and differs on at most 1.1e-5 of the
  elements. (With zero-mean values, outputs near 0 differ by up to 30 ulps of their tiny
  size on about 1e-5 of elements, hence the shift.) Rounding the weights to bf16 before
  multiplying by v moves 12-16% of the outputs by 1 ulp; torch's own
  scaled_dot_product_attention (transformers' default sdpa path) 5-6% by 1 ulp; scores in bf16
  (everything in bf16, or transformers' eager recipe) 16-21%, some of them by 2 ulps. Hence at
  most 1 ulp, on any share of the elements. Until version 4 the share was capped at 1%, which
  failed the sdpa result too: a rule of this problem alone, dropped in version 5 (issue 29),
  with the wrong solution weights_rounded_to_bf16 that it was for.
- attention_sink_backward: key 0 leads every other visible key by 16 to 23, so the other
  weights are 5e-12 to 7e-8 and in 27 of the 28 rows with two or more keys the fp32 sum of
  the exponentials is exactly 1. The gradients there are of order 1e-9 to 1e-6, far below
  FP32's atol, and the full q and k gradients cannot tell much apart: the sink key's own
  gradient is g_i0 - sum_k p_ik g_ik, a cancellation that leaves fp32 noise of about 6e-8 |g|
  (torch.softmax's backward is 3.1e-7 off float64 there, the same size as the mistakes).
  The keys 1.. are never a row's maximum, and their gradients e_ij (g_ij - sum_k p_ik g_ik)
  have no cancellation: over the case's seed and 60 others, every correct formulation (the
  reference, the four above, float64) is within a relative 2.8e-5 of float64 beyond 1e-12
  absolute (at most 0.93% of SINK_GRADS = rtol 1e-3, atol 1e-12 on the case itself).
  Dividing by the sum only where it exceeds 1 (so not in these rows: forward bit-identical)
  drops the "- sum_k p_ik g_ik" term from their gradients: a median relative error of 0.43 and
  99% of the elements outside SINK_GRADS (6.4e3 times the tolerance at worst).
- each_call_its_own and non_contiguous_inputs (version 3; FP32, BF16 for the bf16 call): the
  accepted formulations, nanoGPT's sliced tril buffer included, differ from the reference by at
  most 6.0e-7 on outputs up to 2.6 and round the bf16 call to the reference's bits. A causal mask
  kept from an earlier call of the same length (with that call's padding folded in) is off by
  0.1 or more in the last call; a `.view` that needs a contiguous q raises on the transposed one.
"""

import math

import torch

from judge.core.casekit import case
from judge.core.checkers import allclose, exact, ulp

FP32 = allclose(rtol=1e-5, atol=2e-5)
BF16 = ulp(max_ulps=1)
# Relative, for gradients of order 1e-9 (see attention_sink_backward at the top).
SINK_GRADS = allclose(rtol=1e-3, atol=1e-12)


def _qkv(rng, *shape, std=1.0, dtype=torch.float32, v_shift=0.0):
    # Queries and keys a bit larger than unit size, so that the softmax is neither flat nor one-hot.
    q = rng.normal(*shape, std=std, dtype=dtype)
    k = rng.normal(*shape, std=std, dtype=dtype)
    if v_shift:
        # Values in [v_shift - 1.5, v_shift + 1.5]: every output is then a weighted average far
        # from 0, where one bf16 ulp dwarfs fp32 rounding differences (see the top).
        v = (rng.normal(*shape).clamp(-1.5, 1.5) + v_shift).to(dtype)
    else:
        v = rng.normal(*shape, dtype=dtype)
    return q, k, v


def _left_padded(lengths, seq):
    # Left padding as in batched generation: the real tokens of each row sit at the end.
    mask = torch.zeros(len(lengths), seq, dtype=torch.bool)
    for row, n in enumerate(lengths):
        if n:
            mask[row, seq - n :] = True
    return mask


@case(points=10, public=True, checker=FP32)
def causal_fp32(impl, rng):
    """fp32 的因果注意力，无填充掩码 / fp32 causal attention without a padding mask"""
    q, k, v = _qkv(rng, 2, 3, 7, 16, std=1.5)
    return {"y": impl.attention(q, k, v)}


@case(points=10, public=True, checker=FP32)
def left_padding(impl, rng):
    """左填充：掩码去掉的是键；没有可见键的查询（填充位置）输出 0 /
    left padding: the mask removes keys; a query with no visible key (a padded position) outputs 0"""
    q, k, v = _qkv(rng, 3, 2, 6, 8, std=1.5)
    mask = _left_padded([6, 4, 1], 6)
    return {"y": impl.attention(q, k, v, mask)}


@case(points=10, public=True, checker=BF16)
def bf16_inputs(impl, rng):
    """bf16 的 q、k、v：在 fp32 中计算，输出为 bf16 / bf16 q, k, v: computed in fp32, returned as bf16"""
    q, k, v = _qkv(rng, 2, 4, 16, 32, std=1.5, dtype=torch.bfloat16, v_shift=2.0)
    return {"y": impl.attention(q, k, v)}


@case(points=5, checker=FP32)
def single_token(impl, rng):
    """长度为 1 的序列、batch 为 1：输出就是 v；被填充的唯一 token 输出 0 /
    a sequence of length 1 in a batch of 1: the output is v; a lone padded token outputs 0"""
    q, k, v = _qkv(rng, 1, 2, 1, 8, std=1.5)
    return {
        "y": impl.attention(q, k, v),
        "real": impl.attention(q, k, v, torch.tensor([[True]])),
        "padded": impl.attention(q, k, v, torch.tensor([[False]])),
    }


@case(points=8, checker=FP32)
def odd_head_dim(impl, rng):
    """head_dim = 7、长度 9：缩放因子是 1/√7 / head_dim 7 and length 9: the scale is 1/√7"""
    q, k, v = _qkv(rng, 2, 3, 9, 7, std=1.5)
    mask = _left_padded([9, 5], 9)
    return {"y": impl.attention(q, k, v), "padded": impl.attention(q, k, v, mask)}


@case(points=5, checker=FP32)
def mask_patterns(impl, rng):
    """其他掩码：全为 True（与不传相同）、右填充、中间有空洞、整行都是填充 /
    other masks: all True (same as none), right padding, a hole in the middle, a row that is all padding"""
    q, k, v = _qkv(rng, 4, 2, 6, 8, std=1.5)
    mask = torch.tensor(
        [
            [True] * 6,
            [True, True, True, True, False, False],
            [True, True, False, False, True, True],
            [False] * 6,
        ]
    )
    return {"all_true": impl.attention(q[:1], k[:1], v[:1], mask[:1]), "y": impl.attention(q, k, v, mask)}


@case(points=8, checker=FP32)
def large_logits(impl, rng):
    """数万量级的注意力分数：须减去行最大值；被屏蔽的键须完全去掉（-1e4 不够）/
    scores in the tens of thousands: subtract the row maximum, and remove masked keys completely (-1e4 is not enough)"""
    q, k, v = _qkv(rng, 2, 4, 8, 16, std=100.0)
    mask = _left_padded([8, 6], 8)
    # Scores in the hundreds: a masked key may lead the visible ones by a little or by more
    # than fp32's exp can bridge (about 104), which tells the two ways of masking late apart.
    qm, km, vm = _qkv(rng, 2, 4, 8, 16, std=12.0)
    return {"y": impl.attention(q, k, v, mask), "hundreds": impl.attention(qm, km, vm, mask)}


@case(points=8, checker=FP32, checkers={"grads": FP32})
def backward(impl, rng):
    """反向传播：对 q、k、v 的梯度，含没有可见键的行（梯度不能是 NaN）/
    gradients with respect to q, k and v, with rows that see no key (no NaN gradients)"""
    q, k, v = (t.requires_grad_(True) for t in _qkv(rng, 2, 2, 5, 8, std=1.5))
    y = impl.attention(q, k, v, _left_padded([5, 3], 5))
    y.backward(rng.normal(2, 2, 5, 8))
    return {"y": y, "grads": {"q": q.grad, "k": k.grad, "v": v.grad}}


@case(points=5, checker=exact(), checkers={"y": FP32})
def inputs_untouched(impl, rng):
    """q、k、v 和掩码不能被原地修改 / q, k, v and the mask must not be modified in place"""
    q, k, v = _qkv(rng, 2, 2, 5, 8, std=1.5)
    mask = _left_padded([5, 2], 5)
    y = impl.attention(q, k, v, mask)
    # The inputs themselves, compared outside this process with the reference's untouched ones.
    return {"y": y, "after_call": {"q": q, "k": k, "v": v, "padding_mask": mask}}


@case(points=8, checker=BF16)
def bf16_padded_long(impl, rng):
    """bf16、长度 48 并带左填充 / bf16, length 48, with left padding"""
    q, k, v = _qkv(rng, 2, 2, 48, 64, std=1.5, dtype=torch.bfloat16, v_shift=2.0)
    return {"y": impl.attention(q, k, v, _left_padded([48, 30], 48))}


@case(points=8, checker=FP32, checkers={"grads": FP32})
def long_sequence(impl, rng):
    """fp32、长度 96 并带左填充，以及反向传播 / fp32, length 96 with left padding, and backward"""
    q, k, v = (t.requires_grad_(True) for t in _qkv(rng, 2, 2, 96, 32, std=1.5))
    y = impl.attention(q, k, v, _left_padded([96, 61], 96))
    y.backward(rng.normal(2, 2, 96, 32))
    return {"y": y, "grads": {"q": q.grad, "k": k.grad, "v": v.grad}}


@case(points=5, checker=FP32, checkers={"grads": FP32, "unattended_key_grads": SINK_GRADS})
def attention_sink_backward(impl, rng):
    """注意力汇聚（attention sink）：每个查询几乎把全部权重给第 0 个键，其余键的权重只有 1e-11 到 1e-7，
    fp32 中的分母舍入成 1；反向仍须按完整的 softmax 求，这些键得到的微小梯度也要对 /
    an attention sink: every query gives nearly all its weight to key 0 and 1e-11 to 1e-7 to the others,
    so the fp32 denominator rounds to 1; backward must still be the full softmax's, the tiny gradients of those keys included"""
    b, h, n, d = 2, 2, 8, 8
    q, k, v = _qkv(rng, b, h, n, d)
    # Key 0 has a large component along a direction that every query shares and no other key
    # has: each query's score for it leads all others by 16 to 23.
    k[:, :, 0, 0] = 8.0
    k[:, :, 1:, 0] = 0.0
    q[..., 0] = rng.uniform(b, h, n, low=19.0, high=23.0) * math.sqrt(d) / 8.0
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))
    y = impl.attention(q, k, v)
    y.backward(rng.normal(b, h, n, d))
    return {
        "y": y,
        "grads": {"q": q.grad, "k": k.grad, "v": v.grad},
        # Keys 1.. are never the maximum of any row: their gradients are e_ij (g_ij - sum_k p_ik g_ik),
        # tiny but accurate to a relative 3e-5 in every correct formulation.
        "unattended_key_grads": k.grad[:, :, 1:],
    }


# ---------------------------------------------------------------- state and layouts (version 3)


@case(points=5, checker=FP32, checkers={"calls[2]": BF16})
def each_call_its_own(impl, rng):
    """连续调用几次：长度、batch、head 数、dtype 和掩码每次都不同，最后一次与第一次形状相同、数值和掩码不同；
    每次调用只能用这次的参数（为第一次的长度或掩码建的因果掩码不能留到下一次）/
    several calls in a row with another length, batch, number of heads, dtype and mask each time, the last one of
    the first one's shape with other values and a mask; every call uses its own arguments only (no causal mask kept
    from the first call's length or padding)"""
    q0, k0, v0 = _qkv(rng, 2, 2, 5, 8, std=1.5)
    q1, k1, v1 = _qkv(rng, 1, 3, 9, 8, std=1.5)
    q2, k2, v2 = _qkv(rng, 2, 2, 6, 16, std=1.5, dtype=torch.bfloat16, v_shift=2.0)
    q3, k3, v3 = _qkv(rng, 3, 1, 1, 8, std=1.5)
    q4, k4, v4 = _qkv(rng, 2, 2, 5, 8, std=1.5)
    return {
        "calls": [
            impl.attention(q0, k0, v0),
            impl.attention(q1, k1, v1, _left_padded([6], 9)),
            impl.attention(q2, k2, v2, _left_padded([6, 3], 6)),
            impl.attention(q3, k3, v3, torch.tensor([[True], [False], [True]])),
            impl.attention(q4, k4, v4, _left_padded([5, 2], 5)),
        ]
    }


@case(points=5, checker=FP32)
def non_contiguous_inputs(impl, rng):
    """非连续的 q、k、v：模型里它们来自 `(batch, seq, heads, head_dim)` 的张量转置，或从拼在一起的 qkv 投影中切出；
    掩码也可能是更长掩码的切片。结果须与同样数值的连续输入相同 /
    non-contiguous q, k, v: in a model they are a `(batch, seq, heads, head_dim)` tensor transposed, or slices of
    one fused qkv projection; the mask may be a slice of a longer one. The results must equal those for the same
    values laid out contiguously"""
    # As 209's layer makes them: projections laid out (batch, seq, heads, head_dim), then transposed.
    q, k, v = (t.transpose(1, 2) for t in _qkv(rng, 2, 6, 3, 8, std=1.5))
    mask = _left_padded([6, 4], 6)
    contiguous = [t.contiguous() for t in (q, k, v)]
    # One fused projection (batch, heads, seq, 3 * head_dim) split into q, k and v, and the
    # last 7 positions of a 10-position attention mask.
    qkv = rng.normal(2, 2, 7, 3 * 8, std=1.5)
    fq, fk, fv = qkv[..., :8], qkv[..., 8:16], qkv[..., 16:]
    long_mask = _left_padded([10, 5], 10)
    tail = long_mask[:, 3:]
    return {
        "transposed": {
            "contiguous": impl.attention(*contiguous, mask),
            "transposed_view": impl.attention(q, k, v, mask),
        },
        "fused_qkv": {
            "contiguous": impl.attention(
                fq.contiguous(), fk.contiguous(), fv.contiguous(), tail.contiguous()
            ),
            "sliced_view": impl.attention(fq, fk, fv, tail),
        },
    }
