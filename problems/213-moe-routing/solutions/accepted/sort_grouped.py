"""Routing by sorting the probabilities; dispatch by sorting the (token, slot) pairs by expert.

The pairs are grouped into contiguous runs, one per expert (the layout grouped-GEMM kernels
use), each run goes through its expert once, and the results are put back in (token, slot)
order and summed over the slots.
"""

import torch


def route(router_logits, top_k, norm_topk_prob=True):
    logits = router_logits.to(torch.float32)
    probs = torch.exp(logits - logits.amax(dim=-1, keepdim=True))
    probs = probs / probs.sum(dim=-1, keepdim=True)
    order = torch.argsort(probs, dim=-1, descending=True)[:, :top_k]
    weights = torch.gather(probs, 1, order)
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, order


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    tokens, dim = x.shape
    n_experts = router_weight.shape[0]
    xf = x.to(torch.float32)
    router_logits = torch.matmul(xf, router_weight.to(torch.float32).transpose(0, 1))
    weights, experts = route(router_logits, top_k, norm_topk_prob)

    flat_experts = experts.reshape(-1)  # pair p = token * top_k + slot
    perm = torch.argsort(flat_experts, stable=True)
    counts = torch.bincount(flat_experts, minlength=n_experts).tolist()
    grouped_x = xf[perm // top_k]

    outputs = []
    for e, chunk in enumerate(torch.split(grouped_x, counts)):
        if chunk.shape[0] == 0:
            continue
        gate, up = (chunk @ gate_up_proj[e].to(torch.float32).T).chunk(2, dim=-1)
        outputs.append((torch.sigmoid(gate) * gate * up) @ down_proj[e].to(torch.float32).T)
    grouped_out = torch.cat(outputs, dim=0)

    per_pair = torch.empty_like(grouped_out)
    per_pair[perm] = grouped_out  # back to (token, slot) order
    per_pair = per_pair.view(tokens, top_k, dim) * weights.unsqueeze(-1)
    return per_pair.sum(dim=1).to(x.dtype), router_logits


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
    xf = x.to(torch.float32).reshape(-1, x.shape[-1])
    routed, router_logits = moe_forward(xf, router_weight, gate_up_proj, down_proj, top_k)
    gate = torch.matmul(xf, shared_gate_proj.to(torch.float32).T)
    up = torch.matmul(xf, shared_up_proj.to(torch.float32).T)
    shared = torch.matmul(torch.sigmoid(gate) * gate * up, shared_down_proj.to(torch.float32).T)
    y = torch.addcmul(routed, torch.sigmoid(torch.matmul(xf, shared_expert_gate.to(torch.float32).T)), shared)
    return y.reshape(x.shape).to(x.dtype), router_logits
