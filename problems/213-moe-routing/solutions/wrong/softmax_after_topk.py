"""你先在 logits 上取 top-k，再只对这 k 个 logits 做 softmax：这等于总是重新归一化，norm_topk_prob=False 时就错了。应先对全部专家做 softmax，取 top-k，只有 norm_topk_prob=True 时才除以这 k 个概率的和。
You took the top-k logits and applied softmax to those k alone: that always renormalises, which is wrong when norm_topk_prob=False. Apply softmax over all experts first, take the top k, and divide by their sum only when norm_topk_prob=True."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    top_logits, experts = torch.topk(router_logits.float(), top_k, dim=-1)
    return F.softmax(top_logits, dim=-1), experts


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
