"""Cases for problem 209. Each returns observations; the judge compares them with the reference's.

Every case loads the same weights into the learner's module by parameter name (_layer), and
builds the cos/sin tables itself, so only the layer's wiring is under test.

Checker choices, measured on torch 2.13 CPU against four other correct formulations (grouped
einsum without repeated kv heads, F.linear + F.rms_norm + complex-number RoPE + expanded kv
heads, transformers' Qwen3-Next eager order, and float64 throughout):
- fp32 outputs (FP32): at most 6.0e-7 from the reference (outputs up to 2.1); gradients at
  most 1.6e-6 (up to 8.3, the q_proj gradient being the worst). rtol = atol = 1e-5 leaves a
  margin of six or more. The mistakes are off by 0.09 (norm after RoPE, the smallest) to 2.
- bf16 output (BF16): fp32-inside formulations agree with the reference to 1 ulp in this case;
  transformers' order (RoPE products, softmax weights and gate in bf16) is 7.8e-3 off here,
  float64-with-one-rounding 1.2e-2. Over a stress run (40 seeds, four shapes up to 16 tokens
  and 6 heads) the worst excess over 1.6e-2·|expected| is 2.6e-2 (transformers' order) and
  1.1e-2 (float64), hence atol 5e-2. Every wiring mistake except "norm after RoPE" is off by
  0.26 or more here (most by more than 1); that one (0.07 here) is caught by the fp32 cases.
- The parameter table compares names, shapes and the zero initial norm weights exactly.
- q_norm and k_norm called on their own (QK_NORM, qk_norm_direct): the statement leaves the
  precision of RoPE, attention and the gate open (fp32 steps, transformers' bf16
  intermediates and float64 all pass the layer cases), but not the norms': statistics and
  1 + w in fp32, one rounding. On the case's inputs, and over 60 seeds of them, every correct
  norm (the reference, F.rms_norm on fp32, sum/sqrt, transformers' Qwen3-Next norm, float64)
  is within 1 ulp of the reference on at most 0.26% of the elements (all of it in the fp16
  part; bf16 is bit-identical). Statistics in bf16 move 33-50% of the bf16 elements by 1-2
  ulps and overflow x² in the fp16 part (off by thousands of ulps); 1 + w rounded to bf16 or
  fp16 (the weight not cast) moves 15-40% by 1 ulp; a norm that returns fp32 fails on the
  dtype. The layer's bf16 case accepts all three, hence ulp(1, 2%) as in problem 204.
- State across calls (version 4: one_layer_many_calls, weights_edited_between_calls,
  transposed_input, two_layers_interleaved; issue 28). One layer called with 5, 8 and 3 tokens
  and other RoPE tables, then after `.to(bfloat16)`; edited in place and by load_state_dict
  between calls; a transposed (non-contiguous) x beside the same values contiguous; two layers
  called in turn. Measured against the six accepted formulations (Llama style with a mask made
  per call, gpt-fast style with a mask buffer grown on demand among them): fp32 calls at most
  1.0e-6 off (FP32 allows 1e-5), the bf16 call 9.3e-3 (float64) and 1.2e-2 (transformers'
  order) off, inside BF16. A fused q/k/v weight (or 1 + w) kept from the first call is off by
  0.1 or more after the edits and raises on the bf16 call (wrong/fused_qkv_cached_on_first_call);
  positions of the first call's length (mutant 35:20:memo) raise on the longer second call.
  The observations are lists of calls (`calls`) and `contiguous` beside `transposed_view`, the
  keys the judge's diagnoses read ("right on the first call, wrong on a later one").
"""

import torch

from judge.core.casekit import case, load_params
from judge.core.checkers import allclose, exact, ulp

FP32 = allclose(rtol=1e-5, atol=1e-5)
BF16 = allclose(rtol=1.6e-2, atol=5e-2)
GRADS = allclose(rtol=1e-5, atol=1e-5)
QK_NORM = ulp(max_ulps=1, max_fraction=0.02)


def rope_table(rotary_dim, seq, theta=10000.0):
    # The cos/sin tables of problem 205 for positions 0..seq-1, built here so that every
    # solution gets the same ones.
    inv_freq = 1.0 / theta ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim)
    angles = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


def _layer(impl, rng, dim, n_heads, n_kv_heads, head_dim, dtype=torch.float32, **kwargs):
    """A layer with trained-looking weights, loaded by name so every solution gets the same ones."""
    m = impl.GatedAttention(dim, n_heads, n_kv_heads, head_dim, **kwargs)
    load_params(
        m,
        **{
            "q_proj.weight": rng.normal(n_heads * head_dim * 2, dim, std=dim**-0.5),
            "k_proj.weight": rng.normal(n_kv_heads * head_dim, dim, std=dim**-0.5),
            "v_proj.weight": rng.normal(n_kv_heads * head_dim, dim, std=dim**-0.5),
            "o_proj.weight": rng.normal(dim, n_heads * head_dim, std=(n_heads * head_dim) ** -0.5),
            # Scales of (1 + w) around 1.5: peaked attention, and (1 + w) far from w.
            "q_norm.weight": rng.normal(head_dim, std=0.3, mean=0.5),
            "k_norm.weight": rng.normal(head_dim, std=0.3, mean=0.5),
        },
    )
    return m.to(dtype)


def _run(impl, rng, batch, seq, dim, n_heads, n_kv_heads, head_dim, rotary_dim, dtype=torch.float32):
    m = _layer(impl, rng, dim, n_heads, n_kv_heads, head_dim, dtype)
    cos, sin = rope_table(rotary_dim, seq)
    x = rng.normal(batch, seq, dim, dtype=dtype)
    return m(x, cos, sin)


@case(points=5, public=True, checker=exact())
def parameters(impl, rng):
    """参数名与形状（没有偏置）；q_norm、k_norm 的 weight 初始为 0 /
    parameter names and shapes (no biases); q_norm and k_norm weights start at zero"""
    gqa = impl.GatedAttention(48, 4, 2, 16)
    mqa = impl.GatedAttention(32, 6, 1, 8, eps=1e-5)
    norms = {n: p.detach().clone() for n, p in gqa.named_parameters() if n.endswith("norm.weight")}
    return {
        "gqa_shapes": {n: tuple(p.shape) for n, p in gqa.named_parameters()},
        "mqa_shapes": {n: tuple(p.shape) for n, p in mqa.named_parameters()},
        "norm_init": norms,
    }


@case(points=10, public=True, checker=FP32)
def gqa_fp32(impl, rng):
    """fp32，8 个查询头共用 2 个 kv 头，只旋转每个头的前 8 维 /
    fp32, 8 query heads sharing 2 kv heads, rotating the first 8 features of each head"""
    return {"y": _run(impl, rng, 2, 7, 48, 8, 2, 16, 8)}


@case(points=10, public=True, checker=BF16)
def gqa_bf16(impl, rng):
    """bf16 的权重与输入：输出为 bf16 / bf16 weights and input: the output is bf16"""
    return {"y": _run(impl, rng, 2, 9, 64, 4, 2, 32, 8, dtype=torch.bfloat16)}


@case(points=8, checker=FP32)
def mha(impl, rng):
    """n_kv_heads == n_heads：每个查询头有自己的 kv 头 / n_kv_heads == n_heads: every query head has its own kv head"""
    return {"y": _run(impl, rng, 2, 6, 40, 4, 4, 8, 4)}


@case(points=8, checker=FP32)
def mqa(impl, rng):
    """n_kv_heads == 1（MQA）：所有查询头共用一个 kv 头 / n_kv_heads == 1 (MQA): all query heads share one kv head"""
    return {"y": _run(impl, rng, 2, 6, 40, 6, 1, 8, 4)}


@case(points=8, checker=FP32)
def wide_groups(impl, rng):
    """每组 4 个查询头、dim 等于 n_heads·head_dim / groups of 4 query heads, with dim equal to n_heads·head_dim"""
    return {"y": _run(impl, rng, 1, 8, 64, 8, 2, 8, 4)}


@case(points=4, checker=FP32)
def single_token(impl, rng):
    """batch 1、长度 1：只能看自己，输出是 o_proj(sigmoid(gate)·v) /
    batch 1, length 1: the token sees only itself, the output is o_proj(sigmoid(gate)·v)"""
    return {"y": _run(impl, rng, 1, 1, 24, 4, 2, 8, 4)}


@case(points=4, checker=FP32)
def full_rotary(impl, rng):
    """表宽等于 head_dim：整个头都旋转 / a table as wide as head_dim: the whole head rotates"""
    return {"y": _run(impl, rng, 2, 5, 32, 4, 2, 8, 8)}


@case(points=8, checker=FP32)
def eps_reaches_norms(impl, rng):
    """eps 要传给 q_norm 和 k_norm：同样的权重和输入，默认 eps 与 eps = 0.5 的结果明显不同 /
    eps must reach q_norm and k_norm: the same weights and input give visibly different results with the default eps and eps = 0.5"""
    m = _layer(impl, rng, 32, 4, 2, 8, eps=0.5)
    default = impl.GatedAttention(32, 4, 2, 8)
    default.load_state_dict(m.state_dict())
    cos, sin = rope_table(4, 6)
    x = rng.normal(2, 6, 32)
    return {"eps_default": default(x, cos, sin), "eps_0.5": m(x, cos, sin)}


@case(points=8, checker=QK_NORM)
def qk_norm_direct(impl, rng):
    """直接调用 q_norm、k_norm（bf16 与数值很大的 fp16 输入）：统计量和 1 + weight 在 fp32 中算，只舍入一次，输出保持输入的 dtype /
    q_norm and k_norm called on their own (bf16, and fp16 with large values): statistics and 1 + weight in fp32, one rounding, the input's dtype out"""
    m = _layer(impl, rng, 32, 4, 2, 32, dtype=torch.bfloat16)
    q = rng.normal(3, 5, 4, 32, std=3.0, dtype=torch.bfloat16)
    k = rng.normal(3, 5, 2, 32, std=3.0, dtype=torch.bfloat16)
    half = _layer(impl, rng, 32, 4, 2, 32, dtype=torch.float16)
    # std 400: x² reaches 10⁶, far past fp16's largest value (65504).
    big = rng.normal(2, 3, 4, 32, std=400.0, dtype=torch.float16)
    return {
        "q_bf16": m.q_norm(q),
        "k_bf16": m.k_norm(k),
        "q_fp16_large": half.q_norm(big),
        "k_fp16_large": half.k_norm(big[:, :, :2]),
    }


@case(points=11, checker=FP32, checkers={"grads": GRADS})
def backward(impl, rng):
    """反向传播：对 x 和全部六个参数的梯度 / gradients with respect to x and all six parameters"""
    m = _layer(impl, rng, 24, 4, 2, 8)
    cos, sin = rope_table(4, 5)
    x = rng.normal(2, 5, 24).requires_grad_(True)
    y = m(x, cos, sin)
    y.backward(rng.normal(2, 5, 24))
    grads = {n: p.grad for n, p in m.named_parameters()}
    return {"y": y, "grads": {"x": x.grad, **grads}}


# ---------------------------------------------------------------- state across calls (version 4)


@case(points=4, checker=FP32, checkers={"calls[3]": BF16})
def one_layer_many_calls(impl, rng):
    """同一个层连续调用：长度 5、8、3 的序列（每次配各自的 RoPE 表，第三次换了 theta），再 `.to(bfloat16)` 后调用一次；
    每次调用只能用这次的输入，不能沿用第一次留下的东西 /
    one layer called again and again: sequences of 5, 8 and 3 tokens (each with its own RoPE tables, the third
    with another theta), then once more after `.to(bfloat16)`; every call uses its own inputs, nothing kept from the first"""
    m = _layer(impl, rng, 32, 4, 2, 8)
    calls = []
    for batch, seq, theta in ((2, 5, 10000.0), (1, 8, 10000.0), (3, 3, 500.0)):
        cos, sin = rope_table(4, seq, theta)
        calls.append(m(rng.normal(batch, seq, 32), cos, sin))
    m.to(torch.bfloat16)
    cos, sin = rope_table(4, 6)
    calls.append(m(rng.normal(2, 6, 32, dtype=torch.bfloat16), cos, sin))
    return {"calls": calls}


@case(points=4, checker=FP32)
def weights_edited_between_calls(impl, rng):
    """第一次调用之后修改参数：先原地加一步更新（像优化器那样），再 `load_state_dict` 换一套权重；
    之后的调用必须用新的参数 /
    the parameters change after the first call: an in-place step (as an optimiser takes), then `load_state_dict`
    with other weights; every later call must use the parameters as they are now"""
    m = _layer(impl, rng, 32, 4, 2, 8)
    cos, sin = rope_table(4, 6)
    x = rng.normal(2, 6, 32)
    calls = [m(x, cos, sin)]
    with torch.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.add_(rng.normal(*p.shape, std=0.2))
    calls.append(m(x, cos, sin))
    other = _layer(impl, rng, 32, 4, 2, 8)
    m.load_state_dict(other.state_dict())
    calls.append(m(x, cos, sin))
    return {"calls": calls}


@case(points=4, checker=FP32)
def transposed_input(impl, rng):
    """x 是一个非连续的视图（由 (seq, batch, dim) 的张量转置而来），结果须与同样数值的连续输入相同 /
    x is a non-contiguous view (a (seq, batch, dim) tensor transposed); the result must equal the one for the same values laid out contiguously"""
    m = _layer(impl, rng, 32, 4, 2, 8)
    cos, sin = rope_table(4, 5)
    seq_first = rng.normal(5, 3, 32)
    view = seq_first.transpose(0, 1)
    return {"contiguous": m(view.contiguous(), cos, sin), "transposed_view": m(view, cos, sin)}


@case(points=4, checker=FP32)
def two_layers_interleaved(impl, rng):
    """两个层（权重不同）交替调用：第一层、第二层、再第一层（换一个长度）；两个对象不能共享任何状态 /
    two layers with different weights called in turn: the first, the second, the first again (another length);
    the two objects must share no state"""
    first = _layer(impl, rng, 32, 4, 2, 8)
    second = _layer(impl, rng, 32, 4, 2, 8)
    cos, sin = rope_table(4, 6)
    x = rng.normal(2, 6, 32)
    y1 = first(x, cos, sin)
    y2 = second(x, cos, sin)
    cos4, sin4 = rope_table(4, 4)
    y3 = first(x[:, :4], cos4, sin4)
    return {"first_layer": {"calls": [y1, y3]}, "second_layer": y2}
