"""返回的 k 个专家要按权重从大到小排列（torch.topk 默认 sorted=True 就是这个顺序）。你按专家编号重新排了序：MoE 的输出不变，但 weights[:, 0] 不再是每个 token 最主要的专家，依赖这个顺序的代码（统计、容量截断）会出错。
Return the k experts sorted by weight, largest first (the order torch.topk gives with its default sorted=True). You re-sorted them by expert id: the mixture's output is unchanged, but weights[:, 0] is no longer each token's main expert, and code that relies on that order (statistics, capacity limits) goes wrong."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    probs = F.softmax(router_logits.float(), dim=-1)
    weights, experts = torch.topk(probs, top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    experts, order = torch.sort(experts, dim=-1)
    return torch.gather(weights, 1, order), experts


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    xf = x.float()
    router_logits = xf @ router_weight.float().t()
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        gate, up = h[:, :inter], h[:, inter:]
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
