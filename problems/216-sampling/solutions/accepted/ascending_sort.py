"""transformers-style filters: the k-th largest from a descending sort, and top-p from an
ascending sort, dropping the low tail while its total stays at most 1 - p. softmax by hand.
Ties at the top-p cut are settled in logit space: every token at least as large as the least
likely kept one stays, whatever order the sort gave the tied tokens."""

import torch


def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    scores = logits.to(torch.float32) / temperature
    neg_inf = torch.tensor(float("-inf"))
    if top_k > 0 and top_k < scores.shape[-1]:
        kth = scores.sort(dim=-1, descending=True).values[..., top_k - 1 : top_k]
        scores = torch.where(scores < kth, neg_inf, scores)
    if top_p < 1.0:
        asc = scores.sort(dim=-1).values  # ascending: the least likely first
        tail = _softmax(asc).cumsum(dim=-1)
        # The removed tail is a prefix of the ascending order; keep the most likely token whatever p is.
        n_remove = (tail <= 1.0 - top_p).sum(dim=-1, keepdim=True)
        n_remove = n_remove.clamp(max=scores.shape[-1] - 1)
        lowest_kept = asc.gather(-1, n_remove)
        scores = torch.where(scores < lowest_kept, neg_inf, scores)
    return scores


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return logits.max(dim=-1).indices
    probs = _softmax(filter_logits(logits, temperature, top_k, top_p))
    return torch.multinomial(probs, num_samples=1, generator=generator)[:, 0]
