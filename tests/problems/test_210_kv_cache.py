"""Problem 210: chunked decoding equals whole-sequence attention; the cache contract holds as stated."""

from __future__ import annotations

import pytest
import torch

from judge.authoring.mutation.generate import generate
from judge.authoring.package import Problem
from judge.core.casekit import Rng
from judge.core.verdicts import Verdict
from judge.expected import ExpectedStore
from tests.factories import failing_cases, judge_problem, source_module
from tests.paths import REPO_ROOT

PROBLEM = Problem(REPO_ROOT / "problems" / "210-kv-cache")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("chunks", [[9], [1] * 9, [4, 1, 1, 3], [2, 5, 1, 1]])
def test_reference_decoding_equals_full_causal_attention(chunks: list[int], dtype: torch.dtype) -> None:
    ref = source_module("reference", PROBLEM.reference.source())
    rng = Rng(7)
    q = rng.normal(2, 6, 9, 8, std=1.5, dtype=dtype)
    k = rng.normal(2, 3, 9, 8, dtype=dtype)
    v = rng.normal(2, 3, 9, 8, dtype=dtype)
    out, _ = PROBLEM.cases_module.decode_in_chunks(ref, q, k, v, chunks)
    full = PROBLEM.cases_module.full_causal_attention(q, k, v)
    atol = 1e-5 if dtype == torch.float32 else 3e-2
    assert out.dtype == dtype
    torch.testing.assert_close(out.double(), full, rtol=0, atol=atol)


def test_valueerror_subclass_empty_buffers_and_other_names_pass() -> None:
    src = PROBLEM.reference.source()
    src = src.replace("torch.zeros(shape, dtype=dtype)", "torch.empty(shape, dtype=dtype)")
    src = src.replace("self.k", "self.key_buf").replace("self.v", "self.value_buf")
    src = src.replace("raise ValueError(", "raise CacheFull(")
    src = "class CacheFull(ValueError):\n    pass\n\n\n" + src
    assert "CacheFull(" in src and "torch.empty" in src
    assert failing_cases(PROBLEM, src) == {}


def test_a_cache_that_concatenates_copies_fails_only_the_storage_check() -> None:
    src = """
import torch
from reference_attention import cached_attention  # replaced below

class KVCache:
    def __init__(self, batch, n_kv_heads, max_len, head_dim, dtype=torch.float32):
        self.ks, self.vs, self.max_len, self.dtype, self.length = [], [], max_len, dtype, 0

    def update(self, k, v):
        if self.length + k.shape[2] > self.max_len:
            raise ValueError("full")
        self.ks.append(k.to(self.dtype).clone())
        self.vs.append(v.to(self.dtype).clone())
        self.length += k.shape[2]
        return torch.cat(self.ks, dim=2), torch.cat(self.vs, dim=2)
"""
    attention = PROBLEM.reference.source().split("def cached_attention", 1)[1]
    src = src.replace("from reference_attention import cached_attention  # replaced below\n", "import math\n")
    src += "\n\ndef cached_attention" + attention
    failing = failing_cases(PROBLEM, src)
    assert set(failing) == {"views_and_storage"}
    assert all("last_views_after_writing_into_the_first" in m for m in failing["views_and_storage"])


def test_starter_raises_not_implemented_everywhere() -> None:
    starter = source_module("starter", PROBLEM.starter.source())
    for c in PROBLEM.cases:
        with pytest.raises(NotImplementedError):
            c.fn(starter, Rng(c.seed))


@pytest.mark.slow
def test_sdpa_is_causal_gets_the_absolute_position_hint(store: ExpectedStore) -> None:
    """is_causal=True aligns the mask top-left: the same mistake as a chunk-relative mask."""
    src = PROBLEM.reference.source().split("def cached_attention", 1)[0] + (
        "import torch.nn.functional as F\n\n\n"
        "def cached_attention(q, k, v, cache):\n"
        "    k_all, v_all = cache.update(k, v)\n"
        "    out = F.scaled_dot_product_attention(\n"
        "        q.float(), k_all.float(), v_all.float(), is_causal=True, enable_gqa=True\n"
        "    )\n"
        "    return out.to(q.dtype)\n"
    )
    report = judge_problem(PROBLEM, src, store)
    assert report.verdict == Verdict.WA
    hint = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "chunk_relative_mask").hint()
    decode = next(c for c in report.cases if c.name == "prefill_then_decode_fp32")
    assert decode.verdict == Verdict.WA and decode.hint == hint
    basics = next(c for c in report.cases if c.name == "cache_basics")
    assert basics.verdict == Verdict.AC


def test_a_patched_storage_query_cannot_hide_concatenation(store: ExpectedStore) -> None:
    """An attack round turned the concatenating cache into AC by patching
    Tensor.untyped_storage so that every tensor reported one buffer. The case now observes
    sharing through the data (a write into one view shows in another), which no patch of a
    tensor query changes."""
    wrong = next(s for s in PROBLEM.solutions("wrong") if s.path.stem == "concatenates_per_step")
    liar = (
        "import torch\n"
        "class _One:\n"
        "    def data_ptr(self):\n        return 1\n"
        "torch.Tensor.untyped_storage = lambda self: _One()\n"
    )
    report = judge_problem(PROBLEM, liar + wrong.source(), store)
    assert report.verdict == Verdict.WA and report.score < 100
    case = next(c for c in report.cases if c.name == "views_and_storage")
    assert case.verdict == Verdict.WA, case.message


def test_a_finfo_min_mask_differs_only_at_the_edge_of_fp32() -> None:
    """Mutant 45:47:fill-finfo-min (declared equivalent) passes every case: each query sees key 0,
    so exp(finfo.min - row max) is exactly 0. Only a visible score of exactly finfo.min, which the
    statement's model-sized scores exclude, lets the masked keys in."""
    mutant = next(
        m for m in generate(PROBLEM.reference.source()) if m.id == "cached_attention/10:fill-finfo-min"
    )
    assert "finfo" in mutant.source
    assert failing_cases(PROBLEM, mutant.source) == {}
    ref = source_module("reference", PROBLEM.reference.source())
    finfo = source_module("finfo_mask", mutant.source)
    low = torch.finfo(torch.float32).min
    q = torch.full((1, 1, 3, 1), 2.0**64)
    k = torch.full((1, 1, 3, 1), low / 2.0**64)  # every score is exactly finfo.min
    v = torch.arange(3.0).view(1, 1, 3, 1)
    causal = ref.cached_attention(q, k, v, ref.KVCache(1, 1, 3, 1)).flatten()
    leaky = finfo.cached_attention(q, k, v, finfo.KVCache(1, 1, 3, 1)).flatten()
    assert causal.tolist() == [0.0, 0.5, 1.0] and leaky.tolist() == [1.0, 1.0, 1.0]
