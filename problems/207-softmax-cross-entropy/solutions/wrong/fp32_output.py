"""你的 softmax / log_softmax 对 bf16 或 fp16 输入返回了 fp32：内部用 fp32 计算是对的，但最后要用
.to(x.dtype) 转回输入的 dtype。
Your softmax / log_softmax return fp32 for bf16 or fp16 input: computing in fp32 inside is right, but
convert back to the input's dtype at the end with .to(x.dtype)."""

import torch


def _lsm(x, dim):
    xf = x.float()
    z = xf - xf.amax(dim, keepdim=True)
    return z - z.exp().sum(dim, keepdim=True).log()


def softmax(x, dim=-1):
    return _lsm(x, dim).exp()


def log_softmax(x, dim=-1):
    return _lsm(x, dim)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    return torch.where(keep, nll, 0.0).sum() / keep.sum()
