"""你直接在输入的 dtype（bf16 / fp16）里做 exp、求和和对数：bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字），
求和和对数会多出几个 ulp 的误差，交叉熵也跟着偏。先用 .float() 转成 fp32 计算，最后再转回输入的
dtype。
You take exp, the sum and the log in the input's dtype (bf16 / fp16): bf16 keeps only 8 significant
bits, so the sum and the log are several ulps off, and so is the cross-entropy. Convert to fp32 with
.float() first and convert back to the input's dtype at the end."""

import torch


def _lsm(x, dim):
    z = x - x.amax(dim, keepdim=True)
    return z - z.exp().sum(dim, keepdim=True).log()


def softmax(x, dim=-1):
    e = (x - x.amax(dim, keepdim=True)).exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(x, dim=-1):
    return _lsm(x, dim)


def cross_entropy(logits, targets, ignore_index=-100):
    logp = _lsm(logits, -1)
    keep = targets != ignore_index
    nll = -logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    return (nll.sum() / keep.sum()).float()
