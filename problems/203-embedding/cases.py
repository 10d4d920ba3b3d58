"""Cases for problem 203. Each returns observations; the judge compares them with the reference's.

Checker choices, measured on torch 2.13 CPU by running every case below with the three files
in solutions/accepted (index_select + einsum, one-hot product + F.linear, a tied nn.Linear +
gather) and three more heads (broadcast multiply and sum, a Python loop over vocabulary rows,
float64 maths rounded to fp32), plus 30 extra random draws at vocab 50, dim 48:
- Lookups copy rows, so every formulation is bit-identical (one-hot products included: one
  row times 1 plus zeros is exact, in bf16 too): exact().
- Logits (|logits| up to 31 here): the accepted heads mostly reach the same fp32 GEMM and agree
  bit for bit (einsum on 1-D h is 2.4e-7 off); other sum orders and float64 are at most 8.6e-6
  off in the cases (7.6e-6 in the extra draws), at most 7% of LOGITS = allclose(rtol=1e-5,
  atol=5e-5). Rounding the logits to bf16 (a bf16 matmul followed by .float()) is up to 0.062
  off, 0.39% relative, and fails 98% of the elements.
- bf16 weights and inputs: products of two bf16 numbers are exact in fp32, so the fp32 heads
  agree to 3.8e-6 whatever the order of the sum.
- weight.grad in the tied case (entries up to 0.83): the accepted files agree bit for bit;
  other sum orders and float64 are at most 2.4e-7 off, 12% of GRADS. Leaving out either the
  lookup's or the head's contribution changes the gradient at order one.
- The init case observes the drawn table itself and torch's global generator state after
  building; the judge computes everything about them outside the learner's process (a case that
  computed mean, std or a flag there could be told anything by a module that looks at its
  caller: solutions/wrong/init_std_one.py and init_zeros.py do exactly that). The table is not
  compared element by element (any correct draw is right): distribution() compares its mean,
  std and two-sample Kolmogorov-Smirnov distance with the reference's sample at 6 standard
  errors. At 64000 values that allows the mean to differ by 6.7e-4, the std by 4.8e-4 (2.4% of
  0.02) and the KS distance to reach 0.018. Against the reference's draw (seed 203: mean 5.2e-6,
  std 0.02002), 2000 other seeds each of nn.init.normal_, torch.randn * 0.02, trunc_normal_ and a
  hand-written Box-Muller used at most 45% of the mean's allowance, 48% of the std's and 58% of
  the KS distance's (in theory a correct draw fails one of the three with probability about
  6e-9). Off by: std 1 2050 times the std's allowance (and 26 times the KS one), zeros 42 and
  28 times, nn.Linear's kaiming_uniform 109 times the std's, a uniform draw with std 0.02 3.4
  times the KS one, N(0, 0.021²) 2.2 times the std's, N(0.001, 0.02²) 1.5 times the mean's.
- A table left as torch.empty can hold a freed buffer that is already an N(0, 0.02²) draw
  (the mutant without nn.init.normal_ passed 2 validate runs in 5 on statistics alone). So the
  case also observes torch.get_rng_state() after building, and facts(differs_from=...) asks the
  judge whether it differs from the state right after torch.manual_seed(203), which the judge
  computes itself: every correct init moves the generator, an uninitialised table never does
  (tests/problems/test_203_embedding.py).
- Empty inputs (ids of shape (0,) and (2, 0), h of shape (0, dim) and (2, 0, dim)): the
  outputs are empty, so exact() checks only shape and dtype. The three accepted files
  (index_select, one_hot, gather; einsum and F.linear heads) return them without raising;
  ids.min() on an empty tensor raises RuntimeError, which is what a bounds check without
  the numel() test runs into.
- Two mutants of the upper bound check are declared equivalent in problem.toml:
  weight[flat_ids] itself raises IndexError for every id >= vocab_size (checked for ids
  vocab_size, vocab_size + 1 and 1000), so a weaker upper check raises for the same ids.
- view_inputs and two_models (issue 28): the same values passed contiguous and as views
  (`input_ids[:, :-1]`, `hidden[:, -1]`, a transposed h), and two models of other sizes called in
  turn. The four accepted files give bit-identical results on both (LOGITS for the logits, exact()
  for the rows). `.view` on the ids or on h raises there; a value cached on the class or in a
  module-level variable gives the second model the first one's table. The two `.view`s of an
  output (rows, scores) only split their first axis, which a view always can: declared
  equivalent in problem.toml.
"""

import torch
import torch.nn.functional as F

from judge.core.casekit import case, load_params, param_table
from judge.core.checkers import allclose, distribution, exact, facts

LOGITS = allclose(rtol=1e-5, atol=5e-5)
GRADS = allclose(rtol=1e-5, atol=2e-6)
INIT_SEED = 203
# torch's global generator right after torch.manual_seed(INIT_SEED), computed wherever this module
# is imported: the judge's own copy is what its checker compares with, outside the learner's process.
SEEDED_STATE = torch.Generator().manual_seed(INIT_SEED).get_state()
GENERATOR_MOVED = facts(
    differs_from=SEEDED_STATE,
    differs_what=("torch.manual_seed(203) 刚执行完时的状态", "the state right after torch.manual_seed(203)"),
)


def _model(impl, rng, vocab, dim, std=0.5, dtype=torch.float32):
    m = impl.TiedEmbedding(vocab, dim)
    load_params(m, weight=rng.normal(vocab, dim, std=std))
    return m.to(dtype)


def _raises(fn):
    try:
        fn()
    except Exception:
        return True
    return False


# ---------------------------------------------------------------- the parameter


@case(
    points=8,
    public=True,
    checker=exact(),
    checkers={"weight": distribution(), "global_generator_after_init": GENERATOR_MOVED},
)
def init(impl, rng):
    """唯一的参数 weight，形状 (vocab_size, dim)，fp32，从 torch 的全局随机数发生器抽取 N(0, 0.02²) /
    one parameter `weight`, shape (vocab_size, dim), fp32, drawn from N(0, 0.02²) with torch's global generator"""
    torch.manual_seed(INIT_SEED)
    m = impl.TiedEmbedding(1000, 64)
    # Observed as data, never asked about here: the judge computes the draw's mean, std and shape
    # and whether the generator moved (a table left as torch.empty can hold an earlier draw).
    state = torch.get_rng_state()
    params = param_table(m)
    return {
        "parameters": ", ".join(sorted(params)),
        "weight": params.get("weight"),
        "global_generator_after_init": state,
    }


# ---------------------------------------------------------------- embed


@case(points=12, public=True, checker=exact())
def lookup_fp32(impl, rng):
    """ids 形状 (2, 5)，有重复的 id，也有 0 和 vocab_size - 1：逐行取出 weight 的行 /
    ids of shape (2, 5) with repeats, 0 and vocab_size - 1: each id picks its row of weight"""
    m = _model(impl, rng, 40, 16)
    ids = rng.integers(0, 40, 2, 5)
    ids[0, 0], ids[1, 4] = 0, 39
    ids[1, :2] = ids[0, 1]
    return {"x": m.embed(ids)}


@case(points=6, checker=exact())
def lookup_shapes(impl, rng):
    """任意形状的 ids：(1, 1)、一维、三维、零维，输出形状为 ids.shape + (dim,) /
    ids of any shape: (1, 1), 1-D, 3-D and 0-D; the output has shape ids.shape + (dim,)"""
    m = _model(impl, rng, 23, 7)
    return {
        "ids_1x1": m.embed(torch.tensor([[17]])),
        "ids_1d": m.embed(rng.integers(0, 23, 6)),
        "ids_3d": m.embed(rng.integers(0, 23, 2, 3, 4)),
        "ids_0d": m.embed(torch.tensor(5)),
        "all_same_id": m.embed(torch.full((3, 3), 11)),
    }


@case(points=8, checker=exact())
def lookup_bf16(impl, rng):
    """bf16 的 weight：取出的行原样返回，dtype 仍为 bf16 /
    a bf16 weight: rows come back unchanged, still bf16"""
    m = _model(impl, rng, 64, 32, dtype=torch.bfloat16)
    return {"x": m.embed(rng.integers(0, 64, 3, 8))}


@case(points=8, checker=exact())
def out_of_range_raises(impl, rng):
    """越界的 id（等于 vocab_size、更大、负数）必须抛出异常，负数不能绕到表尾 /
    ids out of range (vocab_size, larger, negative) must raise; negative ids must not wrap to the end"""
    m = _model(impl, rng, 30, 8)
    return {
        "id_vocab_size_raises": _raises(lambda: m.embed(torch.tensor([3, 30]))),
        "id_1000_raises": _raises(lambda: m.embed(torch.tensor([[0, 1], [1000, 2]]))),
        "id_minus_1_raises": _raises(lambda: m.embed(torch.tensor([4, -1, 2]))),
        "id_minus_30_raises": _raises(lambda: m.embed(torch.tensor([[-30]]))),
        "ids_0_and_29": m.embed(torch.tensor([0, 29])),
    }


@case(points=4, checker=exact())
def empty_inputs(impl, rng):
    """没有 id 的 ids（形状 (0,) 和 (2, 0)）不报错，返回形状 ids.shape + (dim,) 的空张量；没有行的 h 给出 (0, vocab_size) 的 logits /
    ids with no ids in them (shapes (0,) and (2, 0)) raise nothing and give an empty ids.shape + (dim,); an h with no rows gives (0, vocab_size) logits"""
    m = _model(impl, rng, 9, 6)
    return {
        "ids_0": m.embed(torch.zeros(0, dtype=torch.long)),
        "ids_2x0": m.embed(torch.zeros(2, 0, dtype=torch.long)),
        "h_0xdim": m.logits(torch.zeros(0, 6)),
        "h_2x0xdim_bf16": m.logits(torch.zeros(2, 0, 6, dtype=torch.bfloat16)),
    }


# ---------------------------------------------------------------- logits


@case(points=12, public=True, checker=LOGITS)
def logits_fp32(impl, rng):
    """h 形状 (2, 5, dim)，logits = h @ weight.T，形状 (2, 5, vocab_size)，fp32 /
    h of shape (2, 5, dim): logits = h @ weight.T, shape (2, 5, vocab_size), fp32"""
    m = _model(impl, rng, 40, 48)
    return {"logits": m.logits(rng.normal(2, 5, 48, std=2.0))}


@case(points=8, checker=LOGITS)
def logits_bf16(impl, rng):
    """bf16 的 h 和 weight：logits 在 fp32 中计算并以 fp32 返回；混合 dtype 同样 /
    bf16 h and weight: logits computed and returned in fp32; the same for mixed dtypes"""
    m = _model(impl, rng, 96, 64)
    h = rng.normal(3, 7, 64, std=2.0)
    out = {"fp32_h_fp32_weight": m.logits(h)}
    m = m.to(torch.bfloat16)
    out["bf16_h_bf16_weight"] = m.logits(h.bfloat16())
    out["fp32_h_bf16_weight"] = m.logits(h)
    return out


@case(points=4, checker=LOGITS)
def logits_shapes(impl, rng):
    """各种形状的 h：一维 (dim,)、(1, 1, dim)、四维；奇数的词表和维数 /
    h of other shapes: 1-D (dim,), (1, 1, dim) and 4-D, with odd vocab and dim"""
    m = _model(impl, rng, 7, 5)
    return {
        "h_1d": m.logits(rng.normal(5, std=2.0)),
        "h_1x1": m.logits(rng.normal(1, 1, 5, std=2.0)),
        "h_4d": m.logits(rng.normal(2, 1, 3, 5, std=2.0)),
    }


@case(points=6, checker=LOGITS)
def square_table(impl, rng):
    """vocab_size == dim：忘了转置不会报形状错误，只会算错 /
    vocab_size == dim: a missing transpose raises no shape error, it just gives wrong logits"""
    m = _model(impl, rng, 12, 12)
    return {"logits": m.logits(rng.normal(3, 12, std=2.0))}


# ---------------------------------------------------------------- tying


@case(points=10, checkers={"grads": GRADS, "loss": LOGITS})
def tied_gradient(impl, rng):
    """一个同时经过 embed 和 logits 的损失：weight.grad 是两部分梯度之和 /
    a loss through both embed and logits: weight.grad is the sum of both contributions"""
    vocab, dim = 50, 48
    m = _model(impl, rng, vocab, dim)
    ids = rng.integers(0, vocab, 3, 6)
    ids[0, :3] = 5  # a repeated id: its row collects three gradients
    mix = rng.normal(dim, dim, std=dim**-0.5)
    targets = rng.integers(0, vocab, 3, 6)
    h = torch.tanh(m.embed(ids) @ mix) * 3.0  # a stand-in for the transformer layers
    loss = F.cross_entropy(m.logits(h).reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    return {"loss": loss, "grads": {"weight": m.weight.grad}}


@case(points=6, checker=exact(), checkers={"logits_before": LOGITS, "logits_after": LOGITS})
def shared_storage(impl, rng):
    """原地修改 weight 之后，embed 和 logits 都要看到新值（同一份存储，没有副本）/
    after an in-place change to weight, embed and logits both see it (one storage, no copy)"""
    m = _model(impl, rng, 20, 16)
    h = rng.normal(4, 16, std=2.0)
    before = m.logits(h)
    with torch.no_grad():
        m.weight[3].mul_(-2.0)
        m.weight[11] += 1.5
    return {
        "logits_before": before,
        "logits_after": m.logits(h),
        "rows_after": m.embed(torch.tensor([3, 11, 0])),
    }


# ---------------------------------------------------------------- layouts and state (issue 28)


@case(points=4, checker=LOGITS, checkers={"embed": exact()})
def view_inputs(impl, rng):
    """非连续的输入：训练时切出来的 `input_ids[:, :-1]`，只取最后一个位置的 `hidden[:, -1]`，以及转置来的 h /
    non-contiguous inputs: `input_ids[:, :-1]` sliced for training, `hidden[:, -1]` for the last position only,
    and a transposed h"""
    m = _model(impl, rng, 48, 24)
    input_ids = rng.integers(0, 48, 3, 8)
    ids = input_ids[:, :-1]  # the inputs of next-token prediction: a slice, not contiguous
    hidden = rng.normal(3, 8, 24, std=2.0)
    last = hidden[:, -1]  # (3, 24) with the strides of (3, 8, 24)
    seq_first = hidden.transpose(0, 1).contiguous()
    transposed = seq_first.transpose(0, 1)  # the values of hidden, laid out (seq, batch, dim)
    return {
        "embed": {"contiguous": m.embed(ids.contiguous()), "sliced_view": m.embed(ids)},
        "logits": {
            "contiguous": m.logits(hidden),
            "transposed_view": m.logits(transposed),
            "last_position": {"contiguous": m.logits(last.contiguous()), "sliced_view": m.logits(last)},
        },
    }


@case(points=4, checker=LOGITS)
def two_models(impl, rng):
    """两个同时存在的模型（词表和维数都不同），交替调用：各自只用自己的 weight，互不影响 /
    two models alive together (different vocab and dim), called in turn: each uses its own weight only"""
    a = _model(impl, rng, 40, 16)
    b = _model(impl, rng, 24, 12)
    ids_a, ids_b = rng.integers(0, 24, 2, 5), rng.integers(0, 24, 2, 5)
    h_a, h_b = rng.normal(2, 5, 16, std=2.0), rng.normal(2, 5, 12, std=2.0)
    first_a = {"embed": a.embed(ids_a), "logits": a.logits(h_a)}
    only_b = {"embed": b.embed(ids_b), "logits": b.logits(h_b)}
    # a again, after b: other ids and hidden states of the same shapes.
    again_a = {"embed": a.embed(ids_b), "logits": a.logits(rng.normal(2, 5, 16, std=2.0))}
    return {"a": {"calls": [first_a, again_a]}, "b": only_b}
