"""输出要累加到一个新张量里（torch.zeros_like(x, dtype=torch.float32) 之类），不能借用 x 的存储：你把 x 清零后用 index_add_ 原地累加，调用者手里的 x 被改成了输出（残差连接 x + moe(x) 随之出错），x 需要梯度时还会直接报错。
Accumulate the output in a new tensor (torch.zeros_like(x, dtype=torch.float32) or similar), not in x's storage: you zeroed x and index_add_-ed into it, so the caller's x now holds the output (which breaks the residual x + moe(x)), and when x requires grad it raises instead."""

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
    inter = down_proj.shape[-1]
    results = []
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        out = (F.silu(h[:, :inter]) * h[:, inter:]) @ down_proj[e].float().t()
        results.append((token_idx, out * weights[token_idx, slot].unsqueeze(-1)))
    y = x.zero_()  # reuse x's buffer: the inputs are no longer needed
    for token_idx, out in results:
        y.index_add_(0, token_idx, out.to(y.dtype))
    return y, router_logits


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
