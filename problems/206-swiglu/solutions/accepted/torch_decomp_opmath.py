"""In the style of PyTorch's own decompositions (torch._decomp / torch._refs): every op spelled
out in primitives. linear is `mm` on the input folded to 2-D, and the pointwise part (silu and
the product) runs in the "opmath" dtype, fp32 for bf16 and fp16, as `pw_cast_for_opmath` does,
then is cast back before the next matrix product."""

import torch
import torch.nn as nn


def _opmath_dtype(dtype: torch.dtype) -> torch.dtype:
    # Reduced-precision floats compute their pointwise ops in fp32; other dtypes in themselves.
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # aten.linear for a 2-D weight and no bias: fold the leading axes, one mm, unfold. reshape,
    # not view, on the way in: x may be a transposed or sliced view. mm's result is a fresh
    # contiguous tensor, so view is safe on the way out.
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    return torch.mm(flat, weight.t()).view(*lead, weight.shape[0])


def _silu_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    # silu(gate) * up as the decomposition writes silu, self * sigmoid(self), in opmath.
    out_dtype = gate.dtype
    g = gate.to(_opmath_dtype(out_dtype))
    u = up.to(_opmath_dtype(out_dtype))
    return (g * torch.sigmoid(g) * u).to(out_dtype)


class SwiGLU(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int) -> None:
        super().__init__()
        torch._check_value(
            hidden_size > 0 and intermediate_size > 0,
            lambda: f"widths must be positive, got {hidden_size} and {intermediate_size}",
        )
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The weights are read at every call: nothing derived from them is kept between calls.
        w_gate, w_up, w_down = self.gate_proj.weight, self.up_proj.weight, self.down_proj.weight
        torch._check_value(
            x.shape[-1] == w_gate.shape[1],
            lambda: f"x must end in hidden_size={w_gate.shape[1]}, got {tuple(x.shape)}",
        )
        x = x.to(w_gate.dtype)
        hidden = _silu_mul(_linear(x, w_gate), _linear(x, w_up))
        return _linear(hidden, w_down)
