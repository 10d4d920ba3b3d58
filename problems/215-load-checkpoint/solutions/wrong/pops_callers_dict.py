"""不能修改调用者传进来的 state_dict：你用 pop 取出用过的键，把剩下的当作多余的，调用者的字典被清空了（比如他还想把同一个检查点装进另一个模型）。要取值就用 state_dict[key]，多余的键另外计算。
Leave the caller's state_dict as it was: you pop()-ed each key you used and took what remained as unexpected, which empties the caller's dict (who may want to load the same checkpoint into another model). Read with state_dict[key] and work out the unexpected keys separately."""

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
    for key in list(state_dict):
        if key.startswith(tuple(ignore)):
            ignored.append(key)
            continue
        name = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        entries[name] = state_dict.pop(key)

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
