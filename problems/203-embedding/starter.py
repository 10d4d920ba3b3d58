import torch
import torch.nn as nn


class TiedEmbedding(nn.Module):
    """词嵌入表，它的矩阵同时是 LM head。
    A token embedding whose matrix is also the LM head.

    参数：weight: (vocab_size, dim)，fp32，初始化为 N(0, 0.02²)
    Parameter: weight: (vocab_size, dim), fp32, initialised from N(0, 0.02²)
    """

    def __init__(self, vocab_size, dim):
        super().__init__()
        # TODO: 创建唯一的参数 weight，并用均值 0、标准差 0.02 的正态分布初始化
        # TODO: create the only parameter, `weight`, drawn from a normal with mean 0, std 0.02
        raise NotImplementedError

    def embed(self, ids):
        """ids: 任意形状的 int64 张量，取值在 [0, vocab_size) 中，否则抛出异常。
        返回 weight 中对应的行，形状 ids.shape + (dim,)，dtype 与 weight 相同。

        ids: int64 tensor of any shape with values in [0, vocab_size); anything else raises.
        Returns the matching rows of weight, shape ids.shape + (dim,), in weight's dtype.
        """
        raise NotImplementedError

    def logits(self, h):
        """h: (..., dim)。返回 h @ weight.T，形状 (..., vocab_size)，在 fp32 中计算并返回 fp32。

        h: (..., dim). Returns h @ weight.T, shape (..., vocab_size), computed and returned in fp32.
        """
        raise NotImplementedError
