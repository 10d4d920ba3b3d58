"""In the style of Meta Llama's generation code: `sample_top_p` sorts the probabilities in
descending order, takes the running sum and masks every sorted position whose mass before it
(`probs_sum - probs_sort`) has reached p. Two changes make it this problem's rule: the mask is
`>= p` (a token is kept only with strictly less than p before it, and the top token always stays),
and the kept set is read back as a threshold on the probabilities, so that tied tokens stay
together and the draw happens in vocab order, not on the sorted array."""

import torch


def sample_top_p_keep(probs, p):
    probs_sort, _ = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = probs_sum - probs_sort >= p
    mask[..., 0] = False  # the most likely token always stays, even with p = 0
    smallest_kept = probs_sort.masked_fill(mask, float("inf")).amin(dim=-1, keepdim=True)
    return probs >= smallest_kept


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    scores = logits.float() / temperature
    vocab = scores.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1, None]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(scores, dim=-1)
        scores = scores.masked_fill(~sample_top_p_keep(probs, top_p), float("-inf"))
    return scores


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    next_token = torch.multinomial(probs, num_samples=1, generator=generator)
    return next_token.reshape(-1)
