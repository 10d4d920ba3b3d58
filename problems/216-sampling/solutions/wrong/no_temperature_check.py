"""filter_logits 收到 temperature <= 0 时没有报错，照样去除：除以 0 得到 ±inf 和 nan，负的温度把分布倒过来，最不可能的 token 变成了最可能的，调用方拿到的是一个看起来正常的张量。temperature = 0 的贪心只在 sample 里处理；filter_logits 要在一开始检查 if temperature <= 0: raise ValueError(...)，sample 收到负的温度时也就会抛出 ValueError。
filter_logits accepts a temperature <= 0 and divides anyway: dividing by 0 gives ±inf and nan, and a negative temperature turns the distribution upside down (the least likely token becomes the most likely), while the caller gets a tensor that looks normal. Greedy for temperature 0 belongs in sample only; filter_logits must check first, if temperature <= 0: raise ValueError(...), and sample then raises ValueError for a negative temperature too."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    x = logits.float() / temperature
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
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
