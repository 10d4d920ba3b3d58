"""Cases for problem 216. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU against the three files in solutions/accepted (an
ascending sort with "tail <= 1 - p" as in transformers, a per-row loop with kthvalue and a
running total in Python floats, and a sort-free pairwise "mass strictly above < p") and a
float64 version of the reference:
- Kept values are logits / temperature: the accepted files are bit-identical to the
  reference, float64 (or x * (1 / T)) is 1 ulp off (9.5e-7 absolute, 1.1e-7 relative), inside
  torch's default fp32 tolerance, which therefore stays. The -inf pattern has to match exactly
  whatever the tolerance, and it does in every formulation.
- Every top-p decision in these cases has a margin, except the deliberate exact ones below:
  the smallest |mass before a token - p| over all rows is 1.7e-3 (filter_order, random rows),
  against fp32 rounding of about 1e-7; the crafted rows (top_p_edges, filter_order,
  top_p_ties_at_cut) sit 0.01 or more from p. The smallest gap between the k-th and (k+1)-th
  largest logits is 6.6e-3, apart from the deliberate ties. So "mass before" taken as
  cumsum - p (the reference) or as the shifted cumsum gives the same cases.
- top_p_exact_boundary is exact on purpose, to tell "before < p" from "before <= p": its
  logits are 0, -L, -2L and -4L with L = fp32 ln 2, whose exponentials lie within 0.032, 0.064
  and 0.128 ulp of 1/2, 1/4 and 1/16 and round to them. torch.softmax, a softmax by hand,
  exp(log_softmax), a float64 softmax cast to fp32 and all three accepted files give exactly
  0.5, 0.25, 0.125 and 4 x 0.03125, and running totals of these are exact in fp32 (and in the
  Python floats of row_loop). A pipeline kept in float64 to the end (not what the statement
  asks) is off by about 1e-9 there and still happens to agree.
- Ties at the top-p cut (top_p_ties_at_cut, top_p_exact_boundary p_0.9): equal logits give
  bit-equal probabilities in every formulation, and the tied groups start 0.13 or more from p.
  The old reference, which scattered the sorted mask back by index, keeps a subset that
  depends on torch.sort's order (scrambled on a row of 100 ties); it is
  solutions/wrong/top_p_ties_by_sort_order.py now.
- Draws: for one sample, torch.multinomial takes argmax of p_i / q_i with q_i ~ Exp(1) from
  the generator. In every exact-id case the winner beats the runner-up by at least 6.3%
  relative, so fp32 probabilities computed any reasonable way (softmax by hand, float64
  filters) pick the same ids. The bf16 mistakes only show in the filtered values (0.3%).
  top_p_ties_at_cut's draws: 6.4% on the groups row; the flat row's kept probabilities are
  all exactly 0.01 in every formulation, so no rounding can move its draw.
- temperature_not_positive observes what each call did (judge.core.casekit.outcome: "raised
  ValueError", another class, or "returned normally"), compared exactly.
- sample_distribution compares frequencies over 10000 draws (more would make a learner's
  per-row Python loop slow: 60000 rows took 2.5 s). Correct samplers that draw other ids (the
  global generator, sorted order) were within 0.018 of the reference over 20 seeds (one sd of
  the difference is about 0.007), hence atol 0.03; the mistakes that change the distribution
  are at least 0.109 off.
- filter_calls and sample_calls (calls in a row with other shapes, dtypes and settings): their
  decisions have margins of the same kind, measured with the float64 filters: the k-th and
  (k+1)-th largest logits at least 2.0e-2 apart, the mass before a token at least 4.6e-4 from p
  (the bf16 row at top_p 0.9, still thousands of times fp32 rounding), and each drawn winner's
  p_i / q_i at least 4.0% above the runner-up's.
"""

import math

import torch

from judge.core.casekit import case, outcome
from judge.core.checkers import allclose, exact

# Frequencies over 10000 draws: a correct sampler that draws differently (another order, the
# global generator) is within about 4 sd of the reference; see the top.
FREQ = allclose(rtol=0.0, atol=0.03)


def _gen(seed):
    # The generator the learner must draw from. Its seed differs from the case seed that the
    # judge gives torch's global generator, so drawing from the global one shows.
    return torch.Generator().manual_seed(seed)


def _log(probs):
    return torch.tensor(probs, dtype=torch.float64).log().float()


# fp32 ln 2. exp(-L), exp(-2 L), exp(-4 L) round to exactly 1/2, 1/4, 1/16 (the true values sit
# within 0.13 ulp of them), so logits made of 0, -L, -2L and -4L give exact powers of two.
LN2 = torch.tensor(math.log(2.0), dtype=torch.float32)


# ---------------------------------------------------------------- filter_logits


@case(points=7, public=True)
def filter_temperature(impl, rng):
    """只有温度：返回 fp32 的 logits / temperature，没有 token 被去掉 /
    temperature alone: fp32 logits / temperature, no token removed"""
    x = rng.normal(4, 20, std=3.0)
    return {
        "default_args": impl.filter_logits(x),
        "t_0.7": impl.filter_logits(x, temperature=0.7),
        "t_2.5": impl.filter_logits(x, temperature=2.5),
    }


@case(points=9, public=True)
def filter_top_k_top_p(impl, rng):
    """top-k 与 top-p：被去掉的 token 设为 -inf，留下的保持 logits / temperature /
    top-k and top-p: removed tokens become -inf, kept ones keep logits / temperature"""
    x = rng.normal(4, 24, std=2.5)
    return {
        "top_k_5": impl.filter_logits(x, top_k=5),
        "top_p_0.8": impl.filter_logits(x, top_p=0.8),
        "t_0.8_top_k_8_top_p_0.6": impl.filter_logits(x, temperature=0.8, top_k=8, top_p=0.6),
    }


@case(points=5)
def top_k_edges(impl, rng):
    """top_k = 1、= vocab、> vocab，以及第 k 大的值有并列时全部保留 /
    top_k of 1, of vocab and above vocab, and ties at the k-th largest value all kept"""
    x = rng.normal(3, 9, std=2.0)
    ties = torch.tensor([[3.0, 1.0, 2.0, 2.0, 0.0, 2.0, -1.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]])
    return {
        "top_k_1": impl.filter_logits(x, top_k=1),
        "top_k_vocab": impl.filter_logits(x, top_k=9),
        "top_k_above_vocab": impl.filter_logits(x, top_k=50),
        "ties_top_k_2": impl.filter_logits(ties, top_k=2),
        "one_token_vocab": impl.filter_logits(torch.tensor([[1.25]]), top_k=1, top_p=0.5),
    }


@case(points=7)
def top_p_edges(impl, rng):
    """越过 p 的那个 token 要保留；p 很小或为 0 时只剩最大的；p = 1 时什么都不去掉 /
    the token that crosses p is kept; a tiny p or p = 0 keeps only the top token; p = 1 removes nothing"""
    # Probabilities 0.05, 0.5, 0.15, 0.3 (sorted: 0.5, 0.3, 0.15, 0.05; cumulative 0.5, 0.8, 0.95, 1).
    x = _log([[0.05, 0.5, 0.15, 0.3], [0.3, 0.15, 0.05, 0.5]])
    # One token holds all but 1e-11 of the mass: in fp32 the cumulative sum is 1.0 after it.
    peaked = torch.tensor([[0.0, 25.0, 0.0, 0.0, 0.0]])
    return {
        "p_0.75": impl.filter_logits(x, top_p=0.75),
        "p_0.85": impl.filter_logits(x, top_p=0.85),
        "p_0.97": impl.filter_logits(x, top_p=0.97),
        "p_0.01": impl.filter_logits(x, top_p=0.01),
        "p_0": impl.filter_logits(x, top_p=0.0),
        "peaked_p_1": impl.filter_logits(peaked, top_p=1.0),
        "peaked_p_0.5": impl.filter_logits(peaked, top_p=0.5),
    }


@case(points=6)
def top_p_exact_boundary(impl, rng):
    """概率恰好是 2 的幂，某个 token 前面的累计概率恰好等于 p：它要去掉（保留的条件是严格小于 p）；
    落在并列组中间的截断点保留整组 /
    powers-of-two probabilities, so the mass before a token is exactly p: that token goes (keeping
    needs strictly less than p); a cut inside a tied group keeps the whole group"""
    # Weights 1, 1/2, 1/4 and four times 1/16 add up to 2: probabilities 0.5, 0.25, 0.125 and
    # 4 x 0.03125, the mass before them 0, 0.5, 0.75 and 0.875 (the tied group), all exact in fp32.
    exponents = torch.tensor(
        [[-4.0, 0.0, -2.0, -4.0, -1.0, -4.0, -4.0], [-1.0, -4.0, -4.0, -2.0, -4.0, -4.0, 0.0]]
    )
    x = exponents * LN2
    return {
        "p_0.5": impl.filter_logits(x, top_p=0.5),
        "p_0.75": impl.filter_logits(x, top_p=0.75),
        "p_0.875": impl.filter_logits(x, top_p=0.875),
        "p_0.9": impl.filter_logits(x, top_p=0.9),
        "p_0": impl.filter_logits(x, top_p=0.0),
    }


@case(points=7, checkers={"draws": exact()})
def top_p_ties_at_cut(impl, rng):
    """top-p 的截断点落在概率相等的一组 token 中间：与最后保留的 token 并列的全部保留，与排序怎样排列相等的值无关 /
    the top-p cut falls inside a group of equally likely tokens: every token tied with the last one
    kept stays, whatever order a sort gives equal values"""
    # 100 equal logits, 0.01 each: in sorted order p = 0.3 stops after 30, but all 100 are tied.
    flat = torch.zeros(2, 100)
    # One token at 3, forty at 1, the rest at -1, shuffled. Probabilities 0.133, 40 x 0.0181 and
    # 59 x 0.0024: the mass before the tied 1s is 0.133 and before the tied -1s 0.856.
    order = torch.randperm(100, generator=rng.generator)
    groups = torch.full((100,), -1.0)
    groups[order[:1]] = 3.0
    groups[order[1:41]] = 1.0
    groups = groups.unsqueeze(0)
    # Three tied maxima: a tiny p keeps all three.
    top_tie = torch.tensor([[1.0, 0.0, 2.0, 2.0, 0.0, 2.0]])
    return {
        "flat_p_0.3": impl.filter_logits(flat, top_p=0.3),
        "groups_p_0.5": impl.filter_logits(groups, top_p=0.5),
        "groups_t_2_top_k_30_top_p_0.4": impl.filter_logits(groups, temperature=2.0, top_k=30, top_p=0.4),
        "tied_top_p_0.01": impl.filter_logits(top_tie, top_p=0.01),
        "tied_top_p_0": impl.filter_logits(top_tie, top_p=0.0),
        "draws": {
            "flat_p_0.3": impl.sample(flat[:1].expand(16, 100), _gen(41), top_p=0.3),
            "groups_p_0.5": impl.sample(groups.expand(16, 100), _gen(42), top_p=0.5),
        },
    }


@case(points=7)
def filter_order(impl, rng):
    """顺序：先除以温度，再 top-k，再对剩下的重新 softmax 做 top-p /
    the order: divide by temperature, then top-k, then top-p on the softmax of what is left"""
    x = rng.normal(4, 30, std=2.0)
    # Top-3 holds 0.4 + 0.12 + 0.11 = 0.63 of the mass. Renormalised (0.635, 0.19, 0.175), top-p
    # 0.7 stops after two tokens; on the full distribution (0.4, 0.12, 0.11) it would keep all three.
    r = _log([[0.4, 0.1, 0.12, 0.08, 0.11, 0.05, 0.05, 0.05, 0.04]])
    return {
        "t_0.5_top_p_0.7": impl.filter_logits(x, temperature=0.5, top_p=0.7),
        "t_2_top_p_0.7": impl.filter_logits(x, temperature=2.0, top_p=0.7),
        "t_1.5_top_k_6_top_p_0.5": impl.filter_logits(x, temperature=1.5, top_k=6, top_p=0.5),
        "renormalised_top_k_3_top_p_0.7": impl.filter_logits(r, top_k=3, top_p=0.7),
    }


@case(points=5)
def filter_bf16(impl, rng):
    """bf16 的 logits：转成 fp32 再计算，返回 fp32 /
    bf16 logits: convert to fp32 first, return fp32"""
    x = rng.normal(4, 64, std=3.0, dtype=torch.bfloat16)
    return {
        "t_1": impl.filter_logits(x),
        "t_0.7_top_k_20_top_p_0.9": impl.filter_logits(x, temperature=0.7, top_k=20, top_p=0.9),
    }


# ---------------------------------------------------------------- sample


@case(points=9, public=True, checker=exact())
def sample_fixed_seed(impl, rng):
    """固定种子的 generator：与参考逐个 id 相同；连续两次调用接着同一个随机数流 /
    a seeded generator: the same ids as the reference; two calls in a row continue one stream"""
    x = rng.normal(8, 32, std=2.0)
    g = _gen(2024)
    first = impl.sample(x, g, temperature=0.8, top_k=10, top_p=0.9)
    second = impl.sample(x, g, temperature=0.8, top_k=10, top_p=0.9)
    plain = impl.sample(x, _gen(7))
    batch_1 = impl.sample(x[:1], _gen(3), top_k=4)
    return {"first": first, "second": second, "plain": plain, "batch_1": batch_1}


@case(points=7, checker=exact())
def greedy(impl, rng):
    """temperature = 0：取第一个最大值（忽略 top-k/top-p），不动 generator /
    temperature 0: the first largest logit (top-k/top-p ignored), and the generator is left alone"""
    x = rng.normal(5, 17, std=2.0)
    x[2, 4] = x[2, 11] = x[2].max() + 1.0  # a tie: the lower index wins
    g = _gen(99)
    ids = impl.sample(x, g, temperature=0.0)
    ids_bf16 = impl.sample(x.bfloat16(), g, temperature=0.0, top_k=3, top_p=0.5)
    return {
        "ids": ids,
        "ids_bf16_with_filters": ids_bf16,
        # The state itself, compared exactly with the reference's (which never draws here).
        "generator_state": g.get_state(),
        "next_draw": impl.sample(x, g, temperature=1.0),
    }


@case(points=5, checker=exact())
def sample_bf16(impl, rng):
    """bf16 的 logits：在 fp32 中过滤和 softmax，再抽样 /
    bf16 logits: filtered and softmaxed in fp32, then drawn"""
    x = rng.normal(16, 100, std=3.0, dtype=torch.bfloat16)
    return {
        "t_0.9_top_p_0.95": impl.sample(x, _gen(31), temperature=0.9, top_p=0.95),
        "t_1.3_top_k_12": impl.sample(x, _gen(32), temperature=1.3, top_k=12),
    }


@case(points=6, checker=FREQ)
def sample_distribution(impl, rng):
    """一万次抽样的频率（同一行 logits 重复一万遍）/
    frequencies over 10000 draws (one row of logits repeated 10000 times)"""
    row = torch.tensor([1.2, -0.3, 2.0, 0.4, -1.5, 0.9])
    x = row.expand(10000, 6).contiguous()

    def freq(ids):
        return torch.bincount(ids.reshape(-1), minlength=6).float() / ids.numel()

    return {
        "t_1": freq(impl.sample(x, _gen(5))),
        "t_1.3_top_k_5_top_p_0.9": freq(impl.sample(x, _gen(6), temperature=1.3, top_k=5, top_p=0.9)),
        "t_0.6_top_p_0.8": freq(impl.sample(x, _gen(8), temperature=0.6, top_p=0.8)),
    }


@case(points=4, checker=exact())
def temperature_not_positive(impl, rng):
    """filter_logits 在 temperature <= 0 时抛出 ValueError；sample 的负温度也一样（temperature = 0 只在 sample 中表示贪心） /
    filter_logits raises ValueError for temperature <= 0, and so does sample for a negative one
    (temperature 0 means greedy in sample only)"""
    x = rng.normal(2, 8)
    return {
        "filter_t_0": outcome(lambda: impl.filter_logits(x, temperature=0.0)),
        "filter_t_-0.5": outcome(lambda: impl.filter_logits(x, temperature=-0.5, top_k=3)),
        "sample_t_-0.5": outcome(lambda: impl.sample(x, _gen(17), temperature=-0.5)),
    }


@case(points=6, checker=exact(), checkers={"filtered": allclose()})
def inputs_not_modified(impl, rng):
    """调用方的 logits 不能被原地修改 / the caller's logits must not be modified in place"""
    x = rng.normal(4, 16, std=2.0)
    filtered = impl.filter_logits(x, temperature=0.5, top_k=5, top_p=0.8)
    ids = impl.sample(x, _gen(11), temperature=0.5, top_k=5, top_p=0.8)
    return {"logits_after_calls": x, "filtered": filtered, "ids": ids}


# ---------------------------------------------------------------- calls in a row


@case(points=5)
def filter_calls(impl, rng):
    """连续三次调用 filter_logits，形状、dtype 和参数各不相同：fp32 的温度加 top-k、bf16 的 top-p、
    只有一行的三者同时使用；每次的结果都检查，函数在两次调用之间不能保留任何东西 /
    filter_logits called three times in a row with other shapes, dtypes and settings: fp32 with
    temperature and top-k, bf16 with top-p, a single row with all three; every call's result is
    checked, and nothing may be kept from one call to the next"""
    first = rng.normal(3, 20, std=2.5)
    second = rng.normal(2, 40, std=3.0, dtype=torch.bfloat16)
    third = rng.normal(1, 10, std=2.0)
    return {
        "calls": [
            impl.filter_logits(first, temperature=0.7, top_k=5),
            impl.filter_logits(second, top_p=0.8),
            impl.filter_logits(third, temperature=1.5, top_k=4, top_p=0.6),
        ]
    }


@case(points=5, checker=exact())
def sample_calls(impl, rng):
    """像生成循环那样用同一个 generator 连续调用 sample，形状、dtype 和参数每次不同（其中一次是贪心）：
    每次抽到的 id 都与参考相同 /
    sample called again and again with one generator, as a generation loop does, each time with
    other shapes, dtypes and settings (one of them greedy): every call draws the reference's ids"""
    g = _gen(77)
    first = rng.normal(4, 32, std=2.0)
    second = rng.normal(2, 48, std=3.0, dtype=torch.bfloat16)
    third = rng.normal(1, 32, std=2.0)
    fourth = rng.normal(3, 16, std=1.5)
    return {
        "calls": [
            impl.sample(first, g, temperature=0.8, top_k=10),
            impl.sample(second, g, temperature=1.2, top_p=0.9),
            impl.sample(third, g, temperature=0.0, top_k=5),
            impl.sample(fourth, g),
        ]
    }
