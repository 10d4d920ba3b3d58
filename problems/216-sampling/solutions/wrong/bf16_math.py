"""你在 logits 自己的 dtype（bf16）里做了除法、softmax 和累加，最后才转 fp32。bf16 只有 8 位有效二进制位（约 2～3 位十进制有效数字）：除以温度就已经舍入了，softmax 和累计概率也会差到千分之几，top-p 的截断点随之移动。一开始就转 fp32：x = logits.float() / temperature。
You divide, softmax and accumulate in the logits' own dtype (bf16) and convert to fp32 only at the end. bf16 keeps 8 significant bits: dividing by the temperature already rounds, and softmax and the cumulative sums are off by a few parts in a thousand, which moves the top-p cut. Convert first: x = logits.float() / temperature."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits / temperature
    vocab = x.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(x, top_k, dim=-1).values[..., -1:]
        x = x.masked_fill(x < kth, float("-inf"))
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        sorted_probs = torch.sort(probs, dim=-1, descending=True).values
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        x = x.masked_fill(probs < sorted_probs.gather(-1, n_keep - 1), float("-inf"))
    return x.float()


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
