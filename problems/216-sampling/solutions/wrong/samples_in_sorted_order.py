"""抽样的分布是对的，但你在按概率排好序的数组上调用了 multinomial，再把下标映射回去；本题规定按词表顺序抽：torch.multinomial(softmax(filtered), 1, generator=generator)，这样同一个种子才得到同一串 token。filter_logits 已经把要去掉的 token 设成了 -inf，不需要再排序。
Your draws have the right distribution, but you call multinomial on the probabilities sorted by size and map the index back; this problem draws in vocab order, torch.multinomial(softmax(filtered), 1, generator=generator), so that one seed gives one sequence of tokens. filter_logits has already set removed tokens to -inf: no need to sort again."""

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
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    pick = torch.multinomial(sorted_probs, 1, generator=generator)
    return order.gather(-1, pick).squeeze(-1)
