"""Cases for problem 205. Each returns observations; the judge compares them with the reference's.

Cases that test `apply_rope` alone build their cos/sin tables here (`_table`), so a mistake in
`rope_frequencies` shows up only in the cases about the tables and about the whole pipeline.

Checker choices, measured on torch 2.13 CPU against four other correct formulations (complex
multiplication, x1/x2 written out with exp(-log θ ...) frequencies, einsum with a rotation
matrix, and everything in float64):
- Tables with positions below 64: correct formulations differ by at most 8.6e-7 (absolute),
  inside torch's default fp32 tolerance; bf16 angles are off by 3e-3 to 5e-2.
- Tables at positions 30000-41000: an fp32 angle near 40000 is only good to 2^-9 rad, and
  inverse frequencies computed in different ways differ by an ulp or more, so correct tables
  differ by up to 3.5e-3. Every mistake here is off by order one, hence atol 2e-2.
- fp32 application and its gradient with the same table: the fp32 formulations are
  bit-identical to the reference, float64 differs by at most 4.8e-7 (|x| up to about 8).
- bf16 application with the same table: every fp32 formulation is bit-identical to the
  reference, float64 moves under 0.01% of elements by 1 ulp. Multiplying in bf16 (casting
  cos/sin to x's dtype) moves 20-35% of elements, 3-5% by more than 1 ulp.
- frequencies_default_dtype (the tables built under torch.set_default_dtype(bf16) and (fp64),
  default fp32 tolerance): every accepted formulation gives the same tables as under an fp32
  default, at most 1.2e-6 from the reference (float64 math; the others 4.8e-7), 12% of the
  tolerance. An inv_freq that follows the default dtype (an integer arange divided by
  head_dim) is 7e-3 off under bf16 (86-92% of the elements) and fp64-typed under fp64.
- odd_head_dim_rejected was removed in version 5 (issue 29): the ValueError for an odd head_dim
  was a rule of this problem alone (neither the course nor transformers has it), and without it
  an odd head_dim still fails loudly, on the shapes in apply_rope.
- backward_bf16 (BF16_APPLY for y and x's gradient): every fp32 formulation, and float64, gives
  x's gradient bit-identical to the reference (it is accumulated in fp32 and rounded once).
  Letting a bf16 x meet the fp32 tables by type promotion (no x.float()) leaves y bit-identical
  but rounds each path's gradient to bf16 before the sum: 23-31% of the gradient elements
  are 1 ulp off and 3-4% more (measured on head_dim 32 to 128, five seeds; 23% and 30 ulps
  at worst on this case's input); multiplying in bf16 moves 26% of y and of the gradient.
- Attention scores (up to 24 in size) at positions near 1500: correct formulations differ
  by at most 3.7e-4, hence atol 5e-3; mistakes by 10 or more. Both the near and the shifted
  scores are compared with the reference's; until version 3 the case also returned a flag it
  computed itself (max difference < 0.1), in the learner's process, where a patched torch
  decides what it says. partial_rotary likewise returns the bf16 tail (compared exactly)
  instead of a torch.equal flag.
- bf16 output at positions above 30000 with the learner's own table: the angle drift above
  moves up to 4% of elements, max abs error 0.031 (1 ulp at |y| >= 4), so this case uses a
  tolerance (atol 5e-2, rtol 1.6e-2) instead of ulps; mistakes are off by 10 or more.
- Edge shapes (head_dim 2 and 6, one token, batch 1; the learner's own tables only up to
  position 4) and inputs_unchanged, default fp32 tolerance: correct formulations differ from
  the reference by at most 4.8e-7 on |y| up to 5.5 (complex multiplication and float64; the
  others are bit-identical), the small tables by at most 6e-8: under 5% of the tolerance.
  bf16 angles are 1.9e-3 off even in these small tables; the other mistakes are off by order
  one. inputs_unchanged returns the inputs themselves after the call, compared exactly with
  the reference's (which leaves them alone); only writing into the input (which for fp32 x
  is what x.float() returns) changes x_after_call.
- frequencies_theta (issue 28: theta takes other values than its default in a hidden case):
  tables for theta 1e7 and 5e5 below position 64, default fp32 tolerance. The accepted files
  differ from the reference by at most 1.9e-6 (19% of atol); the default theta instead of the
  one passed is off by order one.
- view_inputs (issue 28: the layouts the statement allows): the same x passed contiguous,
  transposed from (batch, heads, seq, head_dim) and sliced from a fused projection, with
  positions sliced from a wider table. Every accepted file gives the three bit-identical
  results (float64 math 4.8e-7 from the reference); `.view` on x or positions raises there.
"""

import torch

from judge.core.casekit import case
from judge.core.checkers import allclose, exact, ulp

BF16_APPLY = ulp(max_ulps=1, max_fraction=0.01)
LONG_TABLE = allclose(rtol=0.0, atol=2e-2)


def _table(head_dim: int, max_pos: int, theta: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    # The same recipe as the reference, kept here so apply_rope cases do not depend on the
    # learner's rope_frequencies.
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.outer(torch.arange(max_pos, dtype=torch.float32), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()


# ---------------------------------------------------------------- rope_frequencies


@case(points=8, public=True)
def frequencies_table(impl, rng):
    """cos/sin 表：形状 (max_pos, head_dim)、fp32、前后两半角度相同 /
    the cos/sin tables: shape (max_pos, head_dim), fp32, the same angles in both halves"""
    cos, sin = impl.rope_frequencies(16, 64)
    cos6, sin6 = impl.rope_frequencies(8, 20, theta=1e6)
    return {"cos": cos, "sin": sin, "cos_theta1e6": cos6, "sin_theta1e6": sin6}


@case(points=6, checker=LONG_TABLE)
def frequencies_long_context(impl, rng):
    """位置 30000 以上的表行：角度必须在 fp32 中计算 / table rows past position 30000: angles must be fp32"""
    cos, sin = impl.rope_frequencies(128, 40960)
    rows = torch.tensor([0, 1, 4095, 30000, 32767, 40959])
    return {"shape": tuple(cos.shape), "cos": cos[rows], "sin": sin[rows]}


@case(points=6)
def frequencies_default_dtype(impl, rng):
    """torch 的默认 dtype 被设成 bf16 或 fp64 时，表仍在 fp32 中计算、仍是 fp32 /
    with torch's default dtype set to bf16 or fp64, the tables are still computed in fp32 and returned as fp32"""
    # Some loading code builds the model under torch.set_default_dtype(torch.bfloat16); a factory
    # without dtype= (or an integer arange divided by head_dim) then makes inv_freq bf16.
    out = {}
    for name, dtype in (("default_bf16", torch.bfloat16), ("default_fp64", torch.float64)):
        before = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            cos, sin = impl.rope_frequencies(32, 48)
        finally:
            torch.set_default_dtype(before)
        out[name] = {"cos": cos, "sin": sin}
    return out


@case(points=8)
def frequencies_theta(impl, rng):
    """其他的 theta：Qwen3.5 的 1e7 和 5e5，在同一次用例里各算一张表；theta 必须真的用上 /
    other thetas: Qwen3.5's 1e7 and 5e5, one table each in one case; theta must really be used"""
    cos7, sin7 = impl.rope_frequencies(16, 64, theta=1e7)
    cos5, sin5 = impl.rope_frequencies(32, 48, theta=5e5)
    return {"theta_1e7": {"cos": cos7, "sin": sin7}, "theta_5e5": {"cos": cos5, "sin": sin5}}


# ---------------------------------------------------------------- apply_rope


@case(points=8, public=True)
def apply_fp32(impl, rng):
    """fp32 的 q，位置 0..seq-1 / fp32 queries at positions 0..seq-1"""
    cos, sin = _table(16, 32)
    x = rng.normal(2, 5, 3, 16)
    return {"y": impl.apply_rope(x, cos, sin, torch.arange(5))}


@case(points=8, public=True, checker=BF16_APPLY)
def apply_bf16(impl, rng):
    """bf16 输入：在 fp32 中计算，输出为 bf16 / bf16 input: computed in fp32, returned as bf16"""
    cos, sin = _table(64, 64)
    x = rng.normal(2, 16, 8, 64, std=2.0, dtype=torch.bfloat16)
    return {"y": impl.apply_rope(x, cos, sin, torch.arange(16))}


@case(points=6)
def prefill_chunk_offset(impl, rng):
    """分块预填充：位置从 5 开始；q 有 4 个头，k 有 2 个头（GQA）/
    a prefill chunk starting at position 5; q with 4 heads, k with 2 (GQA)"""
    cos, sin = _table(16, 32)
    positions = torch.arange(5, 12)
    q = rng.normal(1, 7, 4, 16)
    k = rng.normal(1, 7, 2, 16)
    return {"q": impl.apply_rope(q, cos, sin, positions), "k": impl.apply_rope(k, cos, sin, positions)}


@case(points=4, checker=BF16_APPLY)
def decode_step_batched(impl, rng):
    """KV cache 解码一步：每条序列在各自的位置；左填充的 (batch, seq) 位置 /
    one KV-cache decode step, each sequence at its own position; left-padded (batch, seq) positions"""
    cos, sin = _table(64, 128)
    step = impl.apply_rope(
        rng.normal(3, 1, 4, 64, std=2.0, dtype=torch.bfloat16), cos, sin, torch.tensor([[17], [3], [100]])
    )
    padded = impl.apply_rope(
        rng.normal(2, 4, 2, 64, std=2.0, dtype=torch.bfloat16),
        cos,
        sin,
        torch.tensor([[0, 0, 1, 2], [0, 1, 2, 3]]),
    )
    return {"step": step, "left_padded": padded}


@case(points=6, checker=allclose(rtol=1e-5, atol=1e-5), checkers={"bf16": BF16_APPLY, "bf16_tail": exact()})
def partial_rotary(impl, rng):
    """部分旋转：表宽 8、head_dim 32，只旋转前 8 个特征，其余原样 /
    partial rotary: an 8-wide table on head_dim 32 rotates the first 8 features and copies the rest"""
    cos, sin = _table(8, 32)
    x = rng.normal(2, 6, 3, 32)
    y = impl.apply_rope(x, cos, sin, torch.arange(2, 8))
    xb = rng.normal(1, 6, 2, 32, std=2.0, dtype=torch.bfloat16)
    yb = impl.apply_rope(xb, cos, sin, torch.arange(6))
    # The features past the table are copied: exactly the input's, compared by the judge.
    return {"y": y, "bf16_tail": yb[..., 8:], "bf16": yb}


@case(points=6, checkers={"grads": allclose(rtol=1e-5, atol=1e-5)})
def backward(impl, rng):
    """反向传播：对 x 的梯度（旋转的逆）/ gradient with respect to x (the inverse rotation)"""
    cos, sin = _table(32, 64)
    x = rng.normal(2, 6, 4, 32, std=2.0).requires_grad_(True)
    positions = rng.integers(0, 64, 2, 6)
    y = impl.apply_rope(x, cos, sin, positions)
    y.backward(rng.normal(2, 6, 4, 32))
    return {"y": y, "grads": {"x": x.grad}}


@case(points=6, checker=BF16_APPLY)
def backward_bf16(impl, rng):
    """bf16 输入的反向传播：对 x 的梯度在 fp32 中累加，最后只舍入一次到 bf16 /
    backward through a bf16 input: x's gradient is accumulated in fp32 and rounded to bf16 once"""
    cos, sin = _table(32, 64)
    x = rng.normal(2, 6, 4, 32, std=2.0, dtype=torch.bfloat16).requires_grad_(True)
    positions = rng.integers(0, 64, 2, 6)
    y = impl.apply_rope(x, cos, sin, positions)
    y.backward(rng.normal(2, 6, 4, 32, dtype=torch.bfloat16))
    return {"y": y, "grads": {"x": x.grad}}


@case(points=4)
def view_inputs(impl, rng):
    """非连续的输入：由 (batch, heads, seq, head_dim) 转置来的 q、从合并的 qkv 投影里切出的 q，位置也是切出来的几列 /
    non-contiguous inputs: q transposed from (batch, heads, seq, head_dim), q sliced from a fused qkv projection,
    and positions sliced from a longer position table"""
    cos, sin = _table(32, 64)
    x = rng.normal(2, 6, 4, 32, std=2.0)
    # The same values three ways: contiguous, transposed from the (batch, heads, seq, head_dim)
    # layout, and the first block of a fused (batch, seq, 3 * heads * head_dim) projection.
    transposed = x.transpose(1, 2).contiguous().transpose(1, 2)
    fused = torch.cat([x.flatten(2), rng.normal(2, 6, 2 * 4 * 32)], dim=-1)
    sliced = fused[..., : 4 * 32].unflatten(-1, (4, 32))
    all_positions = rng.integers(0, 64, 2, 10)
    positions = all_positions[:, 4:]  # a (batch, seq) slice: not contiguous either
    return {
        "contiguous": impl.apply_rope(x, cos, sin, positions.contiguous()),
        "transposed_view": impl.apply_rope(transposed, cos, sin, positions),
        "sliced_view": impl.apply_rope(sliced, cos, sin, positions),
    }


@case(points=6)
def edge_shapes(impl, rng):
    """边界形状：batch 1、单个 token、奇数个头、head_dim 2（只有一对）和 6（半宽为奇数）/
    edge shapes: batch 1, one token, an odd number of heads, head_dim 2 (a single pair) and 6 (an odd half)"""
    cos2, sin2 = _table(2, 16)
    cos6, sin6 = _table(6, 16)
    return {
        "tables_d2_len1": impl.rope_frequencies(2, 1),
        "tables_d6": impl.rope_frequencies(6, 5),
        "one_token_d2": impl.apply_rope(rng.normal(1, 1, 5, 2, std=2.0), cos2, sin2, torch.tensor([9])),
        "batch1_d6": impl.apply_rope(rng.normal(1, 7, 3, 6, std=2.0), cos6, sin6, torch.arange(3, 10)),
    }


@case(
    points=6,
    checkers={"x_after_call": exact(), "tables_after_call": exact(), "positions_after_call": exact()},
)
def inputs_unchanged(impl, rng):
    """apply_rope 不能改动传入的 x、cos/sin 表和 positions（fp32 的 x.float() 不是副本）/
    apply_rope must not modify x, the tables or positions (for fp32 x, x.float() is not a copy)"""
    cos, sin = _table(16, 32)
    x = rng.normal(2, 5, 3, 16)
    positions = torch.arange(4, 9)
    y = impl.apply_rope(x, cos, sin, positions)
    # The inputs themselves, compared outside this process with the reference's untouched
    # ones: a flag computed here with torch.equal could be patched by the code under test.
    return {
        "y": y,
        "x_after_call": x,
        "tables_after_call": {"cos": cos, "sin": sin},
        "positions_after_call": positions,
    }


# ---------------------------------------------------------------- both together


@case(points=6, checker=allclose(rtol=1.6e-2, atol=5e-2))
def long_context_bf16(impl, rng):
    """bf16 的 q 在 30000 以上的位置，用你自己的表 /
    bf16 queries at positions past 30000, with your own table"""
    cos, sin = impl.rope_frequencies(128, 40960)
    positions = rng.integers(30000, 40960, 2, 8)
    x = rng.normal(2, 8, 4, 128, std=2.0, dtype=torch.bfloat16)
    return {"y": impl.apply_rope(x, cos, sin, positions)}


@case(points=6, checker=allclose(rtol=1e-3, atol=5e-3))
def relative_position(impl, rng):
    """q·k 只取决于位置差：把 q、k 的位置同时平移 1500，注意力分数不变 /
    q·k depends only on the offset: shifting both q and k by 1500 leaves the scores unchanged"""
    cos, sin = impl.rope_frequencies(64, 2048)
    q = rng.normal(1, 8, 2, 64)
    k = rng.normal(1, 8, 2, 64)
    near = torch.arange(8)
    far = near + 1500

    def scores(pos: torch.Tensor) -> torch.Tensor:
        qr = impl.apply_rope(q, cos, sin, pos)
        kr = impl.apply_rope(k, cos, sin, pos)
        return torch.einsum("bqhd,bkhd->bhqk", qr, kr)

    # Scores reach about 24; with fp32 angles the shift changes them by 4e-4 at most, with bf16
    # angles by more than 10. Both are compared with the reference's (which agree with each other).
    return {"scores": scores(near), "scores_shifted": scores(far)}
