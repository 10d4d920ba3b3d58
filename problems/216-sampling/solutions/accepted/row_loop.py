"""One row at a time: top-k through kthvalue, top-p by walking the sorted probabilities and
adding them up in Python until the total reaches p, then keeping every token at least as
likely as the last one taken (ties at the cut all stay). The draw is still one multinomial call
on the whole (batch, vocab) matrix, in vocab order."""

import torch


def _filter_row(row, top_k, top_p):
    vocab = row.numel()
    if 0 < top_k < vocab:
        # The k-th largest is the (vocab - k + 1)-th smallest.
        kth = torch.kthvalue(row, vocab - top_k + 1).values
        row = torch.where(row >= kth, row, torch.full_like(row, float("-inf")))
    if top_p < 1.0:
        probs = torch.exp(row - row.max())
        probs = probs / probs.sum()
        last = None
        total = 0.0
        for i in torch.argsort(probs, descending=True).tolist():
            last = probs[i]
            total += float(probs[i])
            if total >= top_p:
                break
        row = torch.where(probs >= last, row, torch.full_like(row, float("-inf")))
    return row


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    x = logits.float() / temperature
    return torch.stack([_filter_row(x[b], top_k, top_p) for b in range(x.shape[0])])


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    x = filter_logits(logits, temperature, top_k, top_p)
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    probs = e / e.sum(dim=-1, keepdim=True)
    return torch.multinomial(probs, 1, generator=generator).view(-1)
