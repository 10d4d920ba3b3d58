"""Accepted: Meta Llama's vocab-parallel embedding (fairscale / Megatron style) on a single shard.

Llama's reference model splits the table by vocabulary rows across model-parallel ranks: each
rank owns rows [vocab_start, vocab_end), masks the ids it does not own, looks up the rest and
all-reduces. With one rank the shard is the whole table; the mask then marks exactly the ids
out of range, which this problem must refuse instead of zeroing.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def vocab_range_from_global_vocab_size(global_vocab_size, rank, world_size):
    per_partition = global_vocab_size // world_size
    first = rank * per_partition
    return first, first + per_partition


class TiedEmbedding(nn.Module):
    def __init__(self, vocab_size, dim, rank=0, world_size=1):
        super().__init__()
        self.num_embeddings = vocab_size
        self.embedding_dim = dim
        self.vocab_start_index, self.vocab_end_index = vocab_range_from_global_vocab_size(
            vocab_size, rank, world_size
        )
        rows = self.vocab_end_index - self.vocab_start_index
        self.weight = nn.Parameter(torch.empty(rows, dim, dtype=torch.float32))
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def embed(self, ids):
        # Build the mask of ids this shard does not own.
        input_mask = (ids < self.vocab_start_index) | (ids >= self.vocab_end_index)
        if bool(input_mask.any()):
            # fairscale zeroes these rows and lets another rank fill them in; one shard owns
            # every valid id, so a masked id is out of range.
            raise IndexError(f"token ids must lie in [0, {self.num_embeddings})")
        masked_input = ids - self.vocab_start_index
        output_parallel = self.weight[masked_input.flatten()]
        # (reduce_from_model_parallel_region would sum the shards here: one shard, nothing to add.)
        return output_parallel.unflatten(0, ids.shape) if ids.dim() else output_parallel[0]

    def logits(self, h):
        # ColumnParallelLinear(dim, vocab, bias=False) whose weight is the embedding's own
        # Parameter; gather_from_model_parallel_region would concatenate the shards' columns.
        return F.linear(h.to(torch.float32), self.weight.to(torch.float32))
