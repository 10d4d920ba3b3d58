"""The first stage that differs: where a model's intermediate results stop matching the reference's.

A case may observe `stages`: a dict of a model's intermediate results in the order the model
computes them, keyed by what each one is: a module path with `(output)` or `(input)`
("layers.3.self_attn (output)", "norm (output)"), "embeddings", "logits", and, for a model
decoding through a cache, the call in front ("step 1: layers.0.linear_attn (output)").
Everything before the first stage that fails is right, so the mistake lies between that stage
and the one before it. The diagnosis names the stage and, for the module names transformers
gives the Llama/Qwen family (input_layernorm, linear_attn, self_attn, mlp, ...), what lies in
between. Problem 217 observes its model this way with forward hooks.
"""

from __future__ import annotations

import re
from typing import Any

from judge.core.casekit import Case
from judge.core.diagnose.probe import Diagnosis
from judge.core.texts import Text

KEY = "stages"
STRENGTH = 0.96  # a located mistake says more than any relation between two later tensors
_STAGE = re.compile(r"^(?:(?P<call>[^:]+): )?(?P<module>[\w.]+)(?: \((?P<side>input|output)\))?$")
_LAYER = re.compile(r"^layers\.(?P<n>\d+)(?:\.(?P<rest>.+))?$")
KINDS = {
    "linear_attn": Text("线性注意力", "linear attention"),
    "self_attn": Text("全注意力", "full attention"),
}


def diagnose(case: Case, expected: Any, got: Any) -> list[Diagnosis]:
    """The first stage of `expected[KEY]`, in its order, that `got` lacks or gets wrong."""
    from judge.core.compare import compare_leaf  # judge.core.compare imports the diagnosers' package

    want = expected.get(KEY) if isinstance(expected, dict) else None
    have = got.get(KEY) if isinstance(got, dict) else None
    if not isinstance(want, dict) or not isinstance(have, dict):
        return []
    previous: str | None = None
    for name, value in want.items():
        if name not in have:
            return [_missing(name, want, have)]
        if compare_leaf(case, f"{KEY}.{name}", value, have[name]):
            return [_first_wrong(name, previous, list(want))]
        previous = name
    return []


def _layer_kind(n: str, names: list[str]) -> str | None:
    """linear_attn or self_attn: the mixer the stages name for layer n."""
    for name in names:
        m = _STAGE.match(str(name))
        layer = _LAYER.match(m.group("module")) if m else None
        if layer and layer.group("n") == n and layer.group("rest"):
            head = layer.group("rest").split(".")[0]
            if head in KINDS:
                return head
    return None


def _label(module: str, side: str | None, names: list[str]) -> Text:
    """How a stage is named in a sentence: "the input of `layers.3.self_attn.o_proj` (layer 3,
    full attention)", "the output of layer 3", "`norm`"."""
    layer = _LAYER.match(module)
    if not layer:
        return Text(f"`{module}`", f"`{module}`")
    n = layer.group("n")
    kind = _layer_kind(n, names)
    where = Text(f"第 {n} 层", f"layer {n}")
    if kind is not None:
        where = Text(f"第 {n} 层，{KINDS[kind].zh}", f"layer {n}, {KINDS[kind].en}")
    if layer.group("rest") is None:
        return Text(f"{where.zh}的输出", f"the output of {where.en}")
    if side == "input":
        return Text(f"`{module}` 的输入（{where.zh}）", f"the input of `{module}` ({where.en})")
    return Text(f"`{module}`（{where.zh}）", f"`{module}` ({where.en})")


def _between(module: str, previous: str | None) -> Text:
    """What lies between the stage before `module` (`previous`, right) and `module` itself."""
    if module == "embeddings":
        return Text(
            "嵌入：查表本身，或装进去的嵌入矩阵", "the embeddings: the lookup, or the table loaded into it"
        )
    if module == "logits":
        if previous is not None and previous.startswith("norm"):
            return Text(
                "输出头：所有隐藏状态都对；logits 由最后的归一化输出和嵌入矩阵（共享权重时）算出",
                "the head: every hidden state is right; the logits come from the final normed output and, with "
                "tied weights, the embedding matrix",
            )
        return Text(
            "最后一个 mixer 之后的部分：最后一层的 MLP、最后的归一化（model.norm）或输出头",
            "what comes after the last mixer: the last layer's MLP, the final norm (model.norm) or the head",
        )
    after_mlp = previous is not None and previous.endswith(".mlp (output)")
    if module == "norm":
        if after_mlp:
            return Text(
                "最后的归一化（model.norm），或最后一层的残差相加：最后一层的 MLP 之前都对",
                "the final norm (model.norm), or the last layer's residual add: everything up to its MLP is right",
            )
        return Text(
            "最后一层，或最后的归一化（model.norm）", "the last layer, or the final norm (model.norm)"
        )
    layer = _LAYER.match(module)
    rest = layer.group("rest") if layer else None
    if layer and rest is None:
        if after_mlp:
            return Text("MLP 之后的残差相加：x + mlp(...)", "the residual add after the MLP: x + mlp(...)")
        return Text(
            "这一层本身：它的输入（上一层的输出）是对的",
            "this layer itself: its input (the previous layer's output) is right",
        )
    if rest == "input_layernorm":
        return Text(
            "这一层的第一个归一化（它的输入是对的）：零中心的 RMSNorm 乘 (1 + w)，统计量在 fp32 中，eps 来自配置",
            "the layer's first norm, whose input is right: a zero-centred RMSNorm scales by (1 + w), with fp32 "
            "statistics and the config's eps",
        )
    if rest == "post_attention_layernorm":
        return Text(
            "mixer 之后的残差相加（x + mixer(...)），或第二个归一化",
            "the residual add after the mixer (x + mixer(...)), or the second norm",
        )
    if rest == "mlp":
        return Text("MLP（SwiGLU）：它的输入是对的", "the MLP (SwiGLU), whose input is right")
    if rest in KINDS:
        if layer is not None and previous == f"layers.{layer.group('n')}.input_layernorm (output)":
            inside = {
                "linear_attn": Text(
                    "线性注意力本身（它的输入是对的）：投影、因果卷积（和它的状态）、q/k/v 的切分与分头、delta 规则、门控归一化、out_proj",
                    "the linear attention itself, whose input is right: the projections, the causal conv (and "
                    "its state), splitting q, k, v into heads, the delta rule, the gated norm, out_proj",
                ),
                "self_attn": Text(
                    "全注意力本身（它的输入是对的）：QK-Norm、RoPE（partial_rotary_factor、rope_theta、位置）、注意力、输出门、o_proj",
                    "the full attention itself, whose input is right: QK-norm, RoPE (partial_rotary_factor, "
                    "rope_theta, the positions), the attention, the output gate, o_proj",
                ),
            }
            return inside[rest]
        return Text(
            "这一层到 mixer 输出为止的部分：input_layernorm 或 mixer 本身（之前的层都是对的）",
            "this layer up to the mixer's output: its input_layernorm or the mixer itself (the layers before it "
            "are right)",
        )
    return Text("它和前一步之间的计算", "what is computed between it and the stage before")


def _first_wrong(name: str, previous: str | None, names: list[str]) -> Diagnosis:
    m = _STAGE.match(name)
    if m is None:
        before = (
            Text("", "")
            if previous is None
            else Text(f"，`{previous}` 还是对的", f"; `{previous}` is still right")
        )
        return Diagnosis(
            "first_stage",
            STRENGTH,
            Text(
                f"第一个不对的是 `{name}`{before.zh}", f"the first stage that differs is `{name}`{before.en}"
            ),
        )
    call, module, side = m.group("call"), m.group("module"), m.group("side")
    label = _label(module, side, names)
    between = _between(module, previous)
    first_call = _STAGE.match(names[0])
    first_call_name = first_call.group("call") if first_call else None
    if call is not None and call != first_call_name:
        # Every earlier call was right: this call reads something wrong from the cache.
        layer = _LAYER.match(module)
        kind = _layer_kind(layer.group("n"), names) if layer else None
        carried = {
            "linear_attn": Text(
                "线性注意力层从上一次调用带过来的卷积状态（最后 kernel-1 个输入）或递推状态",
                "what a linear-attention layer carries from the call before: the conv state (the last kernel-1 "
                "inputs) or the recurrent state",
            ),
            "self_attn": Text(
                "全注意力层的 KV 缓存（新的 k、v 要追加，query 要看到全部），或位置（要从已见过的 token 数接着数）",
                "a full-attention layer's KV cache (new k and v appended, the queries attend to all of it), or the "
                "positions (they go on from the number of tokens seen)",
            ),
        }.get(
            kind or "",
            Text("缓存从上一次调用带过来的东西", "what the cache carries from the call before"),
        )
        return Diagnosis(
            "cache_carry",
            STRENGTH,
            Text(
                f"之前的调用都对；在 {call} 中第一个不对的是 {label.zh}：问题在{carried.zh}",
                f"every earlier call is right; in {call} the first stage that differs is {label.en}: look at "
                f"{carried.en}",
            ),
        )
    at = f"{call} 中" if call else ""
    at_en = f" in {call}" if call else ""
    return Diagnosis(
        "first_stage",
        STRENGTH,
        Text(
            f"{at}第一个不对的是 {label.zh}，在它之前的都对。问题在：{between.zh}",
            f"the first stage that differs{at_en} is {label.en}; everything before it is right. Look at "
            f"{between.en}",
        ),
    )


def _missing(name: str, want: dict[str, Any], have: dict[str, Any]) -> Diagnosis:
    m = _STAGE.match(name)
    layer = _LAYER.match(m.group("module")) if m else None
    if layer:
        n = layer.group("n")
        wanted, found = _layer_kind(n, list(want)), _layer_kind(n, list(have))
        if wanted and found and wanted != found:
            return Diagnosis(
                "layer_schedule",
                STRENGTH,
                Text(
                    f"第 {n} 层在检查点的排布里是{KINDS[wanted].zh}（`{wanted}`），你的模型在这里是{KINDS[found].zh}"
                    f"（`{found}`）：每一层的类型来自配置的 layer_types",
                    f"layer {n} is {KINDS[wanted].en} (`{wanted}`) in the checkpoint's schedule, and your model has "
                    f"{KINDS[found].en} (`{found}`) there: each layer's type comes from the config's layer_types",
                ),
            )
    return Diagnosis(
        "first_stage",
        STRENGTH,
        Text(
            f"你的结果里没有 `{name}`：没有找到这个名字的模块，或者它没有被调用",
            f"`{name}` is missing from your results: no module of that name was found, or it was never called",
        ),
    )
