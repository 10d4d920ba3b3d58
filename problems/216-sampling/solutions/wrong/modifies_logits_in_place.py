"""你原地修改了调用方的 logits：fp32 张量的 .float() 不会复制，之后的 /= 和 x[mask] = -inf 直接改写了传进来的张量，调用方下一步用到的 logits 已经被破坏。用不带下划线的运算（x = logits.float() / temperature、masked_fill）得到新张量。
You modify the caller's logits in place: .float() on an fp32 tensor does not copy, so the /= and x[mask] = -inf that follow overwrite the tensor you were given, and the caller's next use sees the damage. Use out-of-place operations (x = logits.float() / temperature, masked_fill) that return new tensors."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float()
    x /= temperature
    vocab = x.shape[-1]
    if 0 < top_k < vocab:
        kth = torch.topk(x, top_k, dim=-1).values[..., -1:]
        x[x < kth] = float("-inf")
    if top_p < 1.0:
        probs = torch.softmax(x, dim=-1)
        sorted_probs = torch.sort(probs, dim=-1, descending=True).values
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        n_keep = (before < top_p).sum(dim=-1, keepdim=True).clamp(min=1)
        x[probs < sorted_probs.gather(-1, n_keep - 1)] = float("-inf")
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
