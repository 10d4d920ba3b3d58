"""In the style of gpt-fast's generate.py: a `logits_to_probs` helper that divides by the
temperature, takes the top-k pivot with `torch.topk(...).values.select(-1, -1)` and removes what
lies below it with `torch.where`, then a top-p step written the same way; `sample` returns the
argmax for temperature 0 and otherwise draws once from the probabilities."""

import torch


def _top_p_pivot(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """The smallest probability top-p keeps, per row: (batch, 1)."""
    v, _ = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(v, dim=-1) - v  # the mass strictly before each sorted position
    n_keep = torch.clamp((before < top_p).sum(dim=-1, keepdim=True), min=1)
    return torch.gather(v, -1, n_keep - 1)


def logits_to_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0 (got {temperature}); temperature 0 is greedy, in sample")
    logits = logits.float() / temperature
    if top_k is not None and 0 < top_k < logits.size(-1):
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        pivot = v.select(-1, -1).unsqueeze(-1)
        logits = torch.where(logits < pivot, -float("Inf"), logits)
    if top_p is not None and top_p < 1.0:
        probs = torch.nn.functional.softmax(logits, dim=-1)
        pivot = _top_p_pivot(probs, top_p)
        logits = torch.where(probs < pivot, -float("Inf"), logits)
    return logits


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    return logits_to_logits(logits, temperature, top_k, top_p)


def logits_to_probs(logits, temperature=1.0, top_k=None, top_p=None):
    return torch.nn.functional.softmax(logits_to_logits(logits, temperature, top_k, top_p), dim=-1)


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = logits_to_probs(logits, temperature, top_k, top_p)
    # gpt-fast draws with an exponential race to avoid a device sync; the statement pins the
    # draw to torch.multinomial with the given generator, so that is what is called.
    idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
    return idx_next.squeeze(-1)
