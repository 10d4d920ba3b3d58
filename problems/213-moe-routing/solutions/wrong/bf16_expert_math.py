"""本题的约定是：x 和所有权重先转成 fp32，路由、专家计算和加权求和都在 fp32 中完成，最后只把 y 转回 x 的 dtype 一次。你在 bf16 里算了 logits、专家的矩阵乘和累加，每一步都舍入到 8 位有效二进制位（约 2～3 位十进制有效数字），y 有七成元素偏离，router_logits 也不对。
This problem's rule: convert x and every weight to fp32, do the routing, the experts and the weighted sum in fp32, and round y back to x's dtype once at the end. You computed the logits, the experts' matrix products and the sum in bf16, rounding to 8 significant bits at every step: about 70% of y's elements move, and router_logits are off too."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    probs = F.softmax(router_logits, dim=-1, dtype=torch.float32)
    weights, experts = torch.topk(probs, top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, experts


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    router_logits = F.linear(x, router_weight)
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    weights = weights.to(x.dtype)
    y = torch.zeros_like(x)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        gate, up = F.linear(x[token_idx], gate_up_proj[e]).chunk(2, dim=-1)
        out = F.linear(F.silu(gate) * up, down_proj[e])
        y.index_add_(0, token_idx, out * weights[token_idx, slot, None])
    return y, router_logits.float()


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
    x2 = x.reshape(-1, x.shape[-1])
    routed, router_logits = moe_forward(x2, router_weight, gate_up_proj, down_proj, top_k)
    shared = F.linear(F.silu(F.linear(x2, shared_gate_proj)) * F.linear(x2, shared_up_proj), shared_down_proj)
    y = routed + torch.sigmoid(F.linear(x2, shared_expert_gate)) * shared
    return y.reshape(x.shape), router_logits
