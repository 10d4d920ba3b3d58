"""Accepted: the shape of PyTorch's own nn.Module.load_state_dict, written out. A recursive
`load(module, local_prefix)` visits every submodule under every path (a tied weight is seen
from both of its modules), and a per-module `_check_from_state_dict` sorts the module's own
parameters and persistent buffers as torch's `_load_from_state_dict` does, collecting
`error_msgs` instead of raising. Unlike torch, nothing is copied until every module has been
checked, and the copies run afterwards under no_grad."""

import torch


def _check_from_state_dict(module, state_dict, local_prefix, plan, missing, mismatched):
    persistent = {k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set}
    local_state = {k: v for k, v in {**module._parameters, **persistent}.items() if v is not None}
    for name, param in local_state.items():
        key = local_prefix + name
        if key not in state_dict:
            missing.append(key)
            continue
        input_param = state_dict[key]
        if input_param.shape != param.shape:
            mismatched.append(f"{key}: {tuple(input_param.shape)} vs {tuple(param.shape)}")
            continue
        plan.append((key, param, input_param))


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    ignored = sorted(k for k in state_dict if k.startswith(tuple(ignore)))
    renamed = {}
    for key, value in state_dict.items():
        if key in ignored:
            continue
        renamed[key[len(prefix) :] if prefix and key.startswith(prefix) else key] = value

    expected = set(model.state_dict(keep_vars=True))
    if tied is not None:
        target, source = tied
        if target in expected and target not in renamed and source in renamed:
            renamed[target] = renamed[source]

    plan, missing, mismatched = [], [], []

    def load(module, local_prefix=""):
        _check_from_state_dict(module, renamed, local_prefix, plan, missing, mismatched)
        for child_name, child in module._modules.items():
            if child is not None:
                load(child, local_prefix + child_name + ".")

    load(model)
    unexpected = sorted(k for k in renamed if k not in expected)

    error_msgs = []
    if missing:
        error_msgs.append("Missing key(s): " + ", ".join(f'"{k}"' for k in missing))
    if unexpected:
        error_msgs.append("Unexpected key(s): " + ", ".join(f'"{k}"' for k in unexpected))
    for line in mismatched:
        error_msgs.append("size mismatch for " + line)
    if strict and error_msgs:
        raise ValueError(
            f"Error(s) in loading state_dict for {model.__class__.__name__}:\n\t" + "\n\t".join(error_msgs)
        )

    with torch.no_grad():
        for _, param, input_param in plan:
            param.copy_(input_param)
    return {
        "loaded": sorted(key for key, _, _ in plan),
        "missing": sorted(missing),
        "unexpected": unexpected,
        "mismatched": sorted(mismatched),
        "ignored": ignored,
    }
