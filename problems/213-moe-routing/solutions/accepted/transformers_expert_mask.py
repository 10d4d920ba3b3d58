"""In the style of transformers' sparse MoE blocks (Qwen3MoeSparseMoeBlock, Qwen3_5MoeExperts):
the router is `F.linear`, the routing a softmax then topk, the dispatch a one-hot expert mask of
shape (n_experts, top_k, tokens) whose hit experts are looped over, `torch.where` giving each
expert's (slot, token) pairs, `gate_up_proj[e]` split with `chunk(2)`, and `index_add_` into a
zero buffer. Everything in fp32, y rounded to x's dtype once."""

import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    routing_weights = F.softmax(router_logits, dim=-1, dtype=torch.float)
    routing_weights, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    if norm_topk_prob:
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
    return routing_weights, selected_experts


def _experts(hidden_states, top_k_index, top_k_weights, gate_up_proj, down_proj):
    """Qwen3_5MoeExperts.forward: only the experts some token was routed to run, each once."""
    num_experts = gate_up_proj.shape[0]
    final_hidden_states = torch.zeros_like(hidden_states)
    expert_mask = F.one_hot(top_k_index, num_classes=num_experts).permute(2, 1, 0)  # (E, k, T)
    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in expert_hit:
        expert_idx = expert_idx[0]
        top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
        current_state = hidden_states[token_idx]
        gate, up = F.linear(current_state, gate_up_proj[expert_idx].float()).chunk(2, dim=-1)
        current_hidden_states = F.silu(gate) * up
        current_hidden_states = F.linear(current_hidden_states, down_proj[expert_idx].float())
        current_hidden_states = current_hidden_states * top_k_weights[token_idx, top_k_pos, None]
        final_hidden_states.index_add_(0, token_idx, current_hidden_states)
    return final_hidden_states


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    hidden_states = x.float()
    router_logits = F.linear(hidden_states, router_weight.float())
    routing_weights, selected_experts = route(router_logits, top_k, norm_topk_prob)
    y = _experts(hidden_states, selected_experts, routing_weights, gate_up_proj, down_proj)
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
    """Qwen3_5MoeSparseMoeBlock.forward, with the shared expert as Qwen3_5MLP."""
    hidden_dim = x.shape[-1]
    hidden_states = x.reshape(-1, hidden_dim).float()
    expert_output, router_logits = moe_forward(hidden_states, router_weight, gate_up_proj, down_proj, top_k)
    shared_expert_output = F.linear(
        F.silu(F.linear(hidden_states, shared_gate_proj.float()))
        * F.linear(hidden_states, shared_up_proj.float()),
        shared_down_proj.float(),
    )
    shared_expert_output = (
        F.sigmoid(F.linear(hidden_states, shared_expert_gate.float())) * shared_expert_output
    )
    expert_output = expert_output + shared_expert_output
    return expert_output.reshape(x.shape).to(x.dtype), router_logits
