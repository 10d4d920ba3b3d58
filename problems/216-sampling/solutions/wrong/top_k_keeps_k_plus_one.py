"""top-k 多留了一个：阈值取成了排序后下标为 k 的值（第 k+1 大），于是留下了 k+1 个 token。第 k 大的值是降序排序后下标 k-1 的那个，或 torch.topk(x, k).values[..., -1]。
Your top-k keeps one token too many: the threshold is the sorted value at index k (the (k+1)-th largest), so k+1 tokens stay. The k-th largest is at index k-1 of the descending sort, or torch.topk(x, k).values[..., -1]."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float() / temperature
    vocab = x.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.sort(x, dim=-1, descending=True).values[..., top_k : top_k + 1]
        x = x.masked_fill(x < kth, float("-inf"))
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
