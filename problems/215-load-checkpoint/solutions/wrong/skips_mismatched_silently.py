"""形状不符的条目不能悄悄跳过：要写进报告的 "mismatched"（格式 "名字: 检查点形状 vs 模型形状"），strict 时还要算作错误抛出。悄悄跳过会让模型里留着随机初始化的权重，却没有任何提示。
Do not skip shape mismatches silently: list them under "mismatched" (as "name: checkpoint shape vs model shape") and, when strict, count them as errors. Skipping them leaves randomly initialised weights in the model without a word."""

import torch


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
            continue  # wrong shape: just leave it
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
