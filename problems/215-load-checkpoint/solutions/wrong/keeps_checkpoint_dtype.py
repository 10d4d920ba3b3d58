"""加载后参数要保持模型自己的 dtype：检查点是 bf16、模型是 fp32 时，要转换成 fp32（p.copy_(value) 会自动转换）。你用 p.data = value.clone() 换掉了数据，参数变成了 bf16，后面的计算会混用精度或直接报错。
After loading, each parameter keeps the model's dtype: a bf16 checkpoint into an fp32 model must be converted to fp32 (p.copy_(value) converts for you). Assigning p.data = value.clone() swapped the data and left the parameter in bf16, so later computations mix precisions or fail."""


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

    for _, tensor, value in plan:
        tensor.data = value.clone()
    return report
