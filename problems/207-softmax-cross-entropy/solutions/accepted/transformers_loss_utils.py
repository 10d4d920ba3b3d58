"""The layout of transformers' loss_utils (ForCausalLMLoss / fixed_cross_entropy): upcast the
logits to fp32, flatten the positions, sum the per-token losses and divide by the number of
counted tokens. The summed negative log-likelihood is written out here, since the exercise
forbids the library's own loss."""

import torch


def _stable_logsumexp(x: torch.Tensor, dim: int) -> torch.Tensor:
    m = x.amax(dim=dim, keepdim=True)
    return m + (x - m).exp().sum(dim=dim, keepdim=True).log()


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xf = x.float()
    return (xf - _stable_logsumexp(xf, dim)).exp().to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xf = x.float()
    return (xf - _stable_logsumexp(xf, dim)).to(x.dtype)


def _summed_nll(source: torch.Tensor, target: torch.Tensor, ignore_index: int) -> torch.Tensor:
    # What F.cross_entropy(source, target, ignore_index=..., reduction="sum") computes.
    counted = target != ignore_index
    logp = source - _stable_logsumexp(source, -1)
    picked = logp.gather(-1, target.masked_fill(~counted, 0).unsqueeze(-1)).squeeze(-1)
    # A selection, not a product: an ignored row's class 0 may be masked to -inf, and 0 * -inf is NaN.
    return -torch.where(counted, picked, 0.0).sum()


def fixed_cross_entropy(
    source: torch.Tensor, target: torch.Tensor, num_items_in_batch: torch.Tensor | None, ignore_index: int
) -> torch.Tensor:
    loss = _summed_nll(source, target, ignore_index)
    if num_items_in_batch is None:
        num_items_in_batch = (target != ignore_index).sum()
    return loss / num_items_in_batch.to(loss.dtype)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    # transformers' ForCausalLMLoss upcasts first ("to avoid potential precision issues"). It
    # then flattens with .view, on logits it knows are the model's whole contiguous output;
    # here they may be a shifted slice, so reshape.
    logits = logits.float()
    vocab_size = logits.shape[-1]
    return fixed_cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1), None, ignore_index)
