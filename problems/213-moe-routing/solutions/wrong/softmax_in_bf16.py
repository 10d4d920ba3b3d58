"""路由要在 fp32 中计算：先把 x 和 router_weight（或 router_logits）转成 fp32，再算 logits 和 softmax。在 bf16 里算，概率只有 8 位有效二进制位（约 2～3 位十进制有效数字），权重会差 0.1%～1%，接近的专家甚至可能选错；返回的权重应是 fp32。
Route in fp32: convert x and router_weight (or router_logits) to fp32 before the logits and the softmax. In bf16 the probabilities keep 8 significant bits, weights are off by 0.1% to 1% and close experts may even be swapped; the weights you return should be fp32."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    probs = F.softmax(router_logits, dim=-1)  # in the logits' own dtype
    weights, experts = torch.topk(probs, top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights.float(), experts


def _routed(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob):
    router_logits = x @ router_weight.t()  # in x's dtype
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    xf = x.float()
    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        gate, up = h[:, :inter], h[:, inter:]
        out = (F.silu(gate) * up) @ down_proj[e].float().t()
        y.index_add_(0, token_idx, out * weights[token_idx, slot].unsqueeze(-1))
    return y, router_logits.float()


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    y, router_logits = _routed(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob)
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
    x2 = x.reshape(-1, x.shape[-1])
    routed, router_logits = _routed(x2, router_weight, gate_up_proj, down_proj, top_k, True)
    xf = x2.float()
    shared = (
        F.silu(xf @ shared_gate_proj.float().t()) * (xf @ shared_up_proj.float().t())
    ) @ shared_down_proj.float().t()
    y = routed + torch.sigmoid(xf @ shared_expert_gate.float().t()) * shared
    return y.reshape(x.shape).to(x.dtype), router_logits
