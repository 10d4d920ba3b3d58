"""The problem references against the real Qwen3.5 code in transformers.

Nothing else checks that problems/*/reference.py compute what Qwen3.5 computes: the cases compare
a solution with our reference, not the reference with the model. Here each reference meets the
module or function of transformers' `models/qwen3_5/modeling_qwen3_5.py` it stands for, built
from a tiny `Qwen3_5TextConfig` made in code (no hub, no network, no `from_pretrained`), with the
same weights copied into both (by `state_dict` name where the names agree) and the same inputs.

transformers is a development requirement only, pinned in requirements-dev.txt: the judge, the
runtime image and the kit never import it. Without the `kernels`, `causal-conv1d` and
`flash-linear-attention` packages (none is installed), transformers runs its own torch fallbacks,
which are what we compare with.

Every tolerance below is stated with the difference measured (torch 2.13, CPU) when it was set.
In fp32 the two sides do the same arithmetic, so most comparisons are exact or a few ulps apart.
In bf16 our references keep the maths in fp32 and round once, where transformers rounds after
each step: there the tolerance is in bf16 rounding steps, and the test also checks that ours is
at least as close as transformers' bf16 result to transformers' own fp32 result. Problem 213 (MoE
routing) is compared elsewhere, with that package.
"""

from __future__ import annotations

import re
import types

import torch
import torch.nn as nn
import transformers
from torch import Tensor
from transformers import Qwen3_5TextConfig
from transformers.generation.logits_process import (
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from transformers.masking_utils import create_causal_mask
from transformers.models.qwen3_5 import modeling_qwen3_5 as hf

from judge.authoring.package import Problem
from tests.factories import package_module
from tests.paths import REPO_ROOT


def _reference(problem_dir: str, name: str) -> types.ModuleType:
    return package_module(Problem(REPO_ROOT / "problems" / problem_dir), "reference.py", name)


EMBEDDING = _reference("203-embedding", "ref_203_vs_hf")
NORM = _reference("204-rmsnorm", "ref_204_vs_hf")
ROPE = _reference("205-rope", "ref_205_vs_hf")
MLP = _reference("206-swiglu", "ref_206_vs_hf")
ATTENTION = _reference("209-gated-gqa", "ref_209_vs_hf")
CONV = _reference("211-causal-conv1d", "ref_211_vs_hf")
DELTA = _reference("212-gated-delta-rule", "ref_212_vs_hf")
DECODER = _reference("214-decoder-layer", "ref_214_vs_hf")
SAMPLING = _reference("216-sampling", "ref_216_vs_hf")

# Qwen3.5's own values where they are cheap (rope theta, partial rotary factor, mrope sections, eps);
# tiny widths everywhere else.
DIM, HEADS, KV_HEADS, HEAD_DIM, HIDDEN = 48, 4, 2, 32, 80


def text_config(
    *, attn: str = "eager", head_dim: int = HEAD_DIM, tie_word_embeddings: bool = False
) -> Qwen3_5TextConfig:
    """A one-layer full-attention Qwen3.5 text config, as small as the tests need."""
    return Qwen3_5TextConfig(
        vocab_size=64,
        hidden_size=DIM,
        intermediate_size=HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=head_dim,
        layer_types=["full_attention"],
        rms_norm_eps=1e-6,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10_000_000.0,
            "partial_rotary_factor": 0.25,
            "mrope_section": [11, 11, 10],
        },
        # A PreTrainedConfig keyword taken from **kwargs, not a dataclass field: mypy cannot see it.
        attn_implementation=attn,  # type: ignore[call-arg]
        tie_word_embeddings=tie_word_embeddings,
    )


def rotary_dim(config: Qwen3_5TextConfig) -> int:
    """The rotated features per head, as Qwen3_5TextRotaryEmbedding derives them."""
    factor = (config.rope_parameters or {}).get("partial_rotary_factor")
    assert isinstance(factor, float), factor
    return int(config.head_dim * factor)


def max_diff(actual: Tensor, expected: Tensor) -> float:
    """The largest absolute difference, in fp32 (0 for empty tensors)."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.numel() == 0:
        return 0.0
    return float((actual.float() - expected.float()).abs().max())


def bf16_steps(actual: Tensor, expected: Tensor) -> float:
    """The largest difference, element by element, in bf16 rounding steps (8 significant bits) at
    the larger magnitude of the two: for elementwise maths, where each result has its own scale."""
    assert actual.dtype == expected.dtype == torch.bfloat16, (actual.dtype, expected.dtype)
    a, e = actual.float(), expected.float()
    step = torch.exp2(torch.floor(torch.log2(torch.maximum(a.abs(), e.abs()).clamp(min=2.0**-126))) - 7)
    return float(((a - e).abs() / step).max())


def scale_steps(actual: Tensor, expected: Tensor) -> float:
    """The largest difference in bf16 rounding steps at the expected tensor's largest magnitude:
    for sums (a rotation, a convolution, attention), where a result near zero after cancellation
    carries the error of its large terms."""
    assert actual.dtype == expected.dtype == torch.bfloat16, (actual.dtype, expected.dtype)
    step = 2.0 ** (torch.floor(torch.log2(expected.float().abs().max())) - 7)
    return max_diff(actual, expected) / float(step)


def causal_mask(config: Qwen3_5TextConfig, x: Tensor) -> Tensor | None:
    """The mask Qwen3_5TextModel hands its layers: additive (0 / dtype min) for eager, None for sdpa
    (which then passes is_causal=True)."""
    positions = torch.arange(x.shape[1])[None]
    mask = create_causal_mask(
        config=config, inputs_embeds=x, attention_mask=None, past_key_values=None, position_ids=positions
    )
    assert mask is None or isinstance(mask, Tensor)
    return mask


def rotary_tables(config: Qwen3_5TextConfig, x: Tensor, positions: Tensor) -> tuple[Tensor, Tensor]:
    """transformers' (cos, sin) for text positions (batch, seq): (batch, seq, rotary_dim), x's dtype."""
    cos, sin = hf.Qwen3_5TextRotaryEmbedding(config)(x, positions)
    assert isinstance(cos, Tensor) and isinstance(sin, Tensor)
    return cos, sin


def attention_module(config: Qwen3_5TextConfig) -> hf.Qwen3_5Attention:
    # Annotated as taking a Qwen3_5Config, but Qwen3_5DecoderLayer hands it its Qwen3_5TextConfig.
    return hf.Qwen3_5Attention(config, layer_idx=0)  # type: ignore[arg-type]


def mlp_module(config: Qwen3_5TextConfig) -> hf.Qwen3_5MLP:
    # The same annotation as Qwen3_5Attention's, and the same text config from the decoder layer.
    return hf.Qwen3_5MLP(config, config.intermediate_size)  # type: ignore[arg-type]


def same_init_then_same_weights(ours: nn.Module, theirs: nn.Module, mean: float) -> None:
    """Fresh modules start from the same parameters; then ours moves away from that init (so that
    the weight counts) and theirs gets the same values by name."""
    torch.testing.assert_close(ours.state_dict(), theirs.state_dict(), atol=0, rtol=0)
    with torch.no_grad():
        for p in ours.parameters():
            p.normal_(mean, 0.4)
    theirs.load_state_dict(ours.state_dict(), strict=True)


def closer_to_fp32(ours: Tensor, theirs: Tensor, fp32: Tensor) -> bool:
    """Where ours rounds once on purpose: our bf16 result is at least as close as transformers' bf16
    one to transformers' own computation in fp32 on the same (bf16-valued) inputs and weights."""
    return max_diff(ours, fp32) <= max_diff(theirs, fp32)


def test_transformers_is_the_pinned_version() -> None:
    """The differences below were measured against this version: a new one must be re-measured."""
    pin = re.search(r"^transformers==(\S+)$", (REPO_ROOT / "requirements-dev.txt").read_text(), re.M)
    assert pin is not None, "requirements-dev.txt must pin transformers"
    assert transformers.__version__ == pin.group(1)
    runtime = (REPO_ROOT / "requirements.txt").read_text()
    assert "transformers" not in runtime, "transformers is a test tool, never a runtime requirement"


# 204: norms -------------------------------------------------------------------------------------


def test_rmsnorm_is_qwen3_5_rmsnorm() -> None:
    """204 RMSNorm vs Qwen3_5RMSNorm: the same zero init, and the same operations in the same
    order (fp32 statistics, fp32 1 + w, one rounding), so the outputs are bit-identical: measured
    0 in fp32 and in bf16 (bf16 weights and input). Tolerance 0."""
    torch.manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        ours, theirs = NORM.RMSNorm(DIM), hf.Qwen3_5RMSNorm(DIM, eps=1e-6)
        same_init_then_same_weights(ours, theirs, mean=0.0)
        ours.to(dtype)
        theirs.to(dtype)
        x = (torch.randn(3, 5, DIM) * 4).to(dtype)
        with torch.no_grad():
            torch.testing.assert_close(ours(x), theirs(x), atol=0, rtol=0, msg=f"{dtype}")


def test_gated_rmsnorm_is_qwen3_5_rmsnorm_gated() -> None:
    """204 GatedRMSNorm vs Qwen3_5RMSNormGated (same init: ones). fp32: identical, measured 0,
    tolerance 0. bf16, different on purpose: transformers rounds the normalised x to bf16, then
    its product with the weight, then the gated result; we round once at the end. Measured: 36% of
    the elements differ, by at most 2.0 bf16 steps, tolerance 2 steps; ours is transformers' fp32
    result rounded once (0.029 from it), transformers' bf16 result is 0.044 from it."""
    torch.manual_seed(1)
    for dtype in (torch.float32, torch.bfloat16):
        ours, theirs = NORM.GatedRMSNorm(HEAD_DIM), hf.Qwen3_5RMSNormGated(HEAD_DIM, eps=1e-6)
        same_init_then_same_weights(ours, theirs, mean=1.0)
        fp32 = hf.Qwen3_5RMSNormGated(HEAD_DIM, eps=1e-6)
        fp32.load_state_dict({k: v.to(dtype).float() for k, v in ours.state_dict().items()})
        ours.to(dtype)
        theirs.to(dtype)
        x = (torch.randn(4, 6, HEAD_DIM) * 3).to(dtype)
        gate = (torch.randn(4, 6, HEAD_DIM) * 2).to(dtype)
        with torch.no_grad():
            got, want, exact = ours(x, gate), theirs(x, gate), fp32(x.float(), gate.float())
        if dtype == torch.float32:
            torch.testing.assert_close(got, want, atol=0, rtol=0)
        else:
            assert bf16_steps(got, want) <= 2.0, bf16_steps(got, want)
            torch.testing.assert_close(got, exact.to(dtype), atol=0, rtol=0)
            assert closer_to_fp32(got, want, exact)


def test_l2norm_is_transformers_l2norm() -> None:
    """204 l2norm vs transformers' l2norm (the FLA form, x * rsqrt(sum(x*x) + eps)), in the input's
    dtype on both sides: measured 0 in fp32 and in bf16, tolerance 0. One row is short enough for
    the 1e-6 eps to matter."""
    torch.manual_seed(2)
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(3, 7, 16)
        x[0, 0] *= 1e-4
        x = x.to(dtype)
        torch.testing.assert_close(NORM.l2norm(x), hf.l2norm(x, dim=-1, eps=1e-6), atol=0, rtol=0)


# 205: rotary embedding --------------------------------------------------------------------------


def test_rope_tables_are_qwen3_5_text_rotary_embedding() -> None:
    """205 rope_frequencies(rotary_dim, ...) vs Qwen3_5TextRotaryEmbedding at Qwen3.5's real
    head_dim 256 with partial_rotary_factor 0.25 (64 rotary features) and theta 1e7, at positions
    up to 32767. Adaptation: transformers returns (batch, seq, rotary_dim) tables for position
    ids; we index our (max_pos, rotary_dim) table with the same ids. Text-only position ids are the
    same in the three mrope sections, so its interleaving changes nothing. Both compute each angle
    as one fp32 product: measured 0, tolerance 0."""
    config = text_config(head_dim=256)
    positions = torch.tensor([[0, 1, 2, 3, 100, 4095, 30000, 32767]])
    cos_hf, sin_hf = rotary_tables(config, torch.zeros(1, positions.shape[1], 8), positions)
    cos, sin = ROPE.rope_frequencies(rotary_dim(config), 32768, theta=10_000_000.0)
    torch.testing.assert_close(cos[positions], cos_hf, atol=0, rtol=0)
    torch.testing.assert_close(sin[positions], sin_hf, atol=0, rtol=0)


def test_apply_rope_is_apply_rotary_pos_emb_with_partial_rotary() -> None:
    """205 apply_rope vs apply_rotary_pos_emb, rotating the first 64 of 256 features and passing
    the rest through. Adaptation: ours takes x as (batch, seq, heads, head_dim), the whole table
    and the positions; transformers takes (batch, heads, seq, head_dim) and the gathered
    (batch, seq, rotary_dim) rows, so x is transposed on the way in and out.
    fp32: the same products and sums, measured 0, tolerance 0.
    bf16, different on purpose: transformers gets bf16 tables (its rotary module casts them to x's
    dtype) and rotates in bf16; we rotate with the fp32 tables in fp32 and round once. Measured:
    16% of the rotated elements differ, by at most 0.5 bf16 steps at the largest magnitude (8.4),
    tolerance 1 step; ours is 0.0155 from the fp32 rotation, transformers' 0.038. The features
    passed through are bit-identical in both dtypes."""
    torch.manual_seed(3)
    config = text_config(head_dim=256)
    rot = rotary_dim(config)
    positions = torch.tensor([[0, 5, 17, 4095, 30000, 32767], [1, 2, 3, 4, 5, 6]])
    cos, sin = ROPE.rope_frequencies(rot, 32768, theta=10_000_000.0)
    for dtype in (torch.float32, torch.bfloat16):
        x = (torch.randn(2, 6, 3, 256) * 2).to(dtype)
        ours = ROPE.apply_rope(x, cos, sin, positions)

        def transformers_rope(x: Tensor) -> Tensor:
            c, s = rotary_tables(config, x, positions)
            q, k = hf.apply_rotary_pos_emb(x.transpose(1, 2), x.transpose(1, 2), c, s)  # type: ignore[no-untyped-call]
            torch.testing.assert_close(q, k, atol=0, rtol=0)
            return q.transpose(1, 2)  # type: ignore[no-any-return]

        theirs = transformers_rope(x)
        torch.testing.assert_close(ours[..., rot:], x[..., rot:], atol=0, rtol=0)
        if dtype == torch.float32:
            torch.testing.assert_close(ours, theirs, atol=0, rtol=0)
        else:
            assert scale_steps(ours, theirs) <= 1.0, scale_steps(ours, theirs)
            assert closer_to_fp32(ours, theirs, transformers_rope(x.float()))


# 206: MLP ---------------------------------------------------------------------------------------


def test_swiglu_is_qwen3_5_mlp() -> None:
    """206 SwiGLU vs Qwen3_5MLP: the same parameter names, loaded by state_dict, the same three
    bias-free linears and silu, in the module's dtype on both sides: measured 0 in fp32 and in
    bf16 (module and input in bf16), tolerance 0."""
    torch.manual_seed(4)
    for dtype in (torch.float32, torch.bfloat16):
        ours, theirs = MLP.SwiGLU(DIM, HIDDEN), mlp_module(text_config())
        theirs.load_state_dict(ours.state_dict(), strict=True)
        ours.to(dtype)
        theirs.to(dtype)
        x = torch.randn(2, 5, DIM).to(dtype)
        with torch.no_grad():
            torch.testing.assert_close(ours(x), theirs(x), atol=0, rtol=0, msg=f"{dtype}")


# 209: gated attention ---------------------------------------------------------------------------


def _attention_pair(seed: int, config: Qwen3_5TextConfig) -> tuple[nn.Module, nn.Module]:
    """209 GatedAttention and Qwen3_5Attention (layer 0) with the same weights, loaded by name; the
    q/k norm weights are moved away from their (shared) zero init so that they count."""
    torch.manual_seed(seed)
    ours = ATTENTION.GatedAttention(DIM, HEADS, KV_HEADS, HEAD_DIM, eps=1e-6)
    with torch.no_grad():
        ours.q_norm.weight.normal_(0.0, 0.5)
        ours.k_norm.weight.normal_(0.0, 0.5)
    theirs = attention_module(config)
    theirs.load_state_dict(ours.state_dict(), strict=True)
    return ours, theirs


def test_gated_attention_is_qwen3_5_attention() -> None:
    """209 GatedAttention vs Qwen3_5Attention: per-head q/k norms, partial RoPE (8 of 32 features),
    GQA (4 query heads on 2 kv heads), causal softmax, sigmoid output gate.
    Adaptation: transformers gets (cos, sin) as (batch, seq, rotary_dim) and the causal mask that
    Qwen3_5TextModel builds; ours takes one (seq, rotary_dim) table: the first row of the batch
    (the positions are the same in every row).
    fp32, eager: measured 6.7e-8 on outputs up to 0.51 (scores times d**-0.5 against divided by
    sqrt(d), dtype min added against -inf filled), tolerance 1e-6.
    fp32, sdpa (transformers' default implementation: no mask, is_causal=True): measured 8.9e-8,
    tolerance 1e-6.
    bf16, eager, different on purpose: transformers rotates with bf16 tables and runs the scores,
    softmax's output, the weighted sum and the gate in bf16; we keep each in fp32 and round before
    o_proj. Measured 0.0020 (0.5 bf16 steps at 0.51), tolerance 1 step; ours is 0.0016 from
    transformers' fp32 layer, transformers' bf16 layer 0.0020."""
    x32 = torch.randn(2, 7, DIM, generator=torch.Generator().manual_seed(5))
    positions = torch.arange(7)[None].expand(2, -1)
    for attn in ("eager", "sdpa"):
        config = text_config(attn=attn)
        ours, theirs = _attention_pair(6, config)
        cos, sin = rotary_tables(config, x32, positions)
        mask = causal_mask(config, x32)
        assert (mask is None) == (attn == "sdpa")
        with torch.no_grad():
            want, _ = theirs(x32, (cos, sin), mask)
            got = ours(x32, cos[0], sin[0])
        assert max_diff(got, want) <= 1e-6, (attn, max_diff(got, want))

    config = text_config()
    ours, theirs = _attention_pair(6, config)
    fp32 = attention_module(config)
    fp32.load_state_dict({k: v.to(torch.bfloat16).float() for k, v in ours.state_dict().items()})
    ours.to(torch.bfloat16)
    theirs.to(torch.bfloat16)
    x = x32.to(torch.bfloat16)
    cos_hf, sin_hf = rotary_tables(config, x, positions)  # bf16 tables, as the model passes them
    cos, sin = rotary_tables(config, x.float(), positions)  # fp32 tables, as problem 205 builds them
    with torch.no_grad():
        want, _ = theirs(x, (cos_hf, sin_hf), causal_mask(config, x))
        got = ours(x, cos[0], sin[0])
        exact, _ = fp32(x.float(), (cos, sin), causal_mask(config, x.float()))
    assert scale_steps(got, want) <= 1.0, scale_steps(got, want)
    assert closer_to_fp32(got, want, exact)


# 211: causal conv1d -----------------------------------------------------------------------------


def test_causal_conv1d_is_the_gated_deltanet_conv_path() -> None:
    """211 causal_conv1d vs causal_conv1d_fn, which Qwen3_5GatedDeltaNet calls on a prefill with
    conv1d.weight.squeeze(1) (our (channels, kernel) weight) and activation silu.
    Adaptation: transformers returns no state. Its cache keeps the newest `kernel` inputs and,
    after an earlier prefill, convolves cat(state, x) and keeps the last seq outputs: our
    initial_state path is compared with that, and our final_state with the stream's newest
    kernel-1 inputs (exact: raw inputs).
    fp32: F.conv1d sums in another order than our loop; measured 1.9e-6 on outputs up to 11.6
    (2 fp32 ulps), tolerance 1e-5.
    bf16, different on purpose: transformers rounds the convolution to bf16 and then silu's output,
    we round once; measured 0.5 bf16 steps at the largest output (14.75) on 36-39% of the
    elements, tolerance 1 step; ours is at least as close to transformers' fp32 convolution."""
    torch.manual_seed(7)
    channels, kernel, seq = 12, 4, 9
    for dtype in (torch.float32, torch.bfloat16):
        w, b = torch.randn(channels, kernel).to(dtype), torch.randn(channels).to(dtype)
        x = (torch.randn(2, channels, seq) * 2).to(dtype)
        state = torch.randn(2, channels, kernel - 1).to(dtype)
        for bias in (None, b):
            for initial in (None, state):
                stream = torch.cat([torch.zeros_like(state) if initial is None else initial, x], dim=-1)
                got, final = CONV.causal_conv1d(x, w, bias, initial_state=initial)
                want = hf.causal_conv1d_fn(stream, w, bias, activation="silu")[..., -seq:]
                torch.testing.assert_close(final, stream[..., -(kernel - 1) :], atol=0, rtol=0)
                assert got.dtype == want.dtype == dtype
                if dtype == torch.float32:
                    assert max_diff(got, want) <= 1e-5, max_diff(got, want)
                else:
                    assert scale_steps(got, want) <= 1.0, scale_steps(got, want)
                    f32_bias = None if bias is None else bias.float()
                    exact = hf.causal_conv1d_fn(stream.float(), w.float(), f32_bias, activation="silu")
                    assert closer_to_fp32(got, want, exact[..., -seq:])


def test_causal_conv1d_step_is_causal_conv1d_update() -> None:
    """211 causal_conv1d_step vs causal_conv1d_update (GatedDeltaNet's one-token decode), six
    steps from a prefill's state.
    Adaptation: transformers' conv state holds `kernel` inputs and is updated in place; its oldest
    column is never read (the convolution over cat(state, x_t) keeps only the last output). Ours
    holds kernel-1 and is returned. So theirs starts as cat(1e4, ours), a value that would show if
    it were read, and after each step its newest kernel-1 columns equal our new state exactly.
    fp32: measured 4.8e-7 on outputs up to 8, tolerance 1e-5. bf16, different on purpose as for
    the full sequence: measured up to 1.0 bf16 step at the step's largest output, tolerance 2."""
    torch.manual_seed(8)
    channels, kernel = 12, 4
    for dtype in (torch.float32, torch.bfloat16):
        weight = torch.randn(channels, kernel).to(dtype)
        bias = torch.randn(channels).to(dtype)
        ours = torch.randn(2, channels, kernel - 1).to(dtype)
        theirs = torch.cat([torch.full((2, channels, 1), 1e4).to(dtype), ours], dim=-1)
        for _ in range(6):
            x_t = torch.randn(2, channels).to(dtype)
            want = hf.causal_conv1d_update(x_t[..., None], theirs, weight, bias, activation="silu")[..., 0]
            got, ours = CONV.causal_conv1d_step(x_t, ours, weight, bias)
            torch.testing.assert_close(ours, theirs[..., 1:], atol=0, rtol=0)
            assert got.dtype == want.dtype == dtype
            if dtype == torch.float32:
                assert max_diff(got, want) <= 1e-5, max_diff(got, want)
            else:
                assert scale_steps(got, want) <= 2.0, scale_steps(got, want)


# 212: gated delta rule --------------------------------------------------------------------------


def _delta_inputs(seq: int, dtype: torch.dtype) -> dict[str, Tensor]:
    """Gated DeltaNet's inputs in our layout, (batch, heads, seq, ...): g = -A softplus(a + dt_bias)
    < 0 as the layer computes it, beta = sigmoid(b), and a random fp32 initial state."""
    gen = torch.Generator().manual_seed(9)
    b, h, dk, dv = 2, 3, 8, 6
    a = torch.randn(b, h, seq, generator=gen)
    return {
        "q": torch.randn(b, h, seq, dk, generator=gen).to(dtype),
        "k": torch.randn(b, h, seq, dk, generator=gen).to(dtype),
        "v": torch.randn(b, h, seq, dv, generator=gen).to(dtype),
        "g": (-torch.rand(h, 1, generator=gen) * 4 * nn.functional.softplus(a + 1)).to(dtype),
        "beta": torch.sigmoid(torch.randn(b, h, seq, generator=gen)).to(dtype),
        "initial_state": torch.randn(b, h, dk, dv, generator=gen),
    }


def _transformers_delta_rule(chunk_size: int | None, inputs: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """transformers' torch fallback on our inputs: the recurrent form (chunk_size None) or the
    chunked one. Adaptation: it takes (batch, seq, heads, ...) and g, beta as (batch, seq, heads),
    so every input is transposed on the way in and the output on the way out; the state is
    (batch, heads, d_k, d_v) on both sides. Qwen3_5GatedDeltaNet passes
    use_qk_l2norm_in_kernel=True, and 212 normalises q and k itself. (transformers also repeats
    q and k for more value heads than key heads; 212 takes equal head counts, that is the
    caller's job.)"""
    q, k, v, g, beta = (inputs[n].transpose(1, 2) for n in ("q", "k", "v", "g", "beta"))
    state_in = inputs.get("initial_state")
    if chunk_size is None:
        out, state = hf.torch_recurrent_gated_delta_rule(
            q, k, v, g, beta, initial_state=state_in, output_final_state=True, use_qk_l2norm_in_kernel=True
        )
    else:
        out, state = hf.torch_chunk_gated_delta_rule(
            q,
            k,
            v,
            g,
            beta,
            chunk_size=chunk_size,
            initial_state=state_in,
            output_final_state=True,
            use_qk_l2norm_in_kernel=True,
        )
    assert isinstance(out, Tensor) and isinstance(state, Tensor)
    return out.transpose(1, 2), state


def test_gated_delta_rule_is_transformers_recurrent_and_chunked_rule() -> None:
    """212 gated_delta_rule vs torch_recurrent_gated_delta_rule (decode) and
    torch_chunk_gated_delta_rule (prefill), 11 steps from a random state, in chunks of 4 (three
    chunks, the last one padded) and of 64 (the default).
    Recurrent: the same loop (q scaled by a product with d**-0.5 where transformers divides by
    sqrt(d)); measured 6.0e-8 on outputs up to 0.7 and 0 on the state, tolerance 1e-6.
    Chunked: the UT-transform form sums in another order; measured 1.2e-7 on the output and
    2.4e-7 on the state, tolerance 2e-6.
    bf16 inputs: both sides cast everything to fp32 first and keep the state in fp32; measured:
    the bf16 outputs are identical and the states 1.2e-7 apart, same tolerances."""
    for dtype in (torch.float32, torch.bfloat16):
        inputs = _delta_inputs(11, dtype)
        out, state = DELTA.gated_delta_rule(**inputs)
        for chunk_size, atol in ((None, 1e-6), (4, 2e-6), (64, 2e-6)):
            want_out, want_state = _transformers_delta_rule(chunk_size, inputs)
            assert out.dtype == want_out.dtype == dtype
            assert state.dtype == want_state.dtype == torch.float32
            assert max_diff(out, want_out) <= atol, (dtype, chunk_size, max_diff(out, want_out))
            assert max_diff(state, want_state) <= atol, (dtype, chunk_size, max_diff(state, want_state))


def test_gated_delta_rule_on_an_empty_sequence_is_what_transformers_returns() -> None:
    """A zero-length sequence: both transformers functions return an empty output and the initial
    state unchanged (zeros without one); the reference must do the same rather than fail on
    stacking no outputs. Exact."""
    inputs = _delta_inputs(0, torch.float32)
    for with_state in (True, False):
        if not with_state:
            del inputs["initial_state"]
        out, state = DELTA.gated_delta_rule(**inputs)
        for chunk_size in (None, 64):
            want_out, want_state = _transformers_delta_rule(chunk_size, inputs)
            assert want_out.shape == (2, 3, 0, 6)
            start = inputs["initial_state"] if with_state else torch.zeros(2, 3, 8, 6)
            torch.testing.assert_close(want_state, start, atol=0, rtol=0)
            torch.testing.assert_close(out, want_out, atol=0, rtol=0)
            torch.testing.assert_close(state, want_state, atol=0, rtol=0)


# 214: decoder layer -----------------------------------------------------------------------------


class PlainGQA(nn.Module):
    """The self_attn 214 asks for, run by transformers: 214's four projections, then
    transformers' eager_attention_forward (repeat_kv, scaling, the model's causal mask, fp32
    softmax). 214 leaves out RoPE, the q/k norms and the gate on purpose (its statement says
    so), so no transformers module is its attention; this stands in for Qwen3_5Attention inside
    Qwen3_5DecoderLayer."""

    def __init__(self, config: Qwen3_5TextConfig) -> None:
        super().__init__()
        self.head_dim = config.head_dim
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.q_proj = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)

    def forward(
        self, hidden_states: Tensor, attention_mask: Tensor | None, **kwargs: object
    ) -> tuple[Tensor, Tensor]:
        b, s, _ = hidden_states.shape
        q, k, v = (
            proj(hidden_states).view(b, s, -1, self.head_dim).transpose(1, 2)
            for proj in (self.q_proj, self.k_proj, self.v_proj)
        )
        out, weights = hf.eager_attention_forward(self, q, k, v, attention_mask, scaling=self.head_dim**-0.5)
        return self.o_proj(out.reshape(b, s, -1)), weights


def test_decoder_layer_is_qwen3_5_decoder_layer_with_plain_attention() -> None:
    """214 DecoderLayer vs Qwen3_5DecoderLayer (full-attention type) whose self_attn is PlainGQA:
    transformers' skeleton (input_layernorm, residual, post_attention_layernorm, mlp, residual)
    around transformers' attention core. All 9 state_dict keys load by name, strictly.
    fp32: measured 4.8e-7 on outputs up to 10.3, tolerance 1e-5. bf16, different on purpose (214's
    statement allows it): transformers' attention runs its products and softmax's output in bf16,
    214's in fp32; measured 0.031 (0.5 bf16 steps at 10.25) on 8% of the elements, tolerance 1 step."""
    torch.manual_seed(10)
    config = text_config()
    ours = DECODER.DecoderLayer(DIM, HEADS, KV_HEADS, HEAD_DIM, HIDDEN, eps=1e-6)
    with torch.no_grad():
        ours.input_layernorm.weight.normal_(0.0, 0.5)
        ours.post_attention_layernorm.weight.normal_(0.0, 0.5)
    theirs = hf.Qwen3_5DecoderLayer(config, layer_idx=0)
    theirs.self_attn = PlainGQA(config)  # type: ignore[assignment]  # a module with the same call
    theirs.load_state_dict(ours.state_dict(), strict=True)
    x32 = torch.randn(2, 7, DIM) * 3
    positions = torch.arange(7)[None].expand(2, -1)
    for dtype in (torch.float32, torch.bfloat16):
        ours.to(dtype)
        theirs.to(dtype)
        x = x32.to(dtype)
        with torch.no_grad():
            want = theirs(x, rotary_tables(config, x, positions), attention_mask=causal_mask(config, x))
            got = ours(x)
        assert got.dtype == want.dtype == dtype
        if dtype == torch.float32:
            assert max_diff(got, want) <= 1e-5, max_diff(got, want)
        else:
            assert scale_steps(got, want) <= 1.0, scale_steps(got, want)


def test_decoder_skeleton_with_209_attention_is_qwen3_5_full_attention_layer() -> None:
    """The parts assemble into Qwen3.5's real full-attention layer: 214's DecoderLayer with its
    self_attn replaced by 209's GatedAttention (given the rotary tables) vs Qwen3_5DecoderLayer
    with its own Qwen3_5Attention, every weight loaded by name, strictly. fp32: measured 4.8e-7 on
    outputs up to 9.2, tolerance 1e-5."""
    torch.manual_seed(11)
    config = text_config()
    x = torch.randn(2, 7, DIM) * 3
    positions = torch.arange(7)[None].expand(2, -1)
    cos, sin = rotary_tables(config, x, positions)

    class RotatedAttention(ATTENTION.GatedAttention):  # type: ignore[misc,name-defined]
        def forward(self, h: Tensor) -> Tensor:
            return super().forward(h, cos[0], sin[0])  # type: ignore[no-any-return]

    theirs = hf.Qwen3_5DecoderLayer(config, layer_idx=0)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if name.endswith("norm.weight"):
                p.normal_(0.0, 0.5)
    ours = DECODER.DecoderLayer(DIM, HEADS, KV_HEADS, HEAD_DIM, HIDDEN, eps=1e-6)
    ours.self_attn = RotatedAttention(DIM, HEADS, KV_HEADS, HEAD_DIM, eps=1e-6)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    with torch.no_grad():
        want = theirs(x, (cos, sin), attention_mask=causal_mask(config, x))
        got = ours(x)
    assert max_diff(got, want) <= 1e-5, max_diff(got, want)


# 216: sampling filters --------------------------------------------------------------------------


def _transformers_filter(logits: Tensor, temperature: float, top_k: int, top_p: float) -> Tensor:
    """The warpers generate() applies, in its order: temperature, top-k (only when top_k != 0),
    top-p (only when top_p < 1), each with min_tokens_to_keep=1 and filter value -inf.
    Adaptation: the warpers take input ids too, which they ignore."""
    ids = torch.zeros(logits.shape[0], 1, dtype=torch.long)
    scores = TemperatureLogitsWarper(temperature)(ids, logits)
    if top_k:
        scores = TopKLogitsWarper(top_k)(ids, scores)
    if top_p < 1.0:
        scores = TopPLogitsWarper(top_p)(ids, scores)
    assert isinstance(scores, Tensor)
    return scores


def test_filter_logits_is_generate_warpers() -> None:
    """216 filter_logits vs TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper on fp32
    logits (generate() casts the last logits to fp32 before its warpers), for every mix of
    temperature (0.7, 1, 1.3), top_k (off, 1, 5, the vocabulary) and top_p (off, 0.9, 0.5, 0).
    Top-p: transformers drops tokens whose ascending cumulative probability is <= 1 - p, we keep
    tokens with less than p before them in descending order: the same set when nothing ties.
    Measured: identical kept sets and values on all 32 rows in all 48 settings, tolerance 0."""
    logits = torch.randn(32, 40, generator=torch.Generator().manual_seed(12)) * 3
    for temperature in (0.7, 1.0, 1.3):
        for top_k in (0, 1, 5, 40):
            for top_p in (1.0, 0.9, 0.5, 0.0):
                got = SAMPLING.filter_logits(logits, temperature, top_k, top_p)
                want = _transformers_filter(logits, temperature, top_k, top_p)
                msg = f"temperature={temperature} top_k={top_k} top_p={top_p}"
                torch.testing.assert_close(got, want, atol=0, rtol=0, msg=msg)


def test_filter_logits_keeps_a_tie_at_the_top_p_boundary_where_transformers_drops_one() -> None:
    """Different on purpose: 216 keeps every token tied with the last one top-p keeps, whatever
    order a sort gives them; TopPLogitsWarper keeps the sort's first of them only. Logits
    [2, 1, 1, 0] (probabilities 0.53, 0.20, 0.20, 0.07) with p = 0.6: we keep 3 tokens,
    transformers 2. Top-k keeps ties on both sides."""
    logits = torch.tensor([[2.0, 1.0, 1.0, 0.0]])
    ours = SAMPLING.filter_logits(logits, top_p=0.6).isfinite()
    theirs = _transformers_filter(logits, 1.0, 0, 0.6).isfinite()
    assert ours.tolist() == [[True, True, True, False]]
    assert int(theirs.sum()) == 2 and bool(theirs[0, 0]) and not bool(theirs[0, 3])
    top_k = _transformers_filter(logits, 1.0, 2, 1.0).isfinite()
    assert SAMPLING.filter_logits(logits, top_k=2).isfinite().tolist() == top_k.tolist() == ours.tolist()


# 203: tied embedding ----------------------------------------------------------------------------


def test_tied_embedding_is_qwen3_5_embed_tokens_and_tied_lm_head() -> None:
    """203 TiedEmbedding vs a Qwen3_5ForCausalLM with tie_word_embeddings=True, where transformers
    makes lm_head.weight the very tensor model.embed_tokens.weight. Our weight is copied into
    embed_tokens (and so into lm_head). embed: row gathering on both sides, exact in fp32 and
    bf16. logits fp32: matmul against F.linear, measured 0, tolerance 1e-5.
    logits bf16, different on purpose: transformers' lm_head returns bf16 logits, we multiply the
    same bf16 values in fp32 and return fp32 logits; measured: ours rounded to bf16 are exactly
    theirs (0 steps; ours are 0.0035 from theirs unrounded), tolerance 1 step after rounding."""
    torch.manual_seed(13)
    lm = hf.Qwen3_5ForCausalLM(text_config(tie_word_embeddings=True))
    assert lm.lm_head.weight is lm.model.embed_tokens.weight
    ours = EMBEDDING.TiedEmbedding(64, DIM)
    ids = torch.tensor([[0, 5, 63, 5], [7, 7, 1, 2]])
    for dtype in (torch.float32, torch.bfloat16):
        ours.to(dtype)
        # PreTrainedModel.to is functools.wraps(nn.Module.to), which mypy reads as unbound.
        lm.to(dtype)  # type: ignore[arg-type]
        with torch.no_grad():
            lm.model.embed_tokens.weight.copy_(ours.weight)
            assert lm.lm_head.weight is lm.model.embed_tokens.weight
            torch.testing.assert_close(ours.embed(ids), lm.model.embed_tokens(ids), atol=0, rtol=0)
            h = (torch.randn(2, 4, DIM) * 4).to(dtype)
            got, want = ours.logits(h), lm.lm_head(h)
        assert got.dtype == torch.float32 and want.dtype == dtype
        if dtype == torch.float32:
            assert max_diff(got, want) <= 1e-5, max_diff(got, want)
        else:
            assert bf16_steps(got.to(dtype), want) <= 1.0, bf16_steps(got.to(dtype), want)
