import torch


def load_checkpoint(
    model,
    state_dict,
    prefix="model.",
    tied=("lm_head.weight", "embed_tokens.weight"),
    strict=True,
    ignore=("model.visual.", "mtp."),
):
    """按名字把检查点装进模型。
    Load a checkpoint into a model by name.

    model:      nn.Module；它的参数和持久 buffer 就地填入数值
                its parameters and persistent buffers are filled in place
    state_dict: {键: 张量}；不能修改它
                {key: tensor}; must not be modified
    prefix:     键开头有这个前缀时先去掉
                stripped from keys that start with it
    tied:       (目标, 来源) 或 None：检查点缺目标时用来源的值
                (target, source) or None: a target missing from the checkpoint takes the source's values
    strict:     True 时，有任何缺失、多余或形状不符就抛出 ValueError，且不改动模型
                if True, raise ValueError (changing nothing) when anything is missing,
                unexpected or mismatched
    ignore:     键前缀的元组：以其中之一开头的键（在去掉 prefix 之前判断）不加载、不算多余，列入 "ignored"
                key prefixes: a key starting with one of them (checked before prefix is
                stripped) is neither loaded nor unexpected, and is listed under "ignored"

    返回 {"loaded": [...], "missing": [...], "unexpected": [...], "mismatched": [...], "ignored": [...]}，
    每个列表都已排序；mismatched 的条目形如 "layers.0.up.weight: (12, 8) vs (8, 12)"（检查点形状 vs 模型形状）。
    Returns {"loaded": [...], "missing": [...], "unexpected": [...], "mismatched": [...], "ignored": [...]},
    each list sorted; a mismatched entry looks like "layers.0.up.weight: (12, 8) vs (8, 12)"
    (checkpoint shape vs model shape).
    """
    raise NotImplementedError
