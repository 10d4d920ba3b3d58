"""不能让模型与检查点共用存储：dtype 相同时 value.to(p.dtype) 返回的就是 value 本身，p.data = value.to(p.dtype) 使参数和检查点成了同一块内存，之后改检查点（或被复用的缓冲区）就会改到模型。请用 p.copy_(value) 把数值复制过去。
The model must not share storage with the checkpoint: when the dtypes already match, value.to(p.dtype) returns value itself, so p.data = value.to(p.dtype) makes the parameter and the checkpoint one piece of memory, and later edits to the checkpoint (or a reused buffer) change the model. Copy the values with p.copy_(value)."""


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
        tensor.data = value.to(tensor.dtype)
    return report
