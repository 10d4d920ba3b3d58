"""Reference for problem 207: numerically stable softmax, log_softmax and cross-entropy."""

import torch


def _log_softmax_fp32(x: torch.Tensor, dim: int) -> torch.Tensor:
    # Always fp32 inside: exp and the sum lose too much in bf16, and fp16's exp overflows
    # above 11. Subtracting the row maximum makes the largest exponent exp(0) = 1, so nothing
    # overflows, and the result is the same because the shift cancels in the ratio.
    xf = x.float()
    shifted = xf - xf.amax(dim=dim, keepdim=True)
    # Stay in log space: log(exp(shifted) / s) computed as shifted - log(s) never takes log(0),
    # even where exp(shifted) underflows to 0.
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xf = x.float()
    e = (xf - xf.amax(dim=dim, keepdim=True)).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return _log_softmax_fp32(x, dim).to(x.dtype)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    # The loss stays fp32 whatever the logits' dtype: it is summed over many tokens and
    # fed to the optimiser, so rounding it to bf16 would only throw precision away.
    logp = _log_softmax_fp32(logits, -1)
    keep = targets != ignore_index
    # Ignored positions may hold -100, which is no valid index: gather at 0 there instead
    # and drop the value afterwards.
    safe = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    # Mean over the counted tokens only; with none counted this is 0 / 0 = NaN, as in torch.
    return nll.sum() / keep.sum()
