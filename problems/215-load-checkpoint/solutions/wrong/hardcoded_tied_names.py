"""Qwen 的名字能加载，换了名字的共享权重就不行：tied 传的是 ("output.weight", "tok_embeddings.weight") 这样的一对名字（Meta Llama 的命名），检查点里缺 output.weight，它却被报成缺失、没有用 tok_embeddings 的值填上。原因通常是把 "lm_head.weight" 和 "embed_tokens.weight" 直接写进了代码，而没有从 tied 参数里取目标和来源。
Qwen's names load, but a tie under other names does not: with tied=("output.weight", "tok_embeddings.weight") (Meta Llama's names) and a checkpoint without output.weight, the head is reported missing instead of taking tok_embeddings' values. The usual cause is "lm_head.weight" and "embed_tokens.weight" written into the code instead of reading the target and the source from the `tied` argument."""

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
        if key.startswith(tuple(ignore)):
            ignored.append(key)
            continue
        name = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        entries[name] = value

    # A tied target the checkpoint lacks takes its source's tensor.
    sources = dict(entries)
    if tied is not None:
        target, source = "lm_head.weight", "embed_tokens.weight"  # the default's names, whatever tied says
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
