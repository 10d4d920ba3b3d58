"""Accepted: PyTorch's own decomposition style (torch._refs / torch._decomp): one functional
rms_norm over `normalized_shape` with an explicit computation dtype, wrapped by thin modules."""

import torch
import torch.nn as nn
import torch.nn.functional as F

# torch._prims_common.get_computation_dtype: low-precision floats compute in fp32.
_COMPUTATION_DTYPES = {torch.bfloat16: torch.float32, torch.float16: torch.float32}


def _get_computation_dtype(dtype):
    return _COMPUTATION_DTYPES.get(dtype, dtype)


def _maybe_convert_to_dtype(a, dtype):
    return a if a.dtype == dtype else a.to(dtype)


def _rms_norm(input, normalized_shape, weight=None, eps=None):
    normalized_ndim = len(normalized_shape)
    torch._check(
        tuple(input.shape[input.dim() - normalized_ndim :]) == tuple(normalized_shape),
        lambda: (
            f"expected input with shape [*, {', '.join(map(str, normalized_shape))}], got {list(input.shape)}"
        ),
    )
    dims_to_reduce = list(range(input.dim() - normalized_ndim, input.dim()))
    computation_dtype = _get_computation_dtype(input.dtype)
    upcasted_input = _maybe_convert_to_dtype(input, computation_dtype)
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    rqrst_input = torch.rsqrt(
        torch.mean(torch.pow(upcasted_input, 2), dim=dims_to_reduce, keepdim=True) + eps
    )
    upcasted_result = torch.mul(upcasted_input, rqrst_input)
    if weight is not None:
        upcasted_result = torch.mul(upcasted_result, weight)
    return upcasted_result


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.normalized_shape = (dim,)
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        # The weight is stored as w - 1: the scale, built in fp32 at every call, is 1 + w.
        scale = torch.add(_maybe_convert_to_dtype(self.weight, torch.float32), 1.0)
        out = _rms_norm(_maybe_convert_to_dtype(x, torch.float32), self.normalized_shape, scale, self.eps)
        return _maybe_convert_to_dtype(out, x.dtype)


class GatedRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.normalized_shape = (dim,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, gate):
        weight = _maybe_convert_to_dtype(self.weight, torch.float32)
        out = _rms_norm(_maybe_convert_to_dtype(x, torch.float32), self.normalized_shape, weight, self.eps)
        out = torch.mul(out, F.silu(_maybe_convert_to_dtype(gate, torch.float32)))
        return _maybe_convert_to_dtype(out, x.dtype)


def l2norm(x, eps=1e-6):
    # In x's own dtype, as the statement asks: sum of squares, then one rsqrt.
    return torch.mul(x, torch.rsqrt(torch.sum(torch.pow(x, 2), dim=-1, keepdim=True) + eps))
