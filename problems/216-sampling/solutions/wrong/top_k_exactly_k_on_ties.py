"""top-k 在并列时只留了 k 个：你按 torch.topk 返回的下标保留 token，第 k 大的值有并列时，哪个留下取决于排序实现。本题规定保留所有不小于第 k 大的值的 token（并列的全部保留），这与 transformers 的做法相同：x < topk(x, k).values[..., -1:] 的位置才去掉。
Your top-k keeps exactly k tokens on ties: you keep the indices torch.topk returns, so when the k-th largest value is tied, which tokens survive depends on the sort. This problem keeps every token at least as large as the k-th largest value (all ties stay), as transformers does: remove only where x < topk(x, k).values[..., -1:]."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float() / temperature
    vocab = x.shape[-1]
    if 0 < top_k < vocab:
        idx = torch.topk(x, top_k, dim=-1).indices
        keep = torch.zeros_like(x, dtype=torch.bool).scatter(-1, idx, True)
        x = x.masked_fill(~keep, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        sorted_probs = torch.sort(probs, dim=-1, descending=True).values
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        x = x.masked_fill(probs < sorted_probs.gather(-1, n_keep - 1), float("-inf"))
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
