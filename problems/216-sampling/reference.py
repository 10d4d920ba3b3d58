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
        # Only the sorted values are used, never the order a sort gives to tied tokens.
        sorted_probs = torch.sort(probs, dim=-1, descending=True).values
        # Mass strictly before each position (the running total less the token itself): the token
        # that crosses p still has less than p before it.
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        # The mass before grows along the sorted order, so the kept positions are a prefix; the top
        # token always stays, even when p is 0.
        n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        # The smallest kept probability. Every token at least as likely stays: a token tied with
        # the last one kept is kept too, whichever of them the sort happened to put first.
        smallest_kept = sorted_probs.gather(-1, n_keep - 1)
        x = x.masked_fill(probs < smallest_kept, float("-inf"))
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
    # A negative temperature reaches filter_logits, which refuses it.
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
