"""tied=(目标, 来源) 的意思是：检查点里没有目标（lm_head.weight）但有来源（embed_tokens.weight）时，用来源的值填目标。Qwen 的小模型把 lm_head 与嵌入共享，检查点里通常不存 lm_head.weight。你忽略了 tied，lm_head.weight 被当成缺失。
tied=(target, source) means: when the checkpoint lacks the target (lm_head.weight) but has the source (embed_tokens.weight), fill the target from the source. Qwen's small models tie lm_head to the embedding, and their checkpoints usually leave lm_head.weight out. You ignored `tied`, so lm_head.weight was reported missing."""

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

    sources = dict(entries)  # `tied` never used

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
