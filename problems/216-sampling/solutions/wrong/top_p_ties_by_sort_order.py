"""top-p 的截断点落在几个概率相等的 token 中间时，你按排序给出的先后决定去留：排在前面的留下，其余的去掉。相等的值谁先谁后由排序实现决定（torch.sort 对相等的值不保证顺序），同样的 logits 换个实现就留下别的 token。本题规定：与最后保留的 token 概率相等的 token 全部保留。找到按"前面累计 < p"保留的最小概率 π*，再保留所有 π ≥ π* 的 token，而不是把排序后的掩码按下标散回去。
When the top-p cut falls inside a group of equally likely tokens, you let the sort's order decide: the tied tokens it put first stay, the others go. Which of equal values comes first is up to the sort (torch.sort does not promise an order for ties), so the same logits keep other tokens elsewhere. This problem keeps every token tied with the last one kept: find the smallest probability π* that "mass before < p" keeps, then keep every token with π ≥ π*, instead of scattering the sorted mask back by index."""

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
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
        cum = torch.cumsum(sorted_probs, dim=-1)
        drop_sorted = (cum - sorted_probs) >= top_p
        drop_sorted[..., 0] = False
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        x = x.masked_fill(drop, float("-inf"))
    return x


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
