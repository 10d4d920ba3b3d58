import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """温度、top-k、top-p 过滤。
    Temperature, top-k and top-p filtering.

    logits: (batch, vocab)，任意浮点 dtype
    temperature: > 0；<= 0 时抛出 ValueError
    top_k: 0（或 >= vocab）表示不做 top-k
    top_p: 1.0 表示不做 top-p

    logits: (batch, vocab), any float dtype
    temperature: > 0; <= 0 raises ValueError
    top_k: 0 (or >= vocab) turns top-k off
    top_p: 1.0 turns top-p off

    返回 fp32 的 logits / temperature，被去掉的 token 为 -inf，形状 (batch, vocab)。不要修改传入的 logits。
    Returns fp32 logits / temperature with removed tokens at -inf, shape (batch, vocab).
    Do not modify the logits you are given.
    """
    # TODO: 1. 转 fp32 并除以温度
    # TODO: 1. convert to fp32 and divide by the temperature
    # TODO: 2. top-k：去掉小于第 k 大的值的 token
    # TODO: 2. top-k: remove the tokens below the k-th largest value
    # TODO: 3. top-p：对剩下的重新 softmax，保留前面累计概率 < p 的 token，与最后保留的并列的也保留
    # TODO: 3. top-p on the renormalised rest: keep the tokens whose preceding cumulative
    #          probability is < p; tokens tied with the last one kept stay too
    raise NotImplementedError


def sample(logits, generator, temperature=1.0, top_k=0, top_p=1.0):
    """从过滤后的分布中每行抽一个 token。
    Draw one token per row from the filtered distribution.

    temperature == 0：返回 argmax（第一个最大值），不使用 generator；temperature < 0 抛出 ValueError。
    否则：torch.multinomial(softmax(filter_logits(...)), 1, generator=generator)，按词表顺序。
    temperature == 0: return the argmax (first maximum) without touching the generator;
    temperature < 0 raises ValueError.
    Otherwise: torch.multinomial(softmax(filter_logits(...)), 1, generator=generator), in vocab order.

    返回 int64 的 token id，形状 (batch,)。
    Returns int64 token ids of shape (batch,).
    """
    raise NotImplementedError
