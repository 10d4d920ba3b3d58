"""共享的权重有两个名字：lm_head.weight 和 embed_tokens.weight 是同一个张量，两个名字都属于模型（model.state_dict() 里两个都有）。你用的 named_parameters() 默认去重，只剩一个名字，于是 lm_head.weight 既不算加载，出现在检查点里时还被当成多余。
A tied weight has two names: lm_head.weight and embed_tokens.weight are one tensor, and both names belong to the model (model.state_dict() lists both). named_parameters() drops duplicates by default, so lm_head.weight was neither counted as loaded nor recognised when the checkpoint holds it."""

import torch


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    targets = dict(model.named_parameters())
    targets.update(
        (name, b)
        for name, b in model.state_dict(keep_vars=True).items()
        if not isinstance(b, torch.nn.Parameter)
    )

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

    with torch.no_grad():
        for _, tensor, value in plan:
            tensor.copy_(value)
    return report
