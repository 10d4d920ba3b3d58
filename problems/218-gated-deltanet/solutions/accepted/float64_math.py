"""Everything between the input and the output in float64, rounded once at the end: the
projections, the convolution, the recurrence, the norm. The states keep the contract's dtypes
(the conv state holds the raw projected inputs in x's dtype, the recurrent state is fp32). It
rounds less than the reference, never more, so it shows that the tolerances leave room for a
more precise layer as well as for a less careful one."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, gate):  # float64 in, float64 out
        return (
            x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.double() * F.silu(gate)
        )


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads:
            raise ValueError("num_v_heads must be a multiple of num_k_heads")
        self.hk, self.hv, self.dk, self.dv = num_k_heads, num_v_heads, head_k_dim, head_v_dim
        self.kernel = conv_kernel_size
        self.conv_dim = 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim
        self.in_proj_qkv = nn.Linear(hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, num_v_heads * head_v_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.conv1d = nn.Conv1d(
            self.conv_dim, self.conv_dim, conv_kernel_size, groups=self.conv_dim, bias=False
        )
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = GatedNorm(head_v_dim, eps)
        self.out_proj = nn.Linear(num_v_heads * head_v_dim, hidden_size, bias=False)

    def zero_state(self, batch_size):
        w = self.in_proj_qkv.weight
        return (
            w.new_zeros(batch_size, self.conv_dim, self.kernel - 1),
            torch.zeros(batch_size, self.hv, self.dk, self.dv),
        )

    def forward(self, x, state=None):
        b, t, _ = x.shape
        xd = x.double()
        conv_state, rec = (None, None) if state is None else state
        raw = self.in_proj_qkv(x).transpose(1, 2)  # the state keeps the raw inputs in x's dtype
        before = (
            raw.new_zeros(b, self.conv_dim, self.kernel - 1) if conv_state is None else conv_state.to(x.dtype)
        )
        new_conv_state = torch.cat([before, raw], dim=-1)[..., -(self.kernel - 1) :].clone()
        # The projection again, in float64 (the state's inputs from earlier calls are as stored).
        stream = torch.cat(
            [before.double(), F.linear(xd, self.in_proj_qkv.weight.double()).transpose(1, 2)], dim=-1
        )
        w = self.conv1d.weight.double()[:, 0]
        mixed = F.silu(sum(w[:, j, None] * stream[..., j : j + t] for j in range(self.kernel))).transpose(
            1, 2
        )
        kd = self.hk * self.dk
        q = mixed[..., :kd].reshape(b, t, self.hk, self.dk).repeat_interleave(self.hv // self.hk, dim=2)
        k = (
            mixed[..., kd : 2 * kd]
            .reshape(b, t, self.hk, self.dk)
            .repeat_interleave(self.hv // self.hk, dim=2)
        )
        v = mixed[..., 2 * kd :].reshape(b, t, self.hv, self.dv)
        q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + 1e-6) / self.dk**0.5
        k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-6)
        beta = torch.sigmoid(F.linear(xd, self.in_proj_b.weight.double()))
        a = F.linear(xd, self.in_proj_a.weight.double())
        g = -self.A_log.double().exp() * F.softplus(a + self.dt_bias.double())
        s = torch.zeros(b, self.hv, self.dk, self.dv, dtype=torch.float64) if rec is None else rec.double()
        outs = []
        for i in range(t):
            s = s * g[:, i].exp()[..., None, None]
            read = (s * k[:, i, :, :, None]).sum(-2)
            s = s + k[:, i, :, :, None] * (beta[:, i, :, None] * (v[:, i] - read))[..., None, :]
            outs.append((s * q[:, i, :, :, None]).sum(-2))
        o = torch.stack(outs, dim=1)  # (B, T, Hv, dv)
        z = F.linear(xd, self.in_proj_z.weight.double()).reshape(b, t, self.hv, self.dv)
        y = F.linear(self.norm(o, z).reshape(b, t, -1), self.out_proj.weight.double()).to(x.dtype)
        return y if state is None else (y, (new_conv_state, s.float()))
