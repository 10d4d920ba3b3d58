import torch


def rope_frequencies(head_dim, max_pos, theta=10000.0):
    """RoPE 的 cos/sin 表。
    The RoPE cos and sin tables.

    返回 (cos, sin)，形状都是 (max_pos, head_dim)，dtype 为 fp32。
    Returns (cos, sin), each of shape (max_pos, head_dim), in fp32.
    """
    # TODO: inv_freq = 1 / theta ** (arange(0, head_dim, 2) / head_dim)，全部用 fp32
    #       （写明 dtype=torch.float32，不依赖默认 dtype）
    # TODO: inv_freq = 1 / theta ** (arange(0, head_dim, 2) / head_dim), all in fp32
    #       (give dtype=torch.float32, whatever the default dtype)
    # TODO: 角度 = 位置 × inv_freq；前后两半用同一组角度：cat([angles, angles], -1)
    # TODO: angles = position * inv_freq; both halves use the same angles: cat([angles, angles], -1)
    raise NotImplementedError


def apply_rope(x, cos, sin, positions):
    """把位置 positions 的旋转作用到 x 上。
    Rotate x by the angles of `positions`.

    x: (batch, seq, heads, head_dim)；positions: int64，形状 (seq,) 或 (batch, seq)。
    x: (batch, seq, heads, head_dim); positions: int64 of shape (seq,) or (batch, seq).
    """
    # TODO: 用 positions 从 cos/sin 表中取行，并为 heads 维留出大小为 1 的一维
    # TODO: gather the rows of cos/sin for `positions`, with a size-1 axis for the heads
    # TODO: 先 xf = x.float()，再在 fp32 中计算 xf * cos + rotate_half(xf) * sin，rotate_half(x) = cat([-x2, x1], -1)
    # TODO: take xf = x.float(), then compute xf * cos + rotate_half(xf) * sin in fp32, with
    #       rotate_half(x) = cat([-x2, x1], -1)
    # TODO: 表比 head_dim 窄时只旋转前 cos.shape[-1] 个特征，其余原样保留；输出转回 x 的 dtype
    # TODO: a table narrower than head_dim rotates only the first cos.shape[-1] features and
    #       copies the rest; return x's dtype
    raise NotImplementedError
