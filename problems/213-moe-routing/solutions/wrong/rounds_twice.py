"""y 只能在最后转回 x 的 dtype 一次。你用 bf16 的 x 调用 moe_forward，它把路由专家之和先舍入成 bf16，加上共享专家后又舍入一次：
两次舍入在 bf16 中使不少元素偏差 1 个以上的最小单位（ulp）。把 x 先转成 fp32 再调用 moe_forward（它返回的 y 就是 fp32），相加之后再转回。
y is rounded to x's dtype once, at the end. You called moe_forward on the bf16 x, which rounds the routed
sum to bf16, then added the shared expert and rounded again: in bf16 those two roundings move many
elements by a unit in the last place (ulp) or more. Convert x to fp32 before calling moe_forward (its y
is then fp32), add, and convert back once."""

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
    # Every token of every sequence is one row.
    xf = x.reshape(-1, x.shape[-1]).float()
    # moe_forward on x in its own dtype: the routed sum comes back already rounded to it.
    routed, router_logits = moe_forward(
        x.reshape(-1, x.shape[-1]), router_weight, gate_up_proj, down_proj, top_k
    )
    routed = routed.float()
    # The shared expert: one SwiGLU MLP that every token goes through, whatever the router chose.
    gate = F.silu(xf @ shared_gate_proj.float().t())
    up = xf @ shared_up_proj.float().t()
    shared = (gate * up) @ shared_down_proj.float().t()
    # Its gate: one sigmoid per token, a (tokens, 1) column, independent of the routing weights.
    shared_weight = torch.sigmoid(xf @ shared_expert_gate.float().t())
    y = routed + shared_weight * shared
    return y.reshape(x.shape).to(x.dtype), router_logits
