"""Written the way the transformers library's torch fallback for Qwen3.5 does it: F.conv1d over
the padded stream in the weights' dtype with SiLU after it, the chunkwise-parallel (WY) form of
the delta rule for a chunk of tokens and the step-by-step recurrence for a single decoded
token, and the gated norm that rounds the normalised x to the input dtype before the weight. In
bf16 its roundings fall in other places than the reference's, so it sets how loose the bf16
tolerances must be. (transformers keeps K inputs in its conv cache; this contract keeps K-1.)"""

import torch
import torch.nn as nn
import torch.nn.functional as F

CHUNK = 64


def l2norm(x, dim=-1, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(dim=dim, keepdim=True) + eps)


def conv_fn(hidden_states, weight, conv_state):
    # hidden_states: (B, C, T); weight: (C, K). The stream of K-1 earlier inputs and x.
    _, channels, seq_len = hidden_states.shape
    kernel = weight.shape[-1]
    if conv_state is None:
        conv_state = hidden_states.new_zeros(hidden_states.shape[0], channels, kernel - 1)
    stream = torch.cat([conv_state.to(hidden_states.dtype), hidden_states], dim=-1)
    out = F.conv1d(stream.to(weight.dtype), weight.unsqueeze(1), None, padding=0, groups=channels)
    out = F.silu(out[:, :, -seq_len:])
    return out.to(hidden_states.dtype), stream[:, :, -(kernel - 1) :].clone()


def chunk_gated_delta_rule(query, key, value, g, beta, initial_state):
    # query, key: (B, T, H, dk); value: (B, T, H, dv); g, beta: (B, T, H)
    initial_dtype = query.dtype
    batch_size, sequence_length, num_heads, k_head_dim = key.shape
    v_head_dim = value.shape[-1]
    query, key, value, beta, g = [
        x.transpose(1, 2).contiguous().to(torch.float32) for x in (query, key, value, beta, g)
    ]
    query = l2norm(query)
    key = l2norm(key)
    query = query * k_head_dim**-0.5
    pad_size = (CHUNK - sequence_length % CHUNK) % CHUNK
    query, key, value = (F.pad(x, (0, 0, 0, pad_size)) for x in (query, key, value))
    beta, g = (F.pad(x, (0, pad_size)) for x in (beta, g))
    v_beta = value * beta.unsqueeze(-1)
    k_beta = key * beta.unsqueeze(-1)
    query, key, k_beta, v_beta = [
        x.reshape(x.shape[0], x.shape[1], -1, CHUNK, x.shape[-1]) for x in (query, key, k_beta, v_beta)
    ]
    g = g.reshape(g.shape[0], g.shape[1], -1, CHUNK).cumsum(dim=-1)
    upper = torch.ones(CHUNK, CHUNK, dtype=torch.bool).triu(1)
    decay = (g.unsqueeze(-1) - g.unsqueeze(-2)).masked_fill(upper, float("-inf")).exp()
    system = (k_beta @ key.transpose(-1, -2)) * decay
    attn = (query @ key.transpose(-1, -2)) * decay
    new_values = torch.linalg.solve_triangular(system, v_beta, upper=False, unitriangular=True)
    k_cumdecay = torch.linalg.solve_triangular(
        system, k_beta * g.exp().unsqueeze(-1), upper=False, unitriangular=True
    )
    if initial_state is None:
        state = torch.zeros(batch_size, num_heads, k_head_dim, v_head_dim)
    else:
        state = initial_state.to(torch.float32)
    out = torch.zeros_like(new_values)
    query = query * g.exp().unsqueeze(-1)
    key = key * (g[..., -1:] - g).exp().unsqueeze(-1)
    chunk_decay = g[..., -1].exp()[..., None, None]
    for i in range(query.shape[2]):
        v_new = new_values[:, :, i] - k_cumdecay[:, :, i] @ state
        out[:, :, i] = query[:, :, i] @ state + attn[:, :, i] @ v_new
        state = state * chunk_decay[:, :, i] + key[:, :, i].transpose(-1, -2) @ v_new
    out = out.reshape(batch_size, num_heads, -1, v_head_dim)[:, :, :sequence_length]
    return out.transpose(1, 2).contiguous().to(initial_dtype), state


def recurrent_gated_delta_rule(query, key, value, g, beta, initial_state):
    initial_dtype = query.dtype
    query, key, value, beta, g = [
        x.transpose(1, 2).contiguous().to(torch.float32) for x in (query, key, value, beta, g)
    ]
    query = l2norm(query)
    key = l2norm(key)
    query = query / (query.shape[-1] ** 0.5)
    state = initial_state.to(torch.float32)
    out = torch.zeros_like(value)
    for i in range(value.shape[2]):
        q_t, k_t, v_t = query[:, :, i], key[:, :, i], value[:, :, i]
        state = state * g[:, :, i].exp()[..., None, None]
        kv_mem = (state * k_t.unsqueeze(-1)).sum(dim=-2)
        delta = (v_t - kv_mem) * beta[:, :, i].unsqueeze(-1)
        state = state + k_t.unsqueeze(-1) * delta.unsqueeze(-2)
        out[:, :, i] = (state * q_t.unsqueeze(-1)).sum(dim=-2)
    return out.transpose(1, 2).contiguous().to(initial_dtype), state


class RMSNormGated(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states, gate):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        hidden_states = self.weight * hidden_states.to(input_dtype)
        hidden_states = hidden_states * F.silu(gate.to(torch.float32))
        return hidden_states.to(input_dtype)


class GatedDeltaNet(nn.Module):
    def __init__(
        self, hidden_size, num_k_heads, num_v_heads, head_k_dim, head_v_dim, conv_kernel_size=4, eps=1e-6
    ):
        super().__init__()
        if num_v_heads % num_k_heads:
            raise ValueError("num_v_heads must be a multiple of num_k_heads")
        self.num_v_heads, self.num_k_heads = num_v_heads, num_k_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim = head_k_dim * num_k_heads
        self.value_dim = head_v_dim * num_v_heads
        self.conv_kernel_size = conv_kernel_size
        self.conv_dim = self.key_dim * 2 + self.value_dim
        self.conv1d = nn.Conv1d(
            in_channels=self.conv_dim,
            out_channels=self.conv_dim,
            bias=False,
            kernel_size=conv_kernel_size,
            groups=self.conv_dim,
            padding=conv_kernel_size - 1,
        )
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = RMSNormGated(head_v_dim, eps=eps)
        self.out_proj = nn.Linear(self.value_dim, hidden_size, bias=False)
        self.in_proj_qkv = nn.Linear(hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = nn.Linear(hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = nn.Linear(hidden_size, num_v_heads, bias=False)

    def zero_state(self, batch_size):
        dtype = self.in_proj_qkv.weight.dtype
        conv = torch.zeros(batch_size, self.conv_dim, self.conv_kernel_size - 1, dtype=dtype)
        rec = torch.zeros(batch_size, self.num_v_heads, self.head_k_dim, self.head_v_dim)
        return conv, rec

    def forward(self, hidden_states, state=None):
        batch_size, seq_len, _ = hidden_states.shape
        conv_state, recurrent_state = (None, None) if state is None else state
        mixed_qkv = self.in_proj_qkv(hidden_states).transpose(1, 2)
        z = self.in_proj_z(hidden_states).reshape(batch_size, seq_len, -1, self.head_v_dim)
        b = self.in_proj_b(hidden_states)
        a = self.in_proj_a(hidden_states)
        mixed_qkv, new_conv_state = conv_fn(mixed_qkv, self.conv1d.weight.squeeze(1), conv_state)
        mixed_qkv = mixed_qkv.transpose(1, 2)
        query, key, value = torch.split(mixed_qkv, [self.key_dim, self.key_dim, self.value_dim], dim=-1)
        query = query.reshape(batch_size, seq_len, -1, self.head_k_dim)
        key = key.reshape(batch_size, seq_len, -1, self.head_k_dim)
        value = value.reshape(batch_size, seq_len, -1, self.head_v_dim)
        beta = b.sigmoid()
        g = -self.A_log.float().exp() * F.softplus(a.float() + self.dt_bias)
        if self.num_v_heads != self.num_k_heads:
            query = query.repeat_interleave(self.num_v_heads // self.num_k_heads, dim=2)
            key = key.repeat_interleave(self.num_v_heads // self.num_k_heads, dim=2)
        if recurrent_state is not None and seq_len == 1:
            core, new_recurrent_state = recurrent_gated_delta_rule(
                query, key, value, g, beta, recurrent_state
            )
        else:
            core, new_recurrent_state = chunk_gated_delta_rule(query, key, value, g, beta, recurrent_state)
        core = self.norm(core.reshape(-1, self.head_v_dim), z.reshape(-1, self.head_v_dim))
        output = self.out_proj(core.reshape(batch_size, seq_len, -1))
        if state is None:
            return output
        return output, (new_conv_state, new_recurrent_state)
