"""temperature = 0 时你仍然去抽样（把温度换成一个很小的数再调用 multinomial）。结果虽然也是最大的 token，却消耗了 generator 里的随机数，之后用同一个 generator 的抽样全都变了；遇到并列的最大值时也不一定取下标最小的那个。temperature == 0 时直接返回 torch.argmax(logits, dim=-1)，不碰 generator。
With temperature 0 you still sample (a tiny temperature, then multinomial). The token is the top one, but the draw uses up random numbers from the generator, so every later draw from it changes, and tied maxima need not resolve to the lowest index. For temperature == 0, return torch.argmax(logits, dim=-1) and leave the generator alone."""

import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
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
    temperature = max(temperature, 1e-5)  # "avoid dividing by zero"
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
