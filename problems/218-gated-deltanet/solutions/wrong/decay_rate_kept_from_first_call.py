"""同一个层第一次调用是对的，但参数被原地修改（优化器的一步、load_state_dict）或转换 dtype 并重新载入之后，结果就不对了：由权重算出的衰减率 -exp(A_log) 在第一次调用时算好存在 self 上，之后一直复用，所以层看不到新的 A_log。每次调用都从此刻的参数重新算（它很便宜），或者只在构造时从构造参数算出不依赖权重的东西。
A layer is right on its first call but wrong once its parameters have been edited in place (an optimiser step, load_state_dict) or converted and reloaded: the decay rate computed from the weights, -exp(A_log), is worked out on the first call, kept on self and reused, so the layer never sees the new A_log. Compute it from the parameters as they are at every call (it is cheap), or cache at construction only what the constructor's arguments alone determine."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from qwen.conv import causal_conv1d
from qwen.delta_rule import gated_delta_rule
from qwen.norm import GatedRMSNorm


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads:
            raise ValueError("num_v_heads must be a multiple of num_k_heads")
        self.num_k_heads, self.num_v_heads = num_k_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim = num_k_heads * head_k_dim
        self.value_dim = num_v_heads * head_v_dim
        self.conv_kernel_size = conv_kernel_size
        # q, k and v come out of one projection and go through one convolution, in that order.
        self.conv_dim = 2 * self.key_dim + self.value_dim
        self.in_proj_qkv = nn.Linear(hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)
        # Depthwise, no bias: a (conv_dim, 1, K) weight as in transformers' checkpoints. Only its
        # weight is used; forward runs problem 211's convolution with it.
        self.conv1d = nn.Conv1d(
            self.conv_dim,
            self.conv_dim,
            conv_kernel_size,
            groups=self.conv_dim,
            bias=False,
        )
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = GatedRMSNorm(head_v_dim, eps)  # per value head, gated by z
        self.out_proj = nn.Linear(self.value_dim, hidden_size, bias=False)

    def zero_state(self, batch_size):
        weight = self.in_proj_qkv.weight
        conv_state = weight.new_zeros(batch_size, self.conv_dim, self.conv_kernel_size - 1)
        recurrent_state = torch.zeros(
            batch_size, self.num_v_heads, self.head_k_dim, self.head_v_dim, device=weight.device
        )
        return conv_state, recurrent_state

    def forward(self, x, state=None):
        batch, seq, _ = x.shape
        conv_state, recurrent_state = (None, None) if state is None else state

        # 1. q|k|v through the causal depthwise conv + SiLU, channels first as problem 211 takes them.
        mixed = self.in_proj_qkv(x).transpose(1, 2)  # (B, conv_dim, T)
        weight = self.conv1d.weight.squeeze(1)  # (conv_dim, K)
        # A decoding step is a sequence of one token that continues from the conv state.
        mixed, new_conv_state = causal_conv1d(mixed, weight, initial_state=conv_state)
        q, k, v = mixed.transpose(1, 2).split([self.key_dim, self.key_dim, self.value_dim], dim=-1)

        # 2. Heads first. Key head h serves the `group` consecutive value heads h*group .. h*group+group-1.
        group = self.num_v_heads // self.num_k_heads
        q = q.reshape(batch, seq, self.num_k_heads, self.head_k_dim).repeat_interleave(group, dim=2)
        k = k.reshape(batch, seq, self.num_k_heads, self.head_k_dim).repeat_interleave(group, dim=2)
        v = v.reshape(batch, seq, self.num_v_heads, self.head_v_dim)

        # 3. Write strength and log-decay per token and value head; g <= 0, computed in fp32.
        beta = torch.sigmoid(self.in_proj_b(x))
        if not hasattr(self, "rate"):
            self.rate = -self.A_log.float().exp()
        g = self.rate * F.softplus(self.in_proj_a(x).float() + self.dt_bias)

        # 4. The recurrence of problem 212 (it l2-normalises q and k and scales q itself).
        o, new_recurrent_state = gated_delta_rule(
            q.transpose(1, 2),
            k.transpose(1, 2),
            v.transpose(1, 2),
            g.transpose(1, 2),
            beta.transpose(1, 2),
            initial_state=recurrent_state,
        )
        o = o.transpose(1, 2)  # (B, T, Hv, dv)

        # 5. Normalise each value head, gate it with silu(z), and project back.
        z = self.in_proj_z(x).reshape(batch, seq, self.num_v_heads, self.head_v_dim)
        y = self.out_proj(self.norm(o, z).reshape(batch, seq, self.value_dim))
        if state is None:
            return y
        return y, (new_conv_state, new_recurrent_state)
