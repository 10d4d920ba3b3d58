import torch
import torch.nn.functional as F


def route(router_logits, top_k, norm_topk_prob=True):
    """top-k softmax 路由。
    Top-k softmax routing.

    router_logits: (tokens, n_experts)，任意浮点 dtype
    返回 (weights, experts)：
      weights: (tokens, top_k) fp32，按权重从大到小
      experts: (tokens, top_k) int64，对应的专家编号

    router_logits: (tokens, n_experts), any float dtype
    Returns (weights, experts):
      weights: (tokens, top_k) fp32, sorted from the largest down
      experts: (tokens, top_k) int64, the matching expert ids
    """
    # TODO: 在 fp32 中对所有专家做 softmax，取 top-k；norm_topk_prob 时让 k 个权重之和为 1
    # TODO: softmax over all experts in fp32, take the top k; renormalise them if norm_topk_prob
    raise NotImplementedError


def moe_forward(x, router_weight, gate_up_proj, down_proj, top_k, norm_topk_prob=True):
    """混合专家层的前向。
    The forward pass of a mixture-of-experts layer.

    x:             (tokens, dim)
    router_weight: (n_experts, dim)            logits = x @ router_weightᵀ
    gate_up_proj:  (n_experts, 2 * inter, dim) 前 inter 行是 gate，后 inter 行是 up
                                               the first inter rows are the gate, the next inter the up
    down_proj:     (n_experts, dim, inter)
    返回 (y, router_logits)：y 为 (tokens, dim)，dtype 与 x 相同；router_logits 为 (tokens, n_experts) fp32。
    Returns (y, router_logits): y of shape (tokens, dim) in x's dtype; router_logits (tokens, n_experts) fp32.
    """
    # TODO: 路由；把分给每个专家的 token 收集起来，每个专家只跑一次；按路由权重加权累加
    # TODO: route; gather each expert's tokens and run the expert once on them; add up weighted
    raise NotImplementedError


def moe_block(
    x, router_weight, gate_up_proj, down_proj, shared_gate_proj, shared_up_proj, shared_down_proj, shared_expert_gate, top_k
):
    """Qwen3.5-MoE 的稀疏 MoE 块：路由专家（moe_forward，总是重新归一化）加上带 sigmoid 门的共享专家。
    Qwen3.5-MoE's sparse MoE block: the routed experts (moe_forward, always renormalised) plus a
    shared expert with a sigmoid gate.

    x:                  (..., dim)，例如 (batch, seq, dim)
                        (..., dim), e.g. (batch, seq, dim)
    router_weight, gate_up_proj, down_proj: 同 moe_forward
                                            as in moe_forward
    shared_gate_proj:   (shared_inter, dim)
    shared_up_proj:     (shared_inter, dim)
    shared_down_proj:   (dim, shared_inter)
    shared_expert_gate: (1, dim)
    返回 (y, router_logits)：y 的形状与 dtype 同 x；router_logits 为 (tokens, n_experts) fp32，
    tokens = x 除最后一维外各维之积。
    Returns (y, router_logits): y in x's shape and dtype; router_logits (tokens, n_experts) fp32,
    tokens = the product of x's leading sizes.
    """
    # TODO: 把 x 展平成 (tokens, dim) 的 fp32；路由专家之和 + sigmoid(x·w_gateᵀ) * 共享专家(x)；最后转回 x 的形状和 dtype
    # TODO: flatten x to (tokens, dim) in fp32; routed sum + sigmoid(x·w_gateᵀ) * shared_expert(x); back to x's shape and dtype
    raise NotImplementedError
