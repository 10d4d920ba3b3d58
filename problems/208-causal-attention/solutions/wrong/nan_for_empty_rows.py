"""左填充时，填充位置上的查询能看到的键（0..i）全是填充，整行分数都是 -inf，softmax 得到 0/0 = NaN。NaN 会随着后面的层扩散到整个 batch。本题规定这样的行输出 0：减最大值时把 -inf 的行最大值换成 0，并在分母为 0 的地方除以 1（或最后把这些行置 0）。
With left padding, a query at a padded position can only see padding (keys 0..i), so its whole row of scores is -inf and the softmax gives 0/0 = NaN, which later layers spread through the batch. This problem defines such rows to output 0: when subtracting the row maximum, use 0 in place of a -inf maximum, and divide by 1 where the sum is 0 (or zero those rows at the end)."""

import math

import torch


def attention(q, k, v, padding_mask=None):
    seq, head_dim = q.shape[-2], q.shape[-1]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(head_dim)
    allowed = torch.ones(seq, seq, dtype=torch.bool).tril()
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :]
    scores = scores.masked_fill(~allowed, float("-inf"))
    p = torch.softmax(scores, dim=-1)
    return (p @ v.float()).to(q.dtype)
