"""sigmoid 门只作用在共享专家上：y = Σ wᵢ·expertᵢ(x) + sigmoid(x·w_gateᵀ)·shared(x)。你把它乘在了路由专家与共享专家的和上，
路由专家的输出也被缩小了。先只给共享专家的输出乘门，再与路由专家之和相加。
The sigmoid gate scales the shared expert alone: y = Σ wᵢ·expertᵢ(x) + sigmoid(x·w_gateᵀ)·shared(x). You
applied it to the sum of the routed and the shared experts, which scales the routed experts down too.
Multiply the shared expert's output by the gate first, then add the routed sum."""

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
    # Every token of every sequence is one row. In fp32, so that moe_forward's y stays in fp32
    # too and y is rounded to x's dtype once, after the shared expert is added.
    xf = x.reshape(-1, x.shape[-1]).float()
    # Qwen3.5-MoE's router always renormalises its top k.
    routed, router_logits = moe_forward(xf, router_weight, gate_up_proj, down_proj, top_k)
    # The shared expert: one SwiGLU MLP that every token goes through, whatever the router chose.
    gate = F.silu(xf @ shared_gate_proj.float().t())
    up = xf @ shared_up_proj.float().t()
    shared = (gate * up) @ shared_down_proj.float().t()
    # Its gate: one sigmoid per token, a (tokens, 1) column, independent of the routing weights.
    shared_weight = torch.sigmoid(xf @ shared_expert_gate.float().t())
    y = shared_weight * (routed + shared)
    return y.reshape(x.shape).to(x.dtype), router_logits
