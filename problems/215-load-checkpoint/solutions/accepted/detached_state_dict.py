"""Names from model.state_dict(), written through its detached views (no torch.no_grad needed);
the report is built from sets before anything is copied."""


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    # state_dict() holds detached tensors that share storage with the parameters and buffers.
    views = model.state_dict()

    def strip(key):
        return key[len(prefix) :] if prefix and key.startswith(prefix) else key

    skipped = {k for k in state_dict if any(k.startswith(p) for p in ignore)}
    ckpt = {strip(k): v for k, v in state_dict.items() if k not in skipped}
    lookup = dict(ckpt)
    if tied:
        target, source = tied
        if target not in lookup and source in lookup:
            lookup[target] = lookup[source]

    present = set(views) & set(lookup)
    mismatched = {n for n in present if lookup[n].shape != views[n].shape}
    report = {
        "loaded": sorted(present - mismatched),
        "missing": sorted(set(views) - set(lookup)),
        "unexpected": sorted(set(ckpt) - set(views)),
        "mismatched": sorted(f"{n}: {tuple(lookup[n].shape)} vs {tuple(views[n].shape)}" for n in mismatched),
        "ignored": sorted(skipped),
    }
    if strict and (report["missing"] or report["unexpected"] or report["mismatched"]):
        raise ValueError(
            "state dict does not match: "
            + ", ".join(f"{kind}={report[kind]}" for kind in ("missing", "unexpected", "mismatched"))
        )
    for name in report["loaded"]:
        views[name].copy_(lookup[name])
    return report
