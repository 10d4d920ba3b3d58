"""Walks the modules and their own _parameters / _buffers, copies through .data, and keeps
the problems as messages until every name has been checked."""


def _state_tensors(model):
    found = {}
    for mod_name, module in model.named_modules(remove_duplicate=False):
        dot = mod_name + "." if mod_name else ""
        for name, p in module._parameters.items():
            if p is not None:
                found[dot + name] = p
        for name, b in module._buffers.items():
            if b is not None and name not in module._non_persistent_buffers_set:
                found[dot + name] = b
    return found


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    tensors = _state_tensors(model)
    renamed, ignored = {}, []
    for key in state_dict:
        if any(key.startswith(p) for p in ignore):
            ignored.append(key)
        else:
            renamed[key.removeprefix(prefix) if prefix else key] = state_dict[key]

    def lookup(name):
        if name in renamed:
            return renamed[name]
        if tied is not None and name == tied[0]:
            return renamed.get(tied[1])
        return None

    loaded, missing, mismatched, todo = [], [], [], []
    for name, tensor in tensors.items():
        value = lookup(name)
        if value is None:
            missing.append(name)
        elif tuple(value.shape) != tuple(tensor.shape):
            mismatched.append(
                ": ".join([name, " vs ".join(str(tuple(s)) for s in (value.shape, tensor.shape))])
            )
        else:
            loaded.append(name)
            todo.append((tensor, value))
    unexpected = [name for name in renamed if name not in tensors]

    problems = missing + unexpected + mismatched
    if strict and problems:
        raise ValueError("cannot load the checkpoint: " + "; ".join(problems))
    for tensor, value in todo:
        tensor.data.copy_(value.detach())
    return {
        "loaded": sorted(loaded),
        "missing": sorted(missing),
        "unexpected": sorted(unexpected),
        "mismatched": sorted(mismatched),
        "ignored": sorted(ignored),
    }
