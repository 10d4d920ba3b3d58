"""The convolution in the API of the causal-conv1d package (Dao-AILab), as transformers calls it
when the package is installed: `causal_conv1d_fn(x, weight, bias, initial_states,
return_final_states, activation)` for a chunk, `causal_conv1d_update(x, conv_state, weight, bias,
activation)` for one decoded token, with the filters as a (dim, width) matrix. Both are written
here in torch. The package's update writes the conv state in place; this layer hands it a copy,
since the caller's state must stay as it was. The recurrence and the gated norm are the parts."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from qwen.delta_rule import gated_delta_rule
from qwen.norm import GatedRMSNorm


def causal_conv1d_fn(x, weight, bias=None, initial_states=None, return_final_states=False, activation=None):
    """x: (batch, dim, seqlen); weight: (dim, width); initial_states: (batch, dim, width - 1)."""
    dim, width = weight.shape
    if initial_states is None:
        initial_states = x.new_zeros(x.shape[0], dim, width - 1)
    padded = torch.cat([initial_states.to(x.dtype), x], dim=-1)
    out = F.conv1d(
        padded.float(), weight.float().unsqueeze(1), None if bias is None else bias.float(), groups=dim
    )
    if activation in ("silu", "swish"):
        out = F.silu(out)
    out = out.to(x.dtype)
    if return_final_states:
        return out, padded[..., padded.shape[-1] - (width - 1) :].clone()
    return out


def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None):
    """x: (batch, dim), one token; conv_state: (batch, dim, width - 1), shifted left in place and
    given x as its newest column, as the package does."""
    window = torch.cat([conv_state.to(x.dtype), x.unsqueeze(-1)], dim=-1)  # (batch, dim, width)
    out = (window.float() * weight.float()).sum(-1)
    if bias is not None:
        out = out + bias.float()
    if activation in ("silu", "swish"):
        out = F.silu(out)
    conv_state.copy_(window[..., 1:])
    return out.to(x.dtype)


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads:
            raise ValueError("num_v_heads must be a multiple of num_k_heads")
        self.num_k_heads, self.num_v_heads = num_k_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim, self.value_dim = num_k_heads * head_k_dim, num_v_heads * head_v_dim
        self.conv_kernel_size = conv_kernel_size
        self.conv_dim = 2 * self.key_dim + self.value_dim
        self.in_proj_qkv = nn.Linear(hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.conv1d = nn.Conv1d(
            self.conv_dim,
            self.conv_dim,
            conv_kernel_size,
            groups=self.conv_dim,
            padding=conv_kernel_size - 1,
            bias=False,
        )
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = GatedRMSNorm(head_v_dim, eps)
        self.out_proj = nn.Linear(self.value_dim, hidden_size, bias=False)

    def zero_state(self, batch_size):
        w = self.conv1d.weight
        return (
            w.new_zeros(batch_size, self.conv_dim, self.conv_kernel_size - 1),
            torch.zeros(batch_size, self.num_v_heads, self.head_k_dim, self.head_v_dim, device=w.device),
        )

    def forward(self, hidden_states, state=None):
        batch, seq_len, _ = hidden_states.shape
        conv_state, recurrent_state = (None, None) if state is None else state
        # The package's layout: filters (dim, width), activations channels first.
        conv_weights = self.conv1d.weight.view(self.conv_dim, self.conv_kernel_size)

        mixed_qkv = self.in_proj_qkv(hidden_states).transpose(1, 2)
        if conv_state is not None and seq_len == 1:
            conv_state = conv_state.clone()  # the update writes into it
            mixed_qkv = causal_conv1d_update(mixed_qkv[..., 0], conv_state, conv_weights, activation="silu")
            mixed_qkv = mixed_qkv.unsqueeze(-1)
        else:
            mixed_qkv, conv_state = causal_conv1d_fn(
                mixed_qkv,
                conv_weights,
                initial_states=conv_state,
                return_final_states=True,
                activation="silu",
            )
        mixed_qkv = mixed_qkv.transpose(1, 2)
        query, key, value = torch.split(mixed_qkv, [self.key_dim, self.key_dim, self.value_dim], dim=-1)
        query = query.reshape(batch, seq_len, -1, self.head_k_dim)
        key = key.reshape(batch, seq_len, -1, self.head_k_dim)
        value = value.reshape(batch, seq_len, -1, self.head_v_dim)

        beta = self.in_proj_b(hidden_states).sigmoid()
        g = -self.A_log.float().exp() * F.softplus(self.in_proj_a(hidden_states).float() + self.dt_bias)
        group = self.num_v_heads // self.num_k_heads
        if group > 1:
            query = query.repeat_interleave(group, dim=2)
            key = key.repeat_interleave(group, dim=2)

        core_attn_out, recurrent_state = gated_delta_rule(
            query.transpose(1, 2),
            key.transpose(1, 2),
            value.transpose(1, 2),
            g.transpose(1, 2),
            beta.transpose(1, 2),
            initial_state=recurrent_state,
        )
        core_attn_out = core_attn_out.transpose(1, 2)
        z = self.in_proj_z(hidden_states).reshape(batch, seq_len, -1, self.head_v_dim)
        core_attn_out = self.norm(core_attn_out, z).reshape(batch, seq_len, -1)
        output = self.out_proj(core_attn_out)
        if state is None:
            return output
        return output, (conv_state, recurrent_state)
