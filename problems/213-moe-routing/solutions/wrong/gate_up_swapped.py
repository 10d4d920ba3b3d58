"""gate_up_proj[e] 的前一半行（前 inter 行）是 gate，后一半是 up：h = silu(x·W_gateᵀ) * (x·W_upᵀ)。你把两半弄反了，silu 作用在了 up 上。
The first half of gate_up_proj[e]'s rows (the first inter rows) is the gate and the second half is up: h = silu(x·W_gateᵀ) * (x·W_upᵀ). You swapped the halves, so silu is applied to up."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    probs = F.softmax(router_logits.float(), dim=-1)
    weights, experts = torch.topk(probs, top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, experts


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    xf = x.float()
    router_logits = xf @ router_weight.float().t()
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        up, gate = (xf[token_idx] @ gate_up_proj[e].float().t()).chunk(2, dim=-1)
        out = (F.silu(gate) * up) @ down_proj[e].float().t()
        y.index_add_(0, token_idx, out * weights[token_idx, slot].unsqueeze(-1))
    return y.to(x.dtype), router_logits
