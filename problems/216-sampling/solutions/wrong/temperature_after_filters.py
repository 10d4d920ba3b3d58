"""温度不为 1 并且有 top-p 时，你留下的 token 集合与参考不同（T < 1 时留得多，T > 1 时留得少），留下的值本身（logits / temperature）是对的：top-p 看的不是除以温度之后的分布。常见原因：温度用晚了，先在原始 logits 上做 top-k/top-p，最后才除以温度。温度会改变概率分布的形状（T < 1 更尖，T > 1 更平），top-p 应该看除以温度之后的分布：先 x = logits.float() / temperature，再过滤。
With top-p and a temperature other than 1 you keep a different set of tokens from the reference (more below 1, fewer above 1), while the values you keep (logits / temperature) are right: top-p did not see the tempered distribution. The usual cause: the temperature applied too late, top-k/top-p run on the raw logits and the division last. Temperature reshapes the distribution (sharper below 1, flatter above 1), and top-p must see the tempered one: x = logits.float() / temperature first, then filter."""

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
