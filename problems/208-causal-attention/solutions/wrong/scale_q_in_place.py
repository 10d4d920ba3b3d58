"""你原地修改了调用者的 q（q.mul_、q *= ... 之类）。对 fp32 输入，q.float() 返回的就是同一个张量，不是副本，所以原地缩放改掉了调用者手里的 q：同一个 q 再用一次（比如多次调用、或者 KV cache 里保存的张量）结果就错了；需要梯度的叶子张量上还会直接报错。用不修改输入的写法：q = q.float() * scale。
You modify the caller's q in place (q.mul_, q *= ...). For fp32 input, q.float() returns the very same tensor, not a copy, so scaling it in place changes the caller's q: reuse that q (a second call, a tensor kept in a KV cache) and the result is wrong; on a leaf tensor that requires grad it even raises. Use an out-of-place form: q = q.float() * scale."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    qf = q.float()
    qf *= 1.0 / math.sqrt(head_dim)
    scores = qf @ k.float().transpose(-2, -1)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    m = scores.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = (scores - m).exp()
    s = p.sum(-1, keepdim=True)
    p = p / torch.where(s > 0, s, torch.ones_like(s))
    return (p @ v.float()).to(q.dtype)
