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


def _moe64(xd, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob):
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
    return y, logits


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    y, logits = _moe64(x.double(), router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob)
    return y.to(x.dtype), logits.float()


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
    xd = x.double().reshape(-1, x.shape[-1])
    routed, logits = _moe64(xd, router_weight, gate_up_proj, down_proj, top_k, True)
    shared = (
        F.silu(xd @ shared_gate_proj.double().T) * (xd @ shared_up_proj.double().T)
    ) @ shared_down_proj.double().T
    y = routed + torch.sigmoid(xd @ shared_expert_gate.double().T) * shared
    return y.reshape(x.shape).to(x.dtype), logits.float()
