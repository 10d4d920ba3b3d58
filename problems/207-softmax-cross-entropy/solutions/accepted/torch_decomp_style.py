"""In the style of PyTorch's own decompositions (torch._decomp: `_softmax`, `_log_softmax`,
`_nll_loss_forward`): a computation dtype chosen from the input's, the row maximum subtracted,
the result cast back; the loss picks each row's target with gather on the class axis of an
(N, C) matrix, with a safe target where the label is ignored."""

import torch


def _computation_dtype(dtype: torch.dtype) -> torch.dtype:
    # As torch._prims_common.get_computation_dtype: half precision computes in fp32.
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    result_dtype = x.dtype
    x = x.to(_computation_dtype(result_dtype))
    x_max = torch.amax(x, dim, keepdim=True)
    unnormalized = torch.exp(x - x_max)
    result = unnormalized / torch.sum(unnormalized, dim, keepdim=True)
    return result.to(result_dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    result_dtype = x.dtype
    x = x.to(_computation_dtype(result_dtype))
    shifted = x - torch.amax(x, dim, keepdim=True)
    shifted_logsumexp = torch.log(torch.sum(torch.exp(shifted), dim, keepdim=True))
    return (shifted - shifted_logsumexp).to(result_dtype)


def _nll_loss_mean(logp: torch.Tensor, target: torch.Tensor, ignore_index: int) -> torch.Tensor:
    # logp: (N, C) in fp32, target: (N,). Class axis 1, as the decomposition's channel_dim.
    ignore_mask = target != ignore_index
    safe_target = torch.where(ignore_mask, target, 0)
    result = -torch.gather(logp, 1, safe_target.unsqueeze(1)).squeeze(1)
    result = torch.where(ignore_mask, result, 0.0)
    total_weight = ignore_mask.sum().to(result.dtype)
    return result.sum() / total_weight  # 0 / 0 = NaN when every label is ignored


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -100) -> torch.Tensor:
    num_classes = logits.shape[-1]
    # Fold (B, T, C) to (N, C). reshape, not view: the shifted logits[:, :-1] of next-token
    # training are not contiguous, and reshape copies exactly when it has to.
    logp = log_softmax(logits.float().reshape(-1, num_classes), dim=1)
    return _nll_loss_mean(logp, targets.reshape(-1), ignore_index)
