"""A short name for each kind of diagnosis: what a hidden case may say of its failure (the full
sentence names shapes and indices, which would describe the hidden inputs)."""

from __future__ import annotations

from judge.core.diagnose import batch, eps, repeated, views
from judge.core.texts import Text

KINDS: dict[str, Text] = {
    "dtype": Text("dtype 不对，数值是对的", "right values, wrong dtype"),
    "axes_permuted": Text("轴的顺序不对", "axes in the wrong order"),
    "reshaped": Text("形状不对，元素是对的", "right elements, wrong shape"),
    "extra_axis": Text("多了一个大小为 1 的轴", "an extra axis of size 1"),
    "missing_axis": Text("少了一个大小为 1 的轴", "a missing axis of size 1"),
    "broadcast": Text("广播出的形状", "a broadcast shape"),
    "scaled": Text("差一个常数因子", "off by a constant factor"),
    "offset": Text("差一个常数", "off by a constant"),
    "shifted": Text("错位（差一）", "shifted (off by one)"),
    "halves_swapped": Text("两半对调", "halves swapped"),
    "half_negated": Text("一半的符号反了", "one half negated"),
    "reversed": Text("顺序反了", "reversed"),
    "wrong_where_zero": Text("只在应为 0 的位置不对", "wrong only where the reference is 0"),
    "wrong_where_masked": Text("只在被屏蔽的位置不对", "wrong only where masked"),
    "wrong_in_slices": Text("只有部分行、头或 batch 不对", "wrong only in some rows, heads or batch items"),
    "overflow": Text("低精度溢出", "an overflow in low precision"),
    "nan_rows": Text("整行 NaN", "whole rows of NaN"),
    "exp_overflow": Text("exp 溢出", "exp overflowed"),
    "nan": Text("出现了 NaN", "NaN appeared"),
    "ulps": Text("只差一两个 ulp（中间精度）", "a step or two in the last place (intermediate precision)"),
    "error_grows_with_magnitude": Text("误差随数值增大", "error grows with magnitude"),
    "error_grows_with_position": Text("误差随位置增大", "error grows with position"),
    "gradient_wrong": Text("前向对，梯度不对", "forward right, gradient wrong"),
    "gradient_missing": Text("前向对，没有梯度", "forward right, no gradient"),
    "input_modified": Text("原地修改了输入", "an input modified in place"),
    "right_only_at_last": Text("只有最后一个位置是对的", "right only at the last index"),
    "right_only_at_first": Text("只有第一个位置是对的", "right only at index 0"),
    "not_rejected": Text("该拒绝的输入没有拒绝", "an input that must be refused was not"),
    "wrong_exception": Text("抛出的异常类型不对", "the wrong class of exception"),
    "rejected_valid": Text("拒绝了合法的输入", "a valid input refused"),
    "extra_bias": Text("多了偏置", "a bias that should not be there"),
    "missing_bias": Text("少了偏置", "a missing bias"),
    "renamed": Text("参数名不对", "a parameter named differently"),
    "zeros": Text("全是 0", "all zeros"),
    "equals_other": Text("与另一个结果相同", "equal to another result"),
    "first_stage": Text("找到了第一个出错的环节", "the first stage that differs is named"),
    "cache_carry": Text(
        "完整前向对，接着缓存算的调用不对", "the full pass is right, a call continuing from the cache is not"
    ),
    "layer_schedule": Text(
        "层的类型与配置的排布不符", "a layer's type does not follow the config's schedule"
    ),
    # The diagnoses that read how a case named its observations carry their own labels.
    **{m.KIND: m.LABEL for m in (repeated, eps, views, batch)},
}


def kind_name(kind: str) -> Text:
    return KINDS.get(kind, Text(kind, kind))
