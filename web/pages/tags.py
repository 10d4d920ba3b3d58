"""Problem tags in the reader's language. A package's tags are English words (problem.toml); the
Chinese page shows each in Chinese, and a tag not listed here as it is (a new package's word is
still shown, only untranslated until it is added)."""

from __future__ import annotations

from collections.abc import Iterable

# Names of code (gqa, rope, swiglu, safetensors, qwen3.5, bf16) are the same in both languages.
TAG_NAMES_ZH: dict[str, str] = {
    "activation": "激活函数",
    "assembly": "组装",
    "attention": "注意力",
    "autograd": "自动求导",
    "checkpoint": "检查点",
    "config": "配置",
    "convolution": "卷积",
    "cross-entropy": "交叉熵",
    "decoder-layer": "解码层",
    "decoding": "解码",
    "embedding": "嵌入",
    "gated-deltanet": "Gated DeltaNet",
    "gating": "门控",
    "generation": "生成",
    "hybrid": "混合架构",
    "kv-cache": "KV 缓存",
    "linear-attention": "线性注意力",
    "lm-head": "输出头",
    "masking": "掩码",
    "mlp": "MLP",
    "model": "整个模型",
    "moe": "MoE",
    "normalization": "归一化",
    "numerical-stability": "数值稳定",
    "position-encoding": "位置编码",
    "pre-norm": "前置归一化",
    "qk-norm": "QK 归一化",
    "recurrence": "递推",
    "residual": "残差",
    "routing": "路由",
    "sampling": "采样",
    "softmax": "softmax",
    "state-dict": "state dict",
    "top-k": "top-k",
    "top-p": "top-p",
    "weight-tying": "权重共享",
}


def tag_names(tags: Iterable[str], lang: str) -> list[str]:
    """The tags as the reader reads them."""
    if lang != "zh":
        return list(tags)
    return [TAG_NAMES_ZH.get(tag, tag) for tag in tags]
