"""ignore 要按检查点里的原始键判断，在去掉 prefix 之前：用 prefix="model." 时 "model.visual.x" 会先变成 "visual.x"，
再与 "model.visual." 比就对不上了，于是它被当成多余。先看原始键是否以 ignore 中的某个前缀开头，再去前缀。
Judge ignore on the checkpoint's raw key, before the prefix is stripped: with prefix="model.",
"model.visual.x" first becomes "visual.x", which no longer starts with "model.visual.", so it ends up
unexpected. Check whether the raw key starts with one of the ignore prefixes, then strip the prefix."""

import torch


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    # Every parameter and persistent buffer, under every name it has (a tied weight is listed
    # under both names). keep_vars=True gives the tensors themselves, not detached views.
    targets = model.state_dict(keep_vars=True)

    # The checkpoint's names with the prefix stripped where present ("lm_head.weight" has none).
    # Keys under an ignored prefix hold parts this model does not have (a multimodal
    # checkpoint's vision tower, its multi-token-prediction head): set aside, and reported.
    entries, ignored = {}, []
    for key, value in state_dict.items():
        name = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        if name.startswith(tuple(ignore)):
            ignored.append(key)
            continue
        entries[name] = value

    # A tied target the checkpoint lacks takes its source's tensor.
    sources = dict(entries)
    if tied is not None:
        target, source = tied
        if target in targets and target not in sources and source in sources:
            sources[target] = sources[source]

    # Phase 1: decide everything; touch nothing.
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

    # Phase 2: copy values into the existing tensors. copy_ converts the dtype and never
    # shares storage with the checkpoint; no_grad because parameters require grad.
    with torch.no_grad():
        for _, tensor, value in plan:
            tensor.copy_(value)
    return report
