"""Qwen3.5-MoE 的块不只是路由专家：每个 token 还要经过一个共享专家（一个 SwiGLU MLP），乘上 sigmoid(x·w_gateᵀ) 后加到路由专家之和上。
你只返回了路由专家的结果（moe_forward），共享专家没加。
Qwen3.5-MoE's block is more than the routed experts: every token also goes through a shared expert (a
SwiGLU MLP), whose output, scaled by sigmoid(x·w_gateᵀ), is added to the routed sum. You returned the
routed experts alone (moe_forward) without the shared expert."""

import torch
import torch.nn.functional as F


def route(router_logits: torch.Tensor, top_k: int, norm_topk_prob: bool = True):
    # Softmax over all experts in fp32, whatever the logits' dtype.
    probs = F.softmax(router_logits.float(), dim=-1)
    # torch.topk returns the k largest, sorted from the largest down.
    weights, experts = torch.topk(probs, top_k, dim=-1)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, experts


def moe_forward(
    x: torch.Tensor,
    router_weight: torch.Tensor,
    gate_up_proj: torch.Tensor,
    down_proj: torch.Tensor,
    top_k: int,
    norm_topk_prob: bool = True,
):
    # Everything in fp32; only y goes back to x's dtype at the very end.
    xf = x.float()
    router_logits = xf @ router_weight.float().t()
    weights, experts = route(router_logits, top_k, norm_topk_prob)

    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)  # a new buffer: never accumulate into x
    for e in torch.unique(experts).tolist():  # only the experts that received tokens
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()  # (n_e, 2 * inter)
        gate, up = h[:, :inter], h[:, inter:]  # first half gate, second half up
        out = (F.silu(gate) * up) @ down_proj[e].float().t()  # (n_e, dim)
        y.index_add_(0, token_idx, out * weights[token_idx, slot].unsqueeze(-1))
    return y.to(x.dtype), router_logits


def moe_block(
    x: torch.Tensor,
    router_weight: torch.Tensor,
    gate_up_proj: torch.Tensor,
    down_proj: torch.Tensor,
    shared_gate_proj: torch.Tensor,
    shared_up_proj: torch.Tensor,
    shared_down_proj: torch.Tensor,
    shared_expert_gate: torch.Tensor,
    top_k: int,
):
    # Every token of every sequence is one row, in fp32.
    xf = x.reshape(-1, x.shape[-1]).float()
    # Qwen3.5-MoE's router always renormalises its top k.
    routed, router_logits = moe_forward(xf, router_weight, gate_up_proj, down_proj, top_k)
    # Only the routed experts: the shared expert is never computed.
    return routed.reshape(x.shape).to(x.dtype), router_logits
