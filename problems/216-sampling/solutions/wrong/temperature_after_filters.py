"""温度用晚了：你先在原始 logits 上做 top-k/top-p，最后才除以温度。温度会改变概率分布的形状（T < 1 更尖，T > 1 更平），top-p 应该看的是除以温度之后的分布：先 x = logits.float() / temperature，再过滤。
You apply the temperature too late: top-k/top-p run on the raw logits and the division comes last. Temperature reshapes the distribution (sharper below 1, flatter above 1), and top-p must see the tempered one: x = logits.float() / temperature first, then filter."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    x = logits.float()
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
    return x / temperature


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
