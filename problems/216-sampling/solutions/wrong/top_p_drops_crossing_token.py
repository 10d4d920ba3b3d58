"""top-p 少留了一个 token：你只保留"含自己在内的累计概率 < p"的 token，越过 p 的那一个被去掉了，留下的概率总和反而不到 p。应该比较排在它前面的累计概率：前面的总和 < p 就保留（越过 p 的那个也留下）。
Your top-p keeps one token too few: you keep tokens whose cumulative probability *including themselves* is below p, so the token that crosses p is dropped and what is left sums to less than p. Compare the mass strictly before each token instead: keep it while that is below p (the crossing token stays)."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float() / temperature
    vocab = x.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(x, top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        sorted_probs = torch.sort(probs, dim=-1, descending=True).values
        n_keep = (torch.cumsum(sorted_probs, dim=-1) < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        x = x.masked_fill(probs < sorted_probs.gather(-1, n_keep - 1), float("-inf"))
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
