"""In the style of flash-linear-attention (FLA): the layer keeps every per-token tensor head-last,
(batch, seq, heads, dim), end to end, and the recurrence is a `fused_recurrent_gated_delta_rule`
with FLA's signature (`scale`, `initial_state`, `output_final_state`,
`use_qk_l2norm_in_kernel`), written here in torch: FLA's kernel loads each tile in fp32, so this
does the same. The conv is the part of problem 211; the gated norm is written out as FLA's
`FusedRMSNormGated` computes it (fp32 statistics, weight, silu gate)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from qwen.conv import causal_conv1d


def l2norm_fwd(x, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


def fused_recurrent_gated_delta_rule(
    q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False
):
    """q, k: (B, T, H, K); v: (B, T, H, V); g, beta: (B, T, H); initial_state: (B, H, K, V).
    Returns o (B, T, H, V) in v's dtype and the final state in fp32 (or None)."""
    B, T, H, K = k.shape
    V = v.shape[-1]
    out_dtype = v.dtype
    if scale is None:
        scale = K**-0.5
    q, k, v, g, beta = (t.float() for t in (q, k, v, g, beta))
    if use_qk_l2norm_in_kernel:
        q, k = l2norm_fwd(q), l2norm_fwd(k)
    q = q * scale
    # The kernel's running state b_h, one (K, V) tile per (batch, head); never the caller's tensor.
    h = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float().clone()
    o = q.new_empty(B, T, H, V)
    for t in range(T):
        h = h * g[:, t, :, None, None].exp()
        b_v = v[:, t] - torch.einsum("bhkv,bhk->bhv", h, k[:, t])
        b_v = b_v * beta[:, t, :, None]
        h = h + torch.einsum("bhk,bhv->bhkv", k[:, t], b_v)
        o[:, t] = torch.einsum("bhkv,bhk->bhv", h, q[:, t])
    return o.to(out_dtype), (h if output_final_state else None)


def rms_norm_gated(x, gate, weight, eps):
    """FLA's FusedRMSNormGated with the silu gate, over the last axis, statistics in fp32."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
    return (y * F.silu(gate.float())).to(x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x, g):
        return rms_norm_gated(x, g, self.weight, self.eps)


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads != 0:
            raise ValueError(f"num_v_heads={num_v_heads} is not a multiple of num_k_heads={num_k_heads}")
        self.num_heads, self.num_v_heads = num_k_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim, self.value_dim = num_k_heads * head_k_dim, num_v_heads * head_v_dim
        self.conv_size = conv_kernel_size
        conv_dim = 2 * self.key_dim + self.value_dim
        self.in_proj_qkv = nn.Linear(hidden_size, conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, conv_kernel_size, groups=conv_dim, bias=False)
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.norm = GatedRMSNorm(head_v_dim, eps=eps)
        self.out_proj = nn.Linear(self.value_dim, hidden_size, bias=False)

    def zero_state(self, batch_size):
        w = self.conv1d.weight
        conv_state = w.new_zeros(batch_size, w.shape[0], self.conv_size - 1)
        recurrent_state = torch.zeros(
            batch_size, self.num_v_heads, self.head_k_dim, self.head_v_dim, device=w.device
        )
        return conv_state, recurrent_state

    def forward(self, hidden_states, state=None):
        conv_state, recurrent_state = state if state is not None else (None, None)

        # ShortConvolution: channels first for the conv, back to (B, T, D) right after.
        mixed, conv_state = causal_conv1d(
            self.in_proj_qkv(hidden_states).transpose(1, 2),
            self.conv1d.weight[:, 0],
            initial_state=conv_state,
        )
        q, k, v = mixed.transpose(1, 2).split([self.key_dim, self.key_dim, self.value_dim], dim=-1)
        q = q.unflatten(-1, (self.num_heads, self.head_k_dim))
        k = k.unflatten(-1, (self.num_heads, self.head_k_dim))
        v = v.unflatten(-1, (self.num_v_heads, self.head_v_dim))
        # GVA as FLA writes it, repeat(q, 'b t h d -> b t (h g) d'): key head h, g times in a row.
        group = self.num_v_heads // self.num_heads
        if group > 1:
            q = q.unsqueeze(3).expand(-1, -1, -1, group, -1).flatten(2, 3)
            k = k.unsqueeze(3).expand(-1, -1, -1, group, -1).flatten(2, 3)

        beta = self.in_proj_b(hidden_states).sigmoid()
        g = -self.A_log.float().exp() * F.softplus(self.in_proj_a(hidden_states).float() + self.dt_bias)

        o, recurrent_state = fused_recurrent_gated_delta_rule(
            q,
            k,
            v,
            g,
            beta,
            initial_state=recurrent_state,
            output_final_state=True,
            use_qk_l2norm_in_kernel=True,
        )
        gate = self.in_proj_z(hidden_states).unflatten(-1, (self.num_v_heads, self.head_v_dim))
        o = self.norm(o, gate).flatten(2)
        y = self.out_proj(o)
        if state is None:
            return y
        return y, (conv_state, recurrent_state)
