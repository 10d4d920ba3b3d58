import torch


def gated_delta_rule(q, k, v, g, beta, initial_state=None):
    """门控 Delta 规则的递归形式。
    The gated delta rule, recurrent form.

    q, k: (batch, heads, seq, d_k)；v: (batch, heads, seq, d_v)；
    g: (batch, heads, seq)，衰减的对数（衰减 = exp(g)，g <= 0）；beta: (batch, heads, seq)，取值在 (0, 1)；
    initial_state: (batch, heads, d_k, d_v) 或 None（None 表示全零）。
    q, k: (batch, heads, seq, d_k); v: (batch, heads, seq, d_v);
    g: (batch, heads, seq), the log of the decay (decay = exp(g), g <= 0); beta: (batch, heads, seq) in (0, 1);
    initial_state: (batch, heads, d_k, d_v) or None (zeros).

    返回 (o, final_state)：o 形状 (batch, heads, seq, d_v)、dtype 同 v；final_state 为 fp32，
    形状 (batch, heads, d_k, d_v)。
    Returns (o, final_state): o of shape (batch, heads, seq, d_v) in v's dtype; final_state in fp32,
    shape (batch, heads, d_k, d_v).
    seq 可以为 0：o 为空，final_state 是 fp32 的 initial_state（None 时为全零）。
    seq may be 0: o is empty and final_state is initial_state in fp32 (zeros when None).
    """
    # TODO: 在 fp32 中计算；q、k 沿 d_k 做 L2 归一化：x / sqrt(sum(x^2) + 1e-6)，q 再乘 1/sqrt(d_k)
    # TODO: compute in fp32; L2-normalise q and k over d_k: x / sqrt(sum(x^2) + 1e-6); scale q by 1/sqrt(d_k)
    # TODO: 对每个 t：S = exp(g_t) S；S = S + k_t ⊗ (beta_t (v_t - S^T k_t))；o_t = S^T q_t
    # TODO: for each t: S = exp(g_t) S; S = S + k_t ⊗ (beta_t (v_t - S^T k_t)); o_t = S^T q_t
    raise NotImplementedError
