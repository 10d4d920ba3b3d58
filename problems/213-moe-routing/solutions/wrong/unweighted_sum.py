"""每个专家的输出要先乘以它对这个 token 的路由权重再相加：y = Σ w_i · expert_i(x)。你把 k 个专家的输出直接相加了，权重没用上，输出大约放大了 k 倍，路由器也得不到梯度。
Multiply each expert's output by its routing weight for that token before adding: y = Σ w_i · expert_i(x). You added the k outputs without the weights, which makes the output about k times too large and leaves the router without a gradient."""

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
    _, experts = route(router_logits, top_k, norm_topk_prob)  # the weights go unused
    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, _ = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        out = (F.silu(h[:, :inter]) * h[:, inter:]) @ down_proj[e].float().t()
        y.index_add_(0, token_idx, out)
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
