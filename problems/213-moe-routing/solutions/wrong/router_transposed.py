"""router_weight 的形状是 (n_experts, dim)，每一行是一个专家的方向：logits = x @ router_weightᵀ（即 F.linear(x, router_weight)）。你用了 x @ router_weight，把它当成了 (dim, n_experts)；dim 与专家数不同时会直接报形状错误，相同时则悄悄算出错误的路由。
router_weight has shape (n_experts, dim), one row per expert: logits = x @ router_weightᵀ (that is, F.linear(x, router_weight)). You computed x @ router_weight as if it were (dim, n_experts); when dim differs from the number of experts that fails with a shape error, and when they are equal it silently routes wrongly."""

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
    router_logits = xf @ router_weight.float()
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        out = (F.silu(h[:, :inter]) * h[:, inter:]) @ down_proj[e].float().t()
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
