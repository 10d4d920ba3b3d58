"""Cases for problem 213. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU over the cases' own inputs and 19 other seeds
each, against the reference (softmax, topk, a loop over the experts that received tokens,
index_add_), the three accepted solutions (argsort routing with sort-grouped dispatch;
topk on logits with logsumexp weights and a dense einsum mixture; the reference's loop in
float64, rounded at the end):
- Routing weights: at most 3.6e-7 absolute and 6.2e-7 relative from the reference; expert
  ids always identical. torch's default fp32 tolerance (rtol 1.3e-6, atol 1e-5) is used at
  under 4%. The logits of every case are drawn again row by row until neighbouring logits
  (as far down as the order matters) are at least GAP = 1e-2 apart, so no formulation can
  pick other experts or another order. Mistakes move weights by 2e-3 (softmax in bf16) to 0.7.
- fp32 mixture outputs (MOE): y at most 1.4e-6 from the reference (dense einsum) and 3.3e-6
  (float64, 64 experts); router_logits identical, or 2.4e-6 off in float64. Both pass the
  default fp32 tolerance; MOE = allclose(rtol=1e-5, atol=2e-5) adds room for another
  machine's summation order and is used at under 17%. Mistakes are off by 0.1 or more.
- bf16 y (BF16_Y): every formulation above computes in fp32 (or fp64) and rounds once, and
  all of them gave bf16 outputs bit-identical to the reference. The case's smallest |y| is
  1.4e-3, where a bf16 ulp (7.6e-6) is far above the fp32 error, so a correct answer can be
  at most 1 ulp off, on a few elements; ulp(1, 1%) allows that. Computing in bf16 as
  transformers does (bf16 logits, matmuls and index_add_) moves 70% of the elements, by up
  to thousands of ulps near zero; routing in bf16 moves 47%, by up to 72 ulps.
- Gradients (GRADS): the dense einsum's router_weight gradient is the farthest, 2.6e-6 on
  values up to 7.6 (it needs atol 1.0e-6 at rtol 1e-5); float64 is within 1.4e-6.
  allclose(rtol=1e-5, atol=1e-5) uses at most 26% of atol; mistakes are off by 0.1 or more
  (or, with the weights left out, give the router no gradient at all).
- route_default_renormalises calls route(logits, k) without the flag: the same figures as the
  other route cases (at most 3.6e-7 from the reference, ids identical); a default of False moves
  the weights by 0.2 or more.
- moe_block (block_*), measured the same way against the three accepted solutions (each adds
  the shared expert its own way: stacked gate/up with an explicit 1 / (1 + exp(-z)), float64,
  torch.addcmul): fp32 y at most 6.0e-7 from the reference (3% of MOE), router_logits
  identical or 9.5e-7 off (float64); bf16 y bit-identical to the reference in all three, so
  BF16_Y stays. Calling moe_forward on the bf16 x and adding the shared expert afterwards
  (rounding twice) moves 25% of block_bf16's elements, by up to 23 ulps; the shared-expert
  mistakes (no sigmoid, a softmax gate that is always 1, the gate on the whole sum, the shared
  expert added once per chosen expert, no shared expert) are off by 0.1 or more. Gradients of
  the shared weights: at most 8.3e-7 (float64), 3% of GRADS. Against transformers' own
  Qwen3_5MoeSparseMoeBlock the reference is bit-identical in fp32
  (tests/problems/test_213_moe_routing.py).
- inputs_untouched observes the inputs themselves after the calls, compared exactly.
- Speed: 64 experts at top-4 run in 2-3 ms whether dispatched or dense, so no case can tell
  them apart by time on CPU; the statement asks for dispatch and the cases check results.
- route_calls, moe_forward_calls, block_calls (several calls in a row, observed as a list for
  the judge's "right on the first call, wrong on a later one") and non_contiguous_inputs
  (`contiguous` beside `transposed_view` / `strided`) draw with the same helpers, so the same
  gaps hold, and use the same checkers (BF16_Y for the bf16 call). block_calls' first two calls
  have the same shapes and other weights (two layers of one model): a result cached by shape
  returns layer 0's output for layer 1. The transposed x makes a `.view` that flattens x raise.
"""

import torch

from judge.core.casekit import case
from judge.core.checkers import allclose, exact, ulp

# Smallest gap allowed between neighbouring logits of a row (in the order that matters), so
# that correct formulations, whose fp32 logits differ by an ulp or so, pick the same experts
# in the same order.
GAP = 1e-2

MOE = allclose(rtol=1e-5, atol=2e-5)
BF16_Y = ulp(max_ulps=1, max_fraction=0.01)
GRADS = allclose(rtol=1e-5, atol=1e-5)
# moe_block's arguments before top_k, in order.
BLOCK_ARGS = (
    "x",
    "router_weight",
    "gate_up_proj",
    "down_proj",
    "shared_gate_proj",
    "shared_up_proj",
    "shared_down_proj",
    "shared_expert_gate",
)


def _gaps_ok(logits: torch.Tensor, depth: int) -> torch.Tensor:
    """Per row: are the `depth` largest logits (and the next one) at least GAP apart?"""
    top = logits.double().sort(dim=-1, descending=True).values[:, : depth + 1]
    if top.shape[1] < 2:
        return torch.ones(logits.shape[0], dtype=torch.bool)
    return (top[:, :-1] - top[:, 1:]).min(dim=-1).values > GAP


def make_logits(rng, tokens, n_experts, std=2.0, dtype=torch.float32, depth=None):
    """Router logits without near-ties, drawn again row by row until every row is clear."""
    depth = n_experts if depth is None else depth
    logits = rng.normal(tokens, n_experts, std=std, dtype=dtype)
    for _ in range(200):
        bad = ~_gaps_ok(logits, depth)
        if not bool(bad.any()):
            return logits
        logits[bad] = rng.normal(int(bad.sum()), n_experts, std=std, dtype=dtype)
    raise RuntimeError("could not draw untied logits")


def moe_inputs(rng, tokens, dim, n_experts, inter, top_k, dtype=torch.float32, router_std=2.0):
    """x and the weights of a small mixture; x is redrawn where the router would nearly tie."""
    router = rng.normal(n_experts, dim, std=router_std * dim**-0.5, dtype=dtype)
    gate_up = rng.normal(n_experts, 2 * inter, dim, std=dim**-0.5, dtype=dtype)
    down = rng.normal(n_experts, dim, inter, std=inter**-0.5, dtype=dtype)
    x = rng.normal(tokens, dim, dtype=dtype)
    for _ in range(200):
        bad = ~_gaps_ok(x.double() @ router.double().T, top_k)
        if not bool(bad.any()):
            return x, router, gate_up, down
        x[bad] = rng.normal(int(bad.sum()), dim, dtype=dtype)
    raise RuntimeError("could not draw untied router inputs")


def block_inputs(rng, tokens, dim, n_experts, inter, shared_inter, top_k, dtype=torch.float32):
    """moe_inputs plus the shared expert's three projections and its (1, dim) gate."""
    x, router, gate_up, down = moe_inputs(rng, tokens, dim, n_experts, inter, top_k, dtype=dtype)
    shared_gate = rng.normal(shared_inter, dim, std=dim**-0.5, dtype=dtype)
    shared_up = rng.normal(shared_inter, dim, std=dim**-0.5, dtype=dtype)
    shared_down = rng.normal(dim, shared_inter, std=shared_inter**-0.5, dtype=dtype)
    # Gate logits of about +-1.5: the sigmoid spans 0.2 to 0.8, far from a constant.
    gate = rng.normal(1, dim, std=1.5 * dim**-0.5, dtype=dtype)
    return x, router, gate_up, down, shared_gate, shared_up, shared_down, gate


def _block(impl, inputs, top_k):
    y, logits = impl.moe_block(*inputs, top_k)
    return {"y": y, "router_logits": logits}


def _moe(impl, inputs, top_k, norm_topk_prob=True):
    x, router, gate_up, down = inputs
    y, logits = impl.moe_forward(x, router, gate_up, down, top_k, norm_topk_prob=norm_topk_prob)
    return {"y": y, "router_logits": logits}


def _route(impl, logits, top_k, norm_topk_prob=True):
    weights, experts = impl.route(logits, top_k, norm_topk_prob=norm_topk_prob)
    return {"weights": weights, "experts": experts}


# ---------------------------------------------------------------- route


@case(points=5, public=True)
def statement_example(impl, rng):
    """题面中的例子：两个 token、四个专家、top-2 /
    the statement's example: two tokens, four experts, top-2"""
    logits = torch.tensor([[2.0, 0.0, 1.0, -1.0], [0.5, 3.0, -2.0, 2.5]])
    return {
        "norm": _route(impl, logits, 2),
        "no_norm": _route(impl, logits, 2, norm_topk_prob=False),
    }


@case(points=4, public=True)
def route_fp32(impl, rng):
    """fp32 logits：权重按从大到小排列，归一化后每行和为 1 /
    fp32 logits: weights sorted from the largest down, summing to 1 when renormalised"""
    logits = make_logits(rng, 9, 8)
    return {"top2": _route(impl, logits, 2), "top3": _route(impl, logits, 3)}


@case(points=5)
def route_flags(impl, rng):
    """norm_topk_prob=False 保留 softmax 的原始概率；top_k = 1 与 top_k = 专家数 /
    norm_topk_prob=False keeps the raw softmax probabilities; top_k = 1 and top_k = n_experts"""
    logits = make_logits(rng, 7, 6, std=1.5)
    return {
        "top2_raw": _route(impl, logits, 2, norm_topk_prob=False),
        "top1": _route(impl, logits, 1),
        "top1_raw": _route(impl, logits, 1, norm_topk_prob=False),
        "all6": _route(impl, logits, 6),
        "all6_raw": _route(impl, logits, 6, norm_topk_prob=False),
    }


@case(points=3)
def route_default_renormalises(impl, rng):
    """不传 norm_topk_prob 时默认为 True：route(logits, k) 与 route(logits, k, norm_topk_prob=True) 相同 /
    without norm_topk_prob the default is True: route(logits, k) equals route(logits, k, norm_topk_prob=True)"""
    logits = make_logits(rng, 6, 7)
    top2, top3 = impl.route(logits, 2), impl.route(logits, 3)
    return {
        "top2": {"weights": top2[0], "experts": top2[1]},
        "top3": {"weights": top3[0], "experts": top3[1]},
    }


@case(points=5)
def route_bf16_logits(impl, rng):
    """bf16 logits：softmax 在 fp32 中计算，返回 fp32 权重和 int64 专家编号 /
    bf16 logits: softmax in fp32, fp32 weights and int64 expert ids come back"""
    logits = make_logits(rng, 12, 16, std=2.0, dtype=torch.bfloat16)
    return {"top4": _route(impl, logits, 4), "top4_raw": _route(impl, logits, 4, norm_topk_prob=False)}


# ---------------------------------------------------------------- moe_forward


@case(points=6, public=True, checker=MOE)
def moe_fp32(impl, rng):
    """fp32 的 MoE 前向：10 个 token、8 个专家、top-2 /
    fp32 mixture forward: 10 tokens, 8 experts, top-2"""
    inputs = moe_inputs(rng, tokens=10, dim=16, n_experts=8, inter=12, top_k=2)
    return _moe(impl, inputs, 2)


@case(points=5, checker=MOE, checkers={"y": BF16_Y})
def moe_bf16(impl, rng):
    """bf16 的输入与权重：全部在 fp32 中计算，y 为 bf16，router_logits 为 fp32 /
    bf16 input and weights: computed in fp32, y in bf16, router_logits in fp32"""
    inputs = moe_inputs(rng, tokens=16, dim=32, n_experts=8, inter=24, top_k=2, dtype=torch.bfloat16)
    return _moe(impl, inputs, 2)


@case(points=4, checker=MOE)
def moe_single_token(impl, rng):
    """只有一个 token（大多数专家收不到 token）/ a single token (most experts receive nothing)"""
    inputs = moe_inputs(rng, tokens=1, dim=12, n_experts=6, inter=10, top_k=2)
    return _moe(impl, inputs, 2)


@case(points=4, checker=MOE)
def moe_top1(impl, rng):
    """top_k = 1：归一化后权重为 1，不归一化时为该专家的概率 /
    top_k = 1: weight 1 when renormalised, the expert's probability when not"""
    inputs = moe_inputs(rng, tokens=9, dim=16, n_experts=5, inter=8, top_k=1)
    return {"norm": _moe(impl, inputs, 1), "raw": _moe(impl, inputs, 1, norm_topk_prob=False)}


@case(points=4, checker=MOE)
def moe_idle_experts(impl, rng):
    """3 个 token、12 个专家：至少一半的专家一个 token 也收不到 /
    3 tokens, 12 experts: at least half of the experts receive no token at all"""
    inputs = moe_inputs(rng, tokens=3, dim=16, n_experts=12, inter=8, top_k=2)
    return {"norm": _moe(impl, inputs, 2), "raw": _moe(impl, inputs, 2, norm_topk_prob=False)}


@case(points=4, checker=MOE)
def moe_all_experts(impl, rng):
    """top_k 等于专家数：每个 token 用上所有专家 /
    top_k equal to the number of experts: every token uses every expert"""
    inputs = moe_inputs(rng, tokens=6, dim=12, n_experts=4, inter=8, top_k=4, router_std=1.0)
    return {"norm": _moe(impl, inputs, 4), "raw": _moe(impl, inputs, 4, norm_topk_prob=False)}


@case(points=4, checker=MOE)
def moe_square_router(impl, rng):
    """专家数等于 dim：router_weight 的形状是 (n_experts, dim)，logits = x @ router_weightᵀ /
    n_experts equal to dim: router_weight is (n_experts, dim), logits = x @ router_weightᵀ"""
    inputs = moe_inputs(rng, tokens=8, dim=8, n_experts=8, inter=6, top_k=2)
    return _moe(impl, inputs, 2)


@case(points=4, checker=MOE)
def moe_many_experts(impl, rng):
    """64 个专家、top-4、48 个 token：按专家分发，每个专家只处理分给它的 token /
    64 experts, top-4, 48 tokens: dispatch, so each expert runs only on its own tokens"""
    inputs = moe_inputs(rng, tokens=48, dim=32, n_experts=64, inter=16, top_k=4)
    return _moe(impl, inputs, 4)


@case(points=6, checker=MOE, checkers={"grads": GRADS})
def moe_backward(impl, rng):
    """反向传播：对 x、router_weight、gate_up_proj、down_proj 的梯度 /
    gradients with respect to x, router_weight, gate_up_proj and down_proj"""
    inputs = moe_inputs(rng, tokens=7, dim=10, n_experts=6, inter=8, top_k=3)
    x, router, gate_up, down = (t.requires_grad_(True) for t in inputs)
    y, _ = impl.moe_forward(x, router, gate_up, down, 3)
    (y * rng.normal(*y.shape)).sum().backward()
    return {
        "y": y,
        "grads": {
            "x": x.grad,
            "router_weight": router.grad,
            "gate_up_proj": gate_up.grad,
            "down_proj": down.grad,
        },
    }


# ---------------------------------------------------------------- moe_block


@case(points=6, public=True, checker=MOE)
def block_fp32(impl, rng):
    """fp32 的 Qwen3.5-MoE 块：10 个 token、8 个路由专家 top-2，加上一个带 sigmoid 门的共享专家 /
    an fp32 Qwen3.5-MoE block: 10 tokens, 8 routed experts at top-2, plus a shared expert with a sigmoid gate"""
    inputs = block_inputs(rng, tokens=10, dim=16, n_experts=8, inter=12, shared_inter=20, top_k=2)
    return _block(impl, inputs, 2)


@case(points=5, checker=MOE, checkers={"y": BF16_Y})
def block_bf16(impl, rng):
    """bf16 的输入与权重：路由专家与共享专家都在 fp32 中计算、相加之后，y 只转回 bf16 一次 /
    bf16 input and weights: the routed and the shared experts computed in fp32 and added, y rounded to bf16 once"""
    inputs = block_inputs(
        rng, tokens=16, dim=32, n_experts=8, inter=24, shared_inter=24, top_k=2, dtype=torch.bfloat16
    )
    return _block(impl, inputs, 2)


@case(points=4, checker=MOE)
def block_batch_seq(impl, rng):
    """x 为 (batch, seq, dim) = (2, 6, 16)：y 形状与 x 相同，router_logits 为 (batch·seq, n_experts) /
    x of shape (batch, seq, dim) = (2, 6, 16): y has x's shape, router_logits are (batch·seq, n_experts)"""
    x, *weights = block_inputs(rng, tokens=12, dim=16, n_experts=6, inter=8, shared_inter=12, top_k=3)
    return _block(impl, (x.reshape(2, 6, 16), *weights), 3)


@case(points=5, checker=MOE, checkers={"grads": GRADS})
def block_backward(impl, rng):
    """反向传播：对 x、路由器、专家以及共享专家的三个投影和它的门的梯度 /
    gradients with respect to x, the router, the experts, and the shared expert's three projections and its gate"""
    inputs = block_inputs(rng, tokens=7, dim=10, n_experts=6, inter=8, shared_inter=6, top_k=2)
    for t in inputs:
        t.requires_grad_(True)
    y, _ = impl.moe_block(*inputs, 2)
    (y * rng.normal(*y.shape)).sum().backward()
    return {"y": y, "grads": {n: t.grad for n, t in zip(BLOCK_ARGS, inputs, strict=True)}}


@case(points=4, checker=exact())
def inputs_untouched(impl, rng):
    """route、moe_forward 和 moe_block 都不能原地修改输入 / neither route, moe_forward nor moe_block may modify its inputs"""
    # The inputs themselves are observed after the calls: the judge compares them with the
    # reference's outside the learner's process.
    logits = make_logits(rng, 5, 6)
    impl.route(logits, 2)
    inputs = moe_inputs(rng, tokens=6, dim=8, n_experts=4, inter=6, top_k=2)
    impl.moe_forward(*inputs, 2)
    names = ("x", "router_weight", "gate_up_proj", "down_proj")
    block = block_inputs(rng, tokens=6, dim=8, n_experts=4, inter=6, shared_inter=6, top_k=2)
    impl.moe_block(*block, 2)
    return {
        "router_logits_after_call": logits,
        **{f"{n}_after_call": t for n, t in zip(names, inputs, strict=True)},
        "moe_block": {f"{n}_after_call": t for n, t in zip(BLOCK_ARGS, block, strict=True)},
    }


# ---------------------------------------------------------------- calls in a row, layouts


@case(points=3)
def route_calls(impl, rng):
    """连续三次调用 route，形状、dtype、top_k 和 norm_topk_prob 各不相同：fp32 的 5×8 取 top-2、
    bf16 的 9×16 取 top-4 不归一化、只有一个 token 的 top-1；每次的结果都检查 /
    route called three times in a row with other shapes, dtypes, top_k and norm_topk_prob: fp32
    5×8 at top-2, bf16 9×16 at top-4 without renormalising, a single token at top-1; every
    call's result is checked"""
    first = make_logits(rng, 5, 8)
    second = make_logits(rng, 9, 16, dtype=torch.bfloat16)
    third = make_logits(rng, 1, 6)
    return {
        "calls": [
            _route(impl, first, 2),
            _route(impl, second, 4, norm_topk_prob=False),
            _route(impl, third, 1),
        ]
    }


@case(points=3, checker=MOE, checkers={"calls[1].y": BF16_Y})
def moe_forward_calls(impl, rng):
    """连续三次调用 moe_forward，每次是另一组专家权重：fp32 的 10 个 token 取 top-2、bf16 的 6 个 token
    取 top-3 不归一化、只有一个 token 的 top-1；两次调用之间不能保留任何东西 /
    moe_forward called three times in a row, each time with other experts: fp32, 10 tokens at
    top-2; bf16, 6 tokens at top-3 without renormalising; a single token at top-1. Nothing may be
    kept from one call to the next"""
    first = moe_inputs(rng, tokens=10, dim=16, n_experts=8, inter=12, top_k=2)
    second = moe_inputs(rng, tokens=6, dim=16, n_experts=8, inter=12, top_k=3, dtype=torch.bfloat16)
    third = moe_inputs(rng, tokens=1, dim=12, n_experts=6, inter=8, top_k=1)
    return {
        "calls": [
            _moe(impl, first, 2),
            _moe(impl, second, 3, norm_topk_prob=False),
            _moe(impl, third, 1),
        ]
    }


@case(points=4, checker=MOE, checkers={"calls[2].y": BF16_Y})
def block_calls(impl, rng):
    """模型里每一层都有一个形状相同的 MoE 块：两层同形状、不同权重的块依次调用，各自的结果都要对；
    然后是一个 bf16 的块（top-3）和一个单 token 的解码步 /
    every layer of a model has an MoE block of the same shape: two layers' blocks with the same
    shapes and other weights are called in turn, and each result must be right; then a bf16
    block at top-3 and a one-token decoding step"""
    layer_0 = block_inputs(rng, tokens=10, dim=16, n_experts=6, inter=8, shared_inter=12, top_k=2)
    layer_1 = block_inputs(rng, tokens=10, dim=16, n_experts=6, inter=8, shared_inter=12, top_k=2)
    wide = block_inputs(
        rng, tokens=7, dim=16, n_experts=8, inter=8, shared_inter=8, top_k=3, dtype=torch.bfloat16
    )
    step = block_inputs(rng, tokens=1, dim=16, n_experts=6, inter=8, shared_inter=12, top_k=2)

    def as_batch(inputs, batch, seq):
        x, *weights = inputs
        return (x.reshape(batch, seq, x.shape[-1]), *weights)

    return {
        "calls": [
            _block(impl, as_batch(layer_0, 2, 5), 2),
            _block(impl, as_batch(layer_1, 2, 5), 2),
            _block(impl, wide, 3),
            _block(impl, as_batch(step, 1, 1), 2),
        ]
    }


@case(points=3, checker=MOE)
def non_contiguous_inputs(impl, rng):
    """输入可以是不连续的视图：转置存放的 router_logits、隔行切片的 x、由 (seq, batch, dim) 转置得到的
    (batch, seq, dim) 的 x；结果须与连续的同样数值相同 /
    inputs may be non-contiguous views: router_logits stored transposed, x sliced every other row,
    a (batch, seq, dim) x transposed from (seq, batch, dim); the results must equal those for the
    same values laid out contiguously"""
    logits = make_logits(rng, 6, 8)
    logits_view = logits.t().contiguous().t()
    x, *weights = moe_inputs(rng, tokens=8, dim=12, n_experts=6, inter=8, top_k=2)
    # Every other row of a buffer twice as long: the same x as a strided view.
    buffer = torch.stack([x, rng.normal(*x.shape)], dim=1).reshape(16, 12)
    x_view = buffer[::2]
    bx, *block_weights = block_inputs(rng, tokens=12, dim=16, n_experts=6, inter=8, shared_inter=12, top_k=2)
    # (batch, seq, dim) = (3, 4, 16), but stored as (seq, batch, dim).
    bx = bx.reshape(3, 4, 16)
    bx_view = bx.transpose(0, 1).contiguous().transpose(0, 1)
    return {
        "route": {"contiguous": _route(impl, logits, 3), "transposed_view": _route(impl, logits_view, 3)},
        "moe_forward": {
            "contiguous": _moe(impl, (x, *weights), 2),
            "strided": _moe(impl, (x_view, *weights), 2),
        },
        "moe_block": {
            "contiguous": _block(impl, (bx, *block_weights), 2),
            "transposed_view": _block(impl, (bx_view, *block_weights), 2),
        },
    }
