"""top-p 用的是 top-k 之前的完整分布：你对原始（除以温度后的）logits 做了 softmax，没有先把 top-k 去掉的 token 排除在外。top-k 之后剩下的概率总和不到 1，要在剩下的 logits（去掉的为 -inf）上重新 softmax，再按 p 截断。
Your top-p uses the full distribution from before top-k: you softmax the (tempered) logits without leaving out the tokens top-k removed. What top-k leaves sums to less than 1: softmax the remaining logits again (removed ones at -inf), then cut at p."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float() / temperature
    vocab = x.shape[-1]
    full = torch.softmax(x, dim=-1)
    if 0 < top_k < vocab:
        kth = torch.topk(x, top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p < 1.0:
        sorted_probs = torch.sort(full, dim=-1, descending=True).values
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        x = x.masked_fill(full < sorted_probs.gather(-1, n_keep - 1), float("-inf"))
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
