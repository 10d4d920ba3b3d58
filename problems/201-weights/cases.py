"""Cases for problem 201. Each returns observations; the judge compares them with the reference's.

Everything is compared exactly: reading a checkpoint and copying its tensors into a module round
nothing (bf16 -> fp32 is exact, fp32 -> bf16 rounds to nearest-even the same way in copy_,
load_state_dict and .to()).

The checkpoints are package data (data/, written by make_checkpoint.py): data/home/models/qwen3.5
in the layout of Qwen's published Qwen3.5 (transformers' Qwen3_5ForConditionalGeneration: text
fields under text_config, model.language_model.*, model.visual.*, mtp.*, an untied lm_head),
data/sharded the same layout tied and split over two shards with model.safetensors.index.json,
and data/text-only a text-only checkpoint (Qwen3_5ForCausalLM: fields at the top, model.*, tied),
the layout of problem 217's. tests/problems/test_201_weights.py checks them against transformers.

load_weights is observed as the names it gives (one string), how many, and a few tensors by name,
each as it is stored (its dtype too) or "absent". Config as the value of each field the statement
names, or "absent". find_model as the folder it returns relative to the data folder; its
environment (QWEN_MODEL, HOME and USERPROFILE, which Path.home() reads on Windows) is set inside
the case and restored after. The refusals are observed with outcome() and by which of the names a
message must hold it holds (a test of two plain strings: `name in message`). The case where nothing
is found is hidden: in the practice kit, the learner's qwen/weights.py sits beside the kit's
tiny-qwen3.5, which find_model() rightly finds there.
"""

import contextlib
import os
from pathlib import Path

import torch
from torch import nn

from judge.core.casekit import case, data_path, outcome
from judge.core.checkers import exact

FIELDS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "layer_types",
    "rms_norm_eps",
    "linear_value_head_dim",
    "linear_num_value_heads",
    "head_dim",
    "vocab_size",
    "tie_word_embeddings",
    "rope_parameters",
    "model_type",
    "pad_token_id",
)
# A few tensors of each checkpoint, by the names load_weights gives them.
PICKED = (
    "embed_tokens.weight",
    "layers.0.input_layernorm.weight",
    "layers.0.linear_attn.A_log",
    "layers.0.linear_attn.norm.weight",
    "norm.weight",
    "lm_head.weight",
)
ABSENT = "absent"


def _root():
    return data_path("data")


def _fields(cfg):
    return {name: getattr(cfg, name, ABSENT) for name in FIELDS}


def _picked(W, names=PICKED):
    return {name: W.get(name, ABSENT) for name in names}


def _weights(W, names=PICKED):
    return {"names": "\n".join(sorted(W)), "count": len(W), "tensors": _picked(W, names)}


@contextlib.contextmanager
def _environment(qwen_model=None, home=None):
    """QWEN_MODEL set (or unset for None) and the home folder moved, restored afterwards."""
    keys = ("QWEN_MODEL", "HOME", "USERPROFILE")
    saved = {k: os.environ.get(k) for k in keys}
    try:
        os.environ.pop("QWEN_MODEL", None)
        if qwen_model is not None:
            os.environ["QWEN_MODEL"] = str(qwen_model)
        if home is not None:
            os.environ["HOME"] = os.environ["USERPROFILE"] = str(home)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _where(found):
    """The folder find_model returned, relative to the data folder ("/"-separated), and its name."""
    relative = Path(found).resolve().relative_to(_root().resolve())
    return {"folder": relative.as_posix(), "name": found.name}


def _refusal(call, expected, names):
    """outcome() of the call, and which of `names` ({label: text}) its message holds."""
    message = ""

    def run():
        nonlocal message
        try:
            call()
        except Exception as exc:
            message = str(exc)
            raise

    said = outcome(run, expected)
    return {"outcome": said, "names_in_message": {label: text in message for label, text in names.items()}}


# ---------------------------------------------------------------- modules to load into


class Norm(nn.Module):
    """The course's zero-centred RMSNorm (problem 204): x / rms(x) * (1 + weight)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1 + self.weight.float())).type_as(x)


class Attention(nn.Module):
    """A full-attention layer's names: projections without bias, per-head q/k norms."""

    def __init__(self, dim=8, heads=2, kv_heads=1, head_dim=4):
        super().__init__()
        self.q_proj = nn.Linear(dim, 2 * heads * head_dim, bias=False)
        self.k_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(heads * head_dim, dim, bias=False)
        self.q_norm = Norm(head_dim)
        self.k_norm = Norm(head_dim)


class Decay(nn.Module):
    """A parameter, a persistent buffer (part of the state) and a non-persistent one (not)."""

    def __init__(self, n=2):
        super().__init__()
        self.A_log = nn.Parameter(torch.zeros(n))
        self.register_buffer("dt_bias", torch.zeros(n))
        self.register_buffer("scratch", torch.full((n,), 7.0), persistent=False)


def _state(module):
    return dict(module.state_dict(keep_vars=True))


def _attention_weights(rng, prefix, dtype=torch.bfloat16):
    shapes = {
        "q_proj.weight": (16, 8),
        "k_proj.weight": (4, 8),
        "v_proj.weight": (4, 8),
        "o_proj.weight": (8, 8),
        "q_norm.weight": (4,),
        "k_norm.weight": (4,),
    }
    return {prefix + name: rng.normal(*shape).to(dtype) for name, shape in shapes.items()}


# ---------------------------------------------------------------- public


@case(points=10, public=True, checker=exact())
def config_multimodal(impl, rng):
    """`Config.load` 读真实 Qwen3.5 的布局：文本字段在 `text_config` 里 / `Config.load` on the layout of the published Qwen3.5: the text fields under `text_config`"""
    cfg = impl.Config.load(_root() / "home" / "models" / "qwen3.5")
    return {"fields": _fields(cfg)}


@case(points=10, public=True, checker=exact())
def weights_multimodal(impl, rng):
    """`load_weights` 读真实 Qwen3.5 的布局：去掉语言模型的前缀，不要视觉塔和 MTP / `load_weights` on the published Qwen3.5's layout: the language model's prefix stripped, no vision tower, no MTP"""
    return _weights(impl.load_weights(_root() / "home" / "models" / "qwen3.5"))


@case(points=10, public=True, checker=exact())
def load_norms(impl, rng):
    """`load` 把前缀下的条目装进 RMSNorm，返回这个模块；`norm.` 只取以它开头的名字 / `load` fills an RMSNorm from the entries under a prefix and returns it; `norm.` takes only names that start with it"""
    W = {
        "layers.0.input_layernorm.weight": rng.normal(8).to(torch.bfloat16),
        "layers.0.linear_attn.norm.weight": rng.normal(4).to(torch.bfloat16),
        "norm.weight": rng.normal(8).to(torch.bfloat16),
    }
    x = rng.normal(2, 3, 8)
    first = impl.load(Norm(8), W, "layers.0.input_layernorm.")
    final = impl.load(Norm(8), W, "norm.")
    gated = impl.load(Norm(4), W, "layers.0.linear_attn.norm.")
    calls = [first(x), final(x), gated(x[..., :4])]
    # A later checkpoint into the first norm again: its values, not the first call's.
    later = {name: (value.float() + 1).to(torch.bfloat16) for name, value in W.items()}
    again = impl.load(first, later, "layers.0.input_layernorm.")
    calls.append(again(x))
    return {"calls": calls, "weights": [first.weight, final.weight, gated.weight]}


@case(points=6, public=True, checker=exact())
def find_model_env(impl, rng):
    """`find_model` 先看环境变量 `QWEN_MODEL`（默认文件夹里也有检查点时也是它） / `find_model` takes `QWEN_MODEL` first (even when the default folder holds a checkpoint too)"""
    with _environment(qwen_model=_root() / "text-only", home=_root() / "home"):
        return _where(impl.find_model())


# ---------------------------------------------------------------- hidden


@case(points=8, checker=exact())
def config_text_only(impl, rng):
    """只有文本模型的检查点：字段在 config.json 的顶层 / A text-only checkpoint: the fields at the top of config.json"""
    return {"fields": _fields(impl.Config.load(str(_root() / "text-only")))}


@case(points=8, checker=exact())
def weights_text_only(impl, rng):
    """只有文本模型的检查点（第 217 题的布局）：去掉 `model.`，绑定的 lm_head 不在文件里 / A text-only checkpoint (problem 217's layout): `model.` stripped, the tied lm_head not in the file"""
    W = impl.load_weights(str(_root() / "text-only"))
    return _weights(W, (*PICKED, "layers.2.self_attn.q_proj.weight", "layers.1.mlp.down_proj.weight"))


@case(points=10, checker=exact())
def weights_sharded(impl, rng):
    """分片的检查点：索引文件列出的每个分片都要读 / A sharded checkpoint: every shard the index names is read"""
    W = impl.load_weights(_root() / "sharded")
    return _weights(W, (*PICKED, "layers.1.self_attn.k_norm.weight", "layers.1.mlp.up_proj.weight"))


@case(points=8, checker=exact())
def checkpoints_in_turn(impl, rng):
    """一个进程里轮流读两个检查点，每次都读自己的那个 / One process reads two checkpoints in turn, each call its own"""
    text_only, multimodal = _root() / "text-only", _root() / "home" / "models" / "qwen3.5"
    configs = [impl.Config.load(text_only), impl.Config.load(multimodal), impl.Config.load(text_only)]
    weights = [impl.load_weights(multimodal), impl.load_weights(text_only)]
    return {
        "configs": [_fields(c) for c in configs],
        "weights": [_weights(W) for W in weights],
    }


@case(points=6, checker=exact())
def find_model_default_folder(impl, rng):
    """没有设置 `QWEN_MODEL` 时看默认文件夹 `~/models/qwen3.5` / Without `QWEN_MODEL`, the default folder `~/models/qwen3.5`"""
    with _environment(home=_root() / "home"):
        return _where(impl.find_model())


@case(points=8, checker=exact())
def find_model_errors(impl, rng):
    """`QWEN_MODEL` 不是检查点文件夹，或哪里都没有检查点：`FileNotFoundError`，说清楚去哪里找 / `QWEN_MODEL` not a checkpoint folder, or no checkpoint anywhere: `FileNotFoundError` saying where it looked"""
    not_a_checkpoint = _root() / "home" / "models"
    with _environment(qwen_model=not_a_checkpoint, home=_root() / "home"):
        bad_env = _refusal(
            impl.find_model,
            FileNotFoundError,
            {"its value": str(not_a_checkpoint), "QWEN_MODEL": "QWEN_MODEL"},
        )
    with _environment(home=_root() / "text-only"):
        nothing = _refusal(
            impl.find_model, FileNotFoundError, {n: n for n in ("QWEN_MODEL", "~/models/qwen3.5")}
        )
    return {"bad_env": bad_env, "nothing": nothing}


@case(points=8, checker=exact())
def load_is_strict(impl, rng):
    """`load` 严格：缺少、多出或形状不对的名字都报错，并在消息里点名 / `load` is strict: a missing, unexpected or wrongly shaped name is an error that names it"""
    prefix = "layers.3.self_attn."
    full = _attention_weights(rng, prefix)
    missing = {k: v for k, v in full.items() if not k.endswith("k_norm.weight")}
    extra = dict(full)
    extra[prefix + "q_proj.bias"] = rng.normal(16).to(torch.bfloat16)
    wrong_shape = dict(full)
    wrong_shape[prefix + "o_proj.weight"] = rng.normal(8, 4).to(torch.bfloat16)
    complete = Attention()
    impl.load(complete, full, prefix)
    return {
        "complete": _state(complete),
        "missing": _refusal(
            lambda: impl.load(Attention(), missing, prefix), RuntimeError, {"k_norm.weight": "k_norm.weight"}
        ),
        "unexpected": _refusal(
            lambda: impl.load(Attention(), extra, prefix), RuntimeError, {"q_proj.bias": "q_proj.bias"}
        ),
        "wrong_shape": _refusal(
            lambda: impl.load(Attention(), wrong_shape, prefix),
            RuntimeError,
            {"o_proj.weight": "o_proj.weight"},
        ),
    }


@case(points=8, checker=exact())
def load_converts_dtype(impl, rng):
    """`load` 把值转成参数自己的 dtype：bf16 进 fp32 模块、fp32 进 bf16 模块，持久 buffer 也装 / `load` converts to each parameter's own dtype (bf16 into fp32, fp32 into bf16), persistent buffers included"""
    W = {
        "layers.0.linear_attn.A_log": rng.normal(2),
        "layers.0.linear_attn.dt_bias": rng.normal(2).to(torch.bfloat16),
        "layers.1.self_attn.q_norm.weight": rng.normal(4).to(torch.bfloat16),
        # A transposed view, as a weight may be after a conversion script.
        "layers.1.self_attn.o_proj.weight": rng.normal(8, 8).to(torch.bfloat16).t(),
    }
    fp32 = impl.load(Decay(), W, "layers.0.linear_attn.")
    # The same names with other shapes and dtypes, into a bf16 module of another size.
    other = {
        "layers.0.linear_attn.A_log": rng.normal(4).to(torch.bfloat16),
        "layers.0.linear_attn.dt_bias": rng.normal(4),
    }
    bf16 = impl.load(Decay(4).to(torch.bfloat16), other, "layers.0.linear_attn.")
    norm = impl.load(Norm(4), W, "layers.1.self_attn.q_norm.")
    o_proj = impl.load(nn.Linear(8, 8, bias=False), W, "layers.1.self_attn.o_proj.")
    return {
        "calls": [_state(fp32), _state(bf16), _state(norm), _state(o_proj)],
        "scratch": [fp32.scratch, bf16.scratch],
    }
