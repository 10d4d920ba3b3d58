"""The reference's dispatch loop computed in float64, rounded once at the end.

The farthest a correct answer should drift from the fp32 reference: weights and logits are
rounded to fp32 and y to x's dtype only after everything else.
"""

import torch
import torch.nn.functional as F


def _route64(logits64, top_k, norm_topk_prob):
    probs = F.softmax(logits64, dim=-1)
    weights, experts = probs.topk(top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(-1, keepdim=True)
    return weights, experts


def route(router_logits, top_k, norm_topk_prob=True):
    weights, experts = _route64(router_logits.double(), top_k, norm_topk_prob)
    return weights.float(), experts


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    xd = x.double()
    logits = xd @ router_weight.double().T
    weights, experts = _route64(logits, top_k, norm_topk_prob)
    inter = down_proj.shape[-1]
    y = xd.new_zeros(xd.shape)
    for e in range(router_weight.shape[0]):
        rows, slots = torch.where(experts == e)
        if rows.numel() == 0:
            continue
        g, u = (xd[rows] @ gate_up_proj[e].double().T).split(inter, dim=-1)
        out = (F.silu(g) * u) @ down_proj[e].double().T
        y = y.index_add(0, rows, out * weights[rows, slots, None])
    return y.to(x.dtype), logits.float()
