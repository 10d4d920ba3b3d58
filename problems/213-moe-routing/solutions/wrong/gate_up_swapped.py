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


def moe_block(
    x,
    router_weight,
    gate_up_proj,
    down_proj,
    shared_gate_proj,
    shared_up_proj,
    shared_down_proj,
    shared_expert_gate,
    top_k,
):
    xf = x.reshape(-1, x.shape[-1]).float()
    routed, router_logits = moe_forward(xf, router_weight, gate_up_proj, down_proj, top_k)
    shared = (
        F.silu(xf @ shared_gate_proj.float().t()) * (xf @ shared_up_proj.float().t())
    ) @ shared_down_proj.float().t()
    y = routed + torch.sigmoid(xf @ shared_expert_gate.float().t()) * shared
    return y.reshape(x.shape).to(x.dtype), router_logits
