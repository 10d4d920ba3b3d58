"""No sort at all, pairwise comparisons instead. top-k keeps a token when fewer than k tokens
are strictly larger; top-p keeps a token when the tokens strictly more likely than it hold less
than p (or when it is one of the most likely), which is the tie rule of the statement read
directly. O(vocab^2) memory per row, fine for a vocabulary of a few hundred."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    x = logits.to(dtype=torch.float32) / temperature
    vocab = x.size(-1)
    if top_k > 0 and top_k < vocab:
        # x_i >= the k-th largest value exactly when fewer than k values are above x_i.
        above = (x.unsqueeze(-2) > x.unsqueeze(-1)).sum(dim=-1)
        x = torch.where(above < top_k, x, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        # more_likely[b, i, j]: token j is strictly more likely than token i.
        more_likely = probs.unsqueeze(-2) > probs.unsqueeze(-1)
        mass_above = (probs.unsqueeze(-2) * more_likely).sum(dim=-1)
        top = probs == probs.amax(dim=-1, keepdim=True)
        x = torch.where((mass_above < top_p) | top, x, float("-inf"))
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).flatten()
