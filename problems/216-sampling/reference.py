"""Reference for problem 216: temperature, top-k and top-p filtering, and sampling."""

import torch


def filter_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0
) -> torch.Tensor:
    if temperature <= 0:
        raise ValueError("filter_logits needs temperature > 0; sample() handles temperature 0")
    # A new fp32 tensor: the division never touches the caller's logits, even when they are fp32.
    x = logits.float() / temperature
    vocab = x.shape[-1]

    if 0 < top_k < vocab:
        # Keep every token at least as large as the k-th largest: ties at the boundary stay.
        kth = torch.topk(x, top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))

    if top_p < 1.0:
        # Probabilities of what is left, renormalised after top-k, in fp32.
        probs = torch.softmax(x, dim=-1)
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
        # Mass strictly before each token: the token that crosses p still has less than p before it.
        cum = torch.cumsum(sorted_probs, dim=-1)
        before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
        drop_sorted = before >= top_p
        drop_sorted[..., 0] = False  # the most likely token always stays
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        x = x.masked_fill(drop, float("-inf"))
    return x


def sample(
    logits: torch.Tensor,
    generator: torch.Generator,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
) -> torch.Tensor:
    if temperature == 0:
        # Greedy: the first largest logit, no randomness, the generator left alone.
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
