"""strict 时要先检查完所有条目，再抛出一个列出全部问题（缺失、多余、形状不符）的 ValueError，而且在此之前不要改动模型。你一遇到问题就抛出，只报告了第一个，模型还被加载了一半。
With strict, check every entry first, then raise one ValueError that lists all the problems (missing, unexpected, mismatched), and change nothing in the model before that. You raised at the first problem, reported only that one, and left the model half loaded."""

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
            if strict:
                raise ValueError(f"missing: {name}")
            missing.append(name)
        elif sources[name].shape != tensor.shape:
            if strict:
                raise ValueError(f"mismatched: {name}")
            mismatched.append(f"{name}: {tuple(sources[name].shape)} vs {tuple(tensor.shape)}")
        else:
            plan.append((name, tensor, sources[name]))
            with torch.no_grad():
                tensor.copy_(sources[name])
    unexpected = [name for name in entries if name not in targets]
    if strict and unexpected:
        raise ValueError(f"unexpected: {unexpected[0]}")

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

    return report
