"""With the parts, in another order: a single decoded token goes through causal_conv1d_step
(problem 211's decoding form), a chunk through causal_conv1d; the heads are laid out
(batch, heads, seq, dim) straight from the projection with view + permute, and the key heads are
shared with expand. The result is the same layer."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from qwen.conv import causal_conv1d, causal_conv1d_step
from qwen.delta_rule import gated_delta_rule
from qwen.norm import GatedRMSNorm


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads:
            raise ValueError("num_v_heads must be a multiple of num_k_heads")
        self.shape = (num_k_heads, num_v_heads, head_k_dim, head_v_dim)
        self.kernel = conv_kernel_size
        conv_dim = 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim
        self.in_proj_qkv = nn.Linear(hidden_size, conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, num_v_heads * head_v_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, conv_kernel_size, groups=conv_dim, bias=False)
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = GatedRMSNorm(head_v_dim, eps=eps)
        self.out_proj = nn.Linear(num_v_heads * head_v_dim, hidden_size, bias=False)

    def zero_state(self, batch_size):
        _, hv, dk, dv = self.shape
        w = self.conv1d.weight
        conv = torch.zeros(batch_size, w.shape[0], self.kernel - 1, dtype=w.dtype, device=w.device)
        return conv, torch.zeros(batch_size, hv, dk, dv, device=w.device)

    def forward(self, x, state=None):
        hk, hv, dk, dv = self.shape
        b, t, _ = x.shape
        conv_state, rec_state = (None, None) if state is None else state
        qkv = self.in_proj_qkv(x).permute(0, 2, 1)
        weight = self.conv1d.weight[:, 0, :]
        if conv_state is not None and t == 1:
            mixed, conv_state = causal_conv1d_step(qkv[..., 0], conv_state, weight)
            mixed = mixed[..., None]
        else:
            mixed, conv_state = causal_conv1d(qkv, weight, initial_state=conv_state)
        q, k, v = torch.split(mixed, [hk * dk, hk * dk, hv * dv], dim=1)  # channels first: (B, C, T)
        q = q.view(b, hk, 1, dk, t).expand(b, hk, hv // hk, dk, t).reshape(b, hv, dk, t).transpose(-1, -2)
        k = k.view(b, hk, 1, dk, t).expand(b, hk, hv // hk, dk, t).reshape(b, hv, dk, t).transpose(-1, -2)
        v = v.view(b, hv, dv, t).transpose(-1, -2)
        beta = torch.sigmoid(self.in_proj_b(x)).permute(0, 2, 1)
        softplus = F.softplus(self.in_proj_a(x).float() + self.dt_bias)
        g = -(softplus * torch.exp(self.A_log.float())).permute(0, 2, 1)
        o, rec_state = gated_delta_rule(q, k, v, g, beta, rec_state)  # (B, Hv, T, dv)
        z = self.in_proj_z(x).view(b, t, hv, dv)
        o = self.norm(o.permute(0, 2, 1, 3), z).reshape(b, t, hv * dv)
        y = self.out_proj(o)
        if state is None:
            return y
        return y, (conv_state, rec_state)
