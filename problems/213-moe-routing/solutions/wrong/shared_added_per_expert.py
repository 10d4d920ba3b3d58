"""共享专家每个 token 只加一次。你把它放进了对路由专家的循环里，每选中一个专家就加一次 sigmoid 门乘共享专家，
top_k 个专家就加了 top_k 次。共享专家与路由无关：在循环之外对所有 token 算一次，加一次。
The shared expert is added once per token. You put it in the loop over the routed experts and added the
gated shared expert once per chosen expert, top_k times in all. The shared expert does not depend on the
routing: compute it once for all tokens, outside that loop, and add it once."""

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
    xf = x.reshape(-1, x.shape[-1]).float()
    router_logits = xf @ router_weight.float().t()
    weights, experts = route(router_logits, top_k)
    gate = F.silu(xf @ shared_gate_proj.float().t())
    up = xf @ shared_up_proj.float().t()
    shared = (gate * up) @ shared_down_proj.float().t()
    shared_weight = torch.sigmoid(xf @ shared_expert_gate.float().t())

    inter = down_proj.shape[-1]
    y = torch.zeros_like(xf)
    for e in torch.unique(experts).tolist():
        token_idx, slot = torch.nonzero(experts == e, as_tuple=True)
        h = xf[token_idx] @ gate_up_proj[e].float().t()
        out = (F.silu(h[:, :inter]) * h[:, inter:]) @ down_proj[e].float().t()
        # The shared expert folded into the dispatch: added again for every expert a token chose.
        out = out * weights[token_idx, slot].unsqueeze(-1) + shared_weight[token_idx] * shared[token_idx]
        y.index_add_(0, token_idx, out)
    return y.reshape(x.shape).to(x.dtype), router_logits
