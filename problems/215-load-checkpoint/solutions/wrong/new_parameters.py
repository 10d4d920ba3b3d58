"""要把数值复制进模型里已有的张量（with torch.no_grad(): p.copy_(value)），不能用新的 nn.Parameter 替换它：替换后 lm_head 与 embed_tokens 不再是同一个张量（共享被拆开），优化器和别处保存的引用也还指着旧参数。
Copy the values into the model's existing tensors (with torch.no_grad(): p.copy_(value)); do not replace them with new nn.Parameter objects. Replacing unties lm_head from embed_tokens, and optimisers and other references still point at the old parameters."""

from torch import nn


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    targets = model.state_dict(keep_vars=True)

    entries, ignored = {}, []
    for key, value in state_dict.items():
        if key.startswith(tuple(ignore)):
            ignored.append(key)
            continue
        name = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        entries[name] = value

    sources = dict(entries)
    if tied is not None:
        target, source = tied
        if target in targets and target not in sources and source in sources:
            sources[target] = sources[source]

    plan, missing, mismatched = [], [], []
    for name, tensor in targets.items():
        if name not in sources:
            missing.append(name)
        elif sources[name].shape != tensor.shape:
            mismatched.append(f"{name}: {tuple(sources[name].shape)} vs {tuple(tensor.shape)}")
        else:
            plan.append((name, tensor, sources[name]))
    unexpected = [name for name in entries if name not in targets]

    report = {
        "loaded": sorted(name for name, _, _ in plan),
        "missing": sorted(missing),
        "unexpected": sorted(unexpected),
        "mismatched": sorted(mismatched),
        "ignored": sorted(ignored),
    }
    if strict and (missing or unexpected or mismatched):
        lines = [f"{kind}: {', '.join(report[kind])}" for kind in ("missing", "unexpected", "mismatched")]
        raise ValueError("checkpoint does not fit the model\n" + "\n".join(lines))

    for name, tensor, value in plan:
        owner_name, _, attr = name.rpartition(".")
        owner = model.get_submodule(owner_name)
        fresh = value.detach().to(tensor.dtype).clone()
        if isinstance(tensor, nn.Parameter):
            setattr(owner, attr, nn.Parameter(fresh, requires_grad=tensor.requires_grad))
        else:
            setattr(owner, attr, fresh)
    return report
