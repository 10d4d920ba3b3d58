"""Cases for problem 210. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU (one thread) over the case seeds plus 40 more,
against the accepted formulations (SDPA with a boolean mask and enable_gqa, grouped einsum with
a hand-written softmax, a per-query loop without a mask, expanded kv heads with transformers'
additive 0 / finfo.min bias) and one computing in float64:
- The finfo.min bias is bit-identical to the reference's -inf fill on every case: every query
  sees key 0, so exp(finfo.min - row max) is exactly 0. The two differ only at the edge of fp32
  (a visible score of exactly finfo.min, or one overflowing to -inf), which the statement now
  excludes; the same mutant of the reference (45:47:fill-finfo-min) is declared equivalent.
- The cache itself (cache_basics, views_and_storage, overflow_raises, ...): update copies
  values, so every correct cache returns bit-identical views; bf16 rounding on the way in is
  exact too (copy_, slice assignment, .to and index_copy_ all round to nearest even). exact().
- fp32 attention outputs: correct formulations differ from the reference by at most 9.5e-7
  absolute (outputs are of order 1), under 10% of torch's default fp32 tolerance
  (atol 1e-5, rtol 1.3e-6), so the default stays. Element-wise ulp distances reach 1e5 where
  an output sits near zero after cancellation, so an ulp checker cannot be used here.
- bf16 attention outputs (fp32 maths, one rounding at the end): every formulation, float64
  included, is within 1 ulp and differs in at most 0.05% of elements, hence ulp(1, 1%).
  The nearest mistake, storing k / sqrt(d) in a bf16 cache, puts 9% of elements more than
  1 ulp away (max abs error 7.8e-3).
- Nearest fp32 mistakes: an fp32 cache where bf16 was asked for is 3.0e-3 off and scaled keys
  in a bf16 cache 1.6e-3 off (cache_dtype), over 100 times atol; every mask, position or
  head-mapping mistake is off by 0.6 to 4.
- The chunked and the one-chunk outputs are compared with the reference's, which are within
  1e-6 (fp32) and 7.8e-3 (bf16, one ulp at |y| in [1, 2), 3.1e-2 in [4, 8)) of float64 causal
  attention over the whole sequence. Until version 3 the cases also returned a flag they
  computed themselves (incremental_matches_full), in the learner's process, where a patched
  torch decides what it says; the outputs themselves say the same to the judge.

- two_layers_decoding (version 4; issue 28): two caches alive together (fp32 with max_len 8 and
  bf16 with max_len 12, the second given non-contiguous views transposed from
  (batch, t, heads, head_dim)), written in turn. Every accepted formulation is within 4.2e-7 on
  the fp32 layer and bit-identical on the bf16 one. Buffers on a class attribute, shared by
  both caches (wrong/buffers_shared_by_every_cache), are off by 7e-3 on the first call (the bf16
  cache's rounding) and by 2 or more after it. Each layer's outputs are a list of calls, the key
  the "right on the first call, wrong on a later one" diagnosis reads.

No gradient case: a KV cache is inference-time state (decoding runs under torch.no_grad()),
and requiring autograd through in-place buffer writes would fail learners for nothing.
"""

import math

import torch

from judge.core.casekit import case, outcome
from judge.core.checkers import allclose, exact, ulp

BF16 = ulp(max_ulps=1, max_fraction=0.01)


def _qkv(rng, batch, n_heads, n_kv, seq, head_dim, dtype=torch.float32, q_std=1.5):
    q = rng.normal(batch, n_heads, seq, head_dim, std=q_std, dtype=dtype)
    k = rng.normal(batch, n_kv, seq, head_dim, dtype=dtype)
    v = rng.normal(batch, n_kv, seq, head_dim, dtype=dtype)
    return q, k, v


def full_causal_attention(q, k, v):
    """Causal attention over the whole sequence at once, computed here (never by the learner's code)."""
    group = q.shape[1] // k.shape[1]
    kd = k.double().repeat_interleave(group, dim=1)
    vd = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ kd.transpose(-1, -2) / math.sqrt(q.shape[-1])
    n = q.shape[2]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return torch.softmax(s, dim=-1) @ vd


def decode_in_chunks(impl, q, k, v, chunks, max_len=None):
    """Feed the sequence to cached_attention chunk by chunk; the outputs concatenated, and the lengths."""
    b, n_kv, seq, d = k.shape
    cache = impl.KVCache(b, n_kv, max_len or seq + 3, d, dtype=k.dtype)
    outs, lengths, start = [], [], 0
    for n in chunks:
        sl = slice(start, start + n)
        outs.append(impl.cached_attention(q[:, :, sl], k[:, :, sl], v[:, :, sl], cache))
        lengths.append(int(cache.length))
        start += n
    return torch.cat(outs, dim=2), lengths


def _incremental_vs_full(impl, q, k, v, chunks):
    # Both outputs are compared with the reference's, which match float64 causal attention over
    # the whole sequence (full_causal_attention; tests/problems/test_210_kv_cache.py).
    incremental, lengths = decode_in_chunks(impl, q, k, v, chunks)
    one_chunk, _ = decode_in_chunks(impl, q, k, v, [q.shape[2]])
    return {"incremental": incremental, "lengths": lengths, "one_chunk": one_chunk}


# ---------------------------------------------------------------- the cache on its own


@case(points=10, public=True, checker=exact())
def cache_basics(impl, rng):
    """update 依次写入 3、1、2 个 token：写入的位置、length 的变化、返回前 length 个位置 /
    update with chunks of 3, 1 and 2 tokens: where they land, how length grows, views of the first `length` positions"""
    cache = impl.KVCache(2, 2, 8, 4)
    k = rng.normal(2, 2, 6, 4)
    v = rng.normal(2, 2, 6, 4)
    obs = {"initial_length": int(cache.length)}
    start = 0
    for i, n in enumerate((3, 1, 2), start=1):
        k_all, v_all = cache.update(k[:, :, start : start + n], v[:, :, start : start + n])
        start += n
        obs[f"update_{i}"] = {"length": int(cache.length), "k_all": k_all, "v_all": v_all}
    return obs


@case(points=6, checker=exact(), checkers={"fp32_query_on_bf16_cache": allclose()})
def cache_dtype(impl, rng):
    """缓存按 dtype 存储：fp32 的 k 存进 bf16 缓存会舍入成 bf16；默认 dtype 是 fp32；输出 dtype 跟 q /
    the cache stores in its own dtype: fp32 keys go into a bf16 cache rounded; the default is fp32; outputs follow q's dtype"""
    k = rng.normal(1, 2, 3, 8)
    v = rng.normal(1, 2, 3, 8)
    bf16_cache = impl.KVCache(1, 2, 5, 8, dtype=torch.bfloat16)
    kb, vb = bf16_cache.update(k, v)
    default_cache = impl.KVCache(1, 2, 5, 8)
    kf, vf = default_cache.update(k.bfloat16(), v.bfloat16())
    q = rng.normal(1, 4, 2, 8, std=1.5)
    attn_cache = impl.KVCache(1, 2, 5, 8, dtype=torch.bfloat16)
    out = impl.cached_attention(q, rng.normal(1, 2, 2, 8), rng.normal(1, 2, 2, 8), attn_cache)
    return {
        "bf16_cache": {"k_all": kb, "v_all": vb},
        "default_cache_with_bf16_input": {"k_all": kf, "v_all": vf},
        "fp32_query_on_bf16_cache": out,
    }


@case(points=7, checker=exact())
def views_and_storage(impl, rng):
    """返回的 k_all、v_all 只含 length 个位置，并且都是同一块预分配缓冲区的视图（不每步重新拼接）：
    写进第一次返回的视图，最后一次返回的视图里也看得到 /
    the returned k_all and v_all hold exactly `length` positions and are views of one preallocated
    buffer (no concatenation per step): a write into the first returned view shows in the last one"""
    cache = impl.KVCache(1, 2, 10, 4)
    k = rng.normal(1, 2, 6, 4)
    v = rng.normal(1, 2, 6, 4)
    views, start = [], 0
    for n in (2, 3, 1):
        views.append(cache.update(k[:, :, start : start + n], v[:, :, start : start + n]))
        start += n
    first_k, first_v = views[0]
    observed = {
        "shapes": [(tuple(ka.shape), tuple(va.shape)) for ka, va in views],
        "first_views_after_later_updates": {"k": first_k.clone(), "v": first_v.clone()},
        "last_views": {"k": views[-1][0].clone(), "v": views[-1][1].clone()},
    }
    # Sharing is observed through the data, not by asking the tensors about their storage
    # (learner code runs in this process and could patch Tensor.untyped_storage): views of one
    # buffer see each other's writes; a tensor made anew per step (torch.cat) does not.
    first_k[:, :, 0] = 100.0
    first_v[:, :, 1] = -100.0
    observed["last_views_after_writing_into_the_first"] = {"k": views[-1][0], "v": views[-1][1]}
    return observed


@case(points=7, checker=exact())
def overflow_raises(impl, rng):
    """超出 max_len 时抛出 ValueError，并且 length 保持不变；正好填满是允许的 /
    a chunk past max_len raises ValueError and leaves length unchanged; filling the cache exactly is fine"""
    cache = impl.KVCache(1, 1, 6, 4)
    k = rng.normal(1, 1, 10, 4)
    v = rng.normal(1, 1, 10, 4)
    q = rng.normal(1, 2, 1, 4)
    steps = []
    held = {}

    def put(a, b):
        held["kv"] = cache.update(k[:, :, a:b], v[:, :, a:b])

    for name, fn in (
        ("update 4 tokens into an empty cache of 6", lambda: put(0, 4)),
        ("update 3 more (7 > 6)", lambda: put(4, 7)),
        ("update 2 more (exactly full)", lambda: put(4, 6)),
        ("update 1 more (7 > 6)", lambda: put(6, 7)),
        (
            "cached_attention on 1 more token",
            lambda: impl.cached_attention(q, k[:, :, 6:7], v[:, :, 6:7], cache),
        ),
    ):
        steps.append({"step": name, "outcome": outcome(fn), "length_after": int(cache.length)})
    k_all, v_all = held["kv"]
    return {"steps": steps, "k_all": k_all, "v_all": v_all}


@case(points=7, checker=exact(), checkers={"decode_out": allclose()})
def caller_tensors_not_kept(impl, rng):
    """调用者之后原地修改自己的 k、v（例如复用同一块内存），缓存里的内容不能跟着变 /
    the caller later edits its own k and v in place (say, it reuses the memory); the cache must not change with them"""
    cache = impl.KVCache(2, 2, 8, 4)
    k = rng.normal(2, 2, 5, 4)
    v = rng.normal(2, 2, 5, 4)
    k_rest, v_rest = k[:, :, 3:].clone(), v[:, :, 3:].clone()
    cache.update(k[:, :, :3], v[:, :, :3])
    k.add_(100.0)
    v.mul_(-1.0)
    k_all, v_all = cache.update(k_rest, v_rest)

    q, k2, v2 = _qkv(rng, 1, 2, 1, 5, 8)
    attn_cache = impl.KVCache(1, 1, 8, 8)
    k_prompt, v_prompt = k2[:, :, :4].clone(), v2[:, :, :4].clone()
    impl.cached_attention(q[:, :, :4], k_prompt, v_prompt, attn_cache)
    k_prompt.zero_()
    v_prompt.zero_()
    out = impl.cached_attention(q[:, :, 4:], k2[:, :, 4:], v2[:, :, 4:], attn_cache)
    return {"k_all": k_all, "v_all": v_all, "decode_out": out}


# ---------------------------------------------------------------- attention over the cache


@case(points=13, public=True)
def prefill_then_decode_fp32(impl, rng):
    """先一次预填充 6 个 token，再逐个解码 4 个：拼起来须等于整段 10 个 token 的因果注意力（8 个 q 头、2 个 kv 头）/
    prefill 6 tokens at once, then decode 4 one at a time: together they must equal causal attention over all 10 (8 query heads, 2 kv heads)"""
    q, k, v = _qkv(rng, 2, 8, 2, 10, 16)
    return _incremental_vs_full(impl, q, k, v, [6, 1, 1, 1, 1])


@case(points=10, public=True)
def chunk_after_prefill(impl, rng):
    """预填充 4 个 token 之后再来 3 个、1 个、3 个一块：块内第 j 个 query 的位置是 已存长度 + j /
    after a 4-token prefill come chunks of 3, 1 and 3: query j of a chunk sits at (tokens already stored) + j"""
    q, k, v = _qkv(rng, 2, 4, 2, 11, 16)
    return _incremental_vs_full(impl, q, k, v, [4, 3, 1, 3])


@case(points=10, checker=BF16)
def prefill_then_decode_bf16(impl, rng):
    """bf16 的 q、k、v 和 bf16 缓存：预填充 7 个再逐个解码 5 个，输出为 bf16 /
    bf16 q, k, v and a bf16 cache: prefill 7, decode 5 one at a time; the output is bf16"""
    q, k, v = _qkv(rng, 2, 8, 2, 12, 32, dtype=torch.bfloat16)
    return _incremental_vs_full(impl, q, k, v, [7, 1, 1, 1, 1, 1])


@case(points=8)
def prefill_length_one(impl, rng):
    """batch 为 1、预填充只有 1 个 token，再逐个解码、最后来一块 2 个；q 头与 kv 头一样多 /
    batch 1, a prefill of a single token, then single steps and a final chunk of 2; as many kv heads as query heads"""
    q, k, v = _qkv(rng, 1, 2, 2, 6, 8)
    return _incremental_vs_full(impl, q, k, v, [1, 1, 1, 1, 2])


@case(points=8)
def odd_head_dim_mqa(impl, rng):
    """head_dim = 7（缩放因子 1/√7），3 个 q 头共用 1 个 kv 头（MQA）/
    head_dim 7 (scale 1/√7), three query heads sharing one kv head (MQA)"""
    q, k, v = _qkv(rng, 1, 3, 1, 7, 7)
    return _incremental_vs_full(impl, q, k, v, [3, 2, 1, 1])


@case(points=4, checker=exact())
def cache_stores_raw_keys(impl, rng):
    """cached_attention 之后缓存里存的是原样的 k、v（没有乘缩放因子）/
    after cached_attention the cache holds k and v exactly as given (not multiplied by the scale)"""
    q, k, v = _qkv(rng, 1, 4, 2, 5, 8)
    cache = impl.KVCache(1, 2, 6, 8)
    impl.cached_attention(q[:, :, :4], k[:, :, :4], v[:, :, :4], cache)
    k_all, v_all = cache.update(k[:, :, 4:], v[:, :, 4:])
    return {"length": int(cache.length), "k_all": k_all, "v_all": v_all}


@case(points=4, checker=exact())
def inputs_unchanged(impl, rng):
    """cached_attention 不能原地修改调用者的 q、k、v /
    cached_attention must not modify the caller's q, k or v in place"""
    q, k, v = _qkv(rng, 1, 4, 2, 4, 8)
    cache = impl.KVCache(1, 2, 6, 8)
    impl.cached_attention(q[:, :, :3], k[:, :, :3], v[:, :, :3], cache)
    impl.cached_attention(q[:, :, 3:], k[:, :, 3:], v[:, :, 3:], cache)
    # The inputs themselves, compared outside this process with the reference's untouched ones.
    return {"q_after_calls": q, "k_after_calls": k, "v_after_calls": v}


# ---------------------------------------------------------------- two layers decoding (version 4)


@case(points=6, checkers={"layer_1.calls": BF16})
def two_layers_decoding(impl, rng):
    """两层各有自己的缓存（一个 fp32、一个 bf16，max_len 不同），像模型解码那样交替调用：先各自预填充，再逐个解码；
    第二层的 q、k、v 是从 (batch, t, heads, head_dim) 转置来的非连续视图。两个缓存不能共享任何东西 /
    two layers, each with its own cache (one fp32, one bf16, different max_len), called in turn as a model decodes:
    each prefills, then single steps; the second layer's q, k, v are non-contiguous views transposed from
    (batch, t, heads, head_dim). The two caches share nothing"""
    seq = 7
    q0, k0, v0 = _qkv(rng, 2, 4, 2, seq, 8)
    # As a model makes them: projected to (batch, t, heads, head_dim), then transposed.
    q1 = rng.normal(2, seq, 6, 8, std=1.5, dtype=torch.bfloat16).transpose(1, 2)
    k1 = rng.normal(2, seq, 2, 8, dtype=torch.bfloat16).transpose(1, 2)
    v1 = rng.normal(2, seq, 2, 8, dtype=torch.bfloat16).transpose(1, 2)
    cache0 = impl.KVCache(2, 2, 8, 8)
    cache1 = impl.KVCache(2, 2, 12, 8, dtype=torch.bfloat16)
    out0, out1, start = [], [], 0
    for n in (4, 1, 1, 1):
        sl = slice(start, start + n)
        out0.append(impl.cached_attention(q0[:, :, sl], k0[:, :, sl], v0[:, :, sl], cache0))
        out1.append(impl.cached_attention(q1[:, :, sl], k1[:, :, sl], v1[:, :, sl], cache1))
        start += n
    return {
        "layer_0": {"calls": out0, "length": int(cache0.length)},
        "layer_1": {"calls": out1, "length": int(cache1.length)},
    }
