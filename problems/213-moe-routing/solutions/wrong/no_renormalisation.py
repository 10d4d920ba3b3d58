"""norm_topk_prob=True 时，要把选出的 k 个概率再除以它们的和，使每个 token 的权重之和为 1。你直接用了对全部专家做 softmax 得到的概率（或忽略了 norm_topk_prob），这 k 个权重加起来小于 1，MoE 的输出整体被缩小。
With norm_topk_prob=True, divide the k chosen probabilities by their sum so that each token's weights add up to 1. You kept the probabilities of the softmax over all experts (or ignored norm_topk_prob); those k weights sum to less than 1 and shrink the mixture's output."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    probs = F.softmax(router_logits.float(), dim=-1)
    return torch.topk(probs, top_k, dim=-1)


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
