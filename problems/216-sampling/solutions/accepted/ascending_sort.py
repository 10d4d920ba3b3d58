"""transformers-style filters: the k-th largest from a descending sort, and top-p from an
ascending sort, dropping the low tail while its total stays at most 1 - p. softmax by hand."""

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
        asc, idx = scores.sort(dim=-1)  # ascending: the least likely first
        tail = _softmax(asc).cumsum(dim=-1)
        remove = tail <= 1.0 - top_p
        remove[..., -1] = False  # keep the most likely token whatever p is
        remove = remove.scatter(-1, idx, remove)
        scores = torch.where(remove, neg_inf, scores)
    return scores


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return logits.max(dim=-1).indices
    probs = _softmax(filter_logits(logits, temperature, top_k, top_p))
    return torch.multinomial(probs, num_samples=1, generator=generator)[:, 0]
