"""Cases for problem 215. Each returns observations; the judge compares them with the reference's.

Every observation is compared exactly. Loading copies values, so there is nothing to be
approximately right about: bf16 -> fp32 is exact, and fp32 -> bf16 rounds to nearest-even
the same way whether written as p.copy_(v), p.copy_(v.to(p.dtype)), p.data.copy_(v) or
through the detached views of model.state_dict() (checked on 100000 random values, and by
the two accepted solutions against the reference in every case). Strings and lists in the
report are compared exactly as well; the statement fixes their format.

The model is a toy with Qwen's names (embed_tokens, layers.N...., norm, lm_head tied to the
embedding) plus a persistent buffer per layer and a non-persistent inv_freq, built here so
that the learner's code never decides which names exist. Each case records, besides the
values and the report, which tensor objects were replaced, the caller's dict (its keys, and its
entries read back after every tensor the caller passed has been edited in place: an entry the
loader replaced does not show the edit), which caller's tensors changed, which model tensors
changed with the edit (shared storage), and lm_head after an in-place edit of the embedding
(tied: it shows the edit). The names are joined into one string so that a failing case names
the tensors involved. Until version 4 the tie and the dict's keys and objects were flags the
case computed (`is`, `==`), in the learner's process, where code under test decides what they
say; now the judge compares the data.

problem.toml's `forbidden` cannot guard a method of nn.Module (the runner's guards replace
module-level names only), so `_call` swaps nn.Module.load_state_dict and
nn.Module._load_from_state_dict for guards while the learner's function runs; a call is
reported as a forbidden API even if the learner's code catches the exception.

qwen35_checkpoint_layout and ignore_rules use a checkpoint laid out like Qwen3.5's published ones
(the text model under model.language_model., model.visual.* and mtp.* beside it): the keys under an
ignored prefix are observed one by one (where_extra_keys_went: "ignored", "unexpected" or neither),
because a report list of another length has no element in common with the reference's and so
would name no mistake; tests/problems/test_215_load_checkpoint.py loads a checkpoint saved by
transformers' Qwen3_5ForConditionalGeneration and compares with Qwen3_5ForCausalLM.from_pretrained.

one_loader_many_checkpoints (version 5) calls the loader three times in one case, each call
observed as one item of "calls": the defaults on a bf16 checkpoint; a larger model with Meta
Llama's names (tok_embeddings, output, a separate head) from an unprefixed fp32 checkpoint
without the head, with
prefix="" and tied=("output.weight", "tok_embeddings.weight"); a larger untied model with
tied=None. Tied names written into the code (wrong/hardcoded_tied_names, mutant 32:25) leave
the head missing, at its initial values, on the second call; anything kept from the first call (its names, shapes or
dtypes) shows on the later ones.

strict_raises_all holds all three kinds of problem at once, so a loader that raises only
when every kind is present (mutant 54:19, `and` for `or`) passed it; strict_single_problem
gives each kind alone, and each must raise and leave the model as it was.
"""

import contextlib

import torch
from torch import nn

from judge.core.casekit import case
from judge.core.checkers import exact

try:  # the runner's own exception, so that a call is reported as a forbidden API
    from judge.core.runner.guards import ForbiddenAPIError
except ImportError:  # pragma: no cover - the runner is always there in the sandbox

    class ForbiddenAPIError(RuntimeError):
        def __init__(self, name):
            super().__init__(f"{name} is forbidden in this problem")
            self.api = name


VOCAB, DIM, HIDDEN = 11, 8, 12
REPORT_KEYS = ("loaded", "missing", "unexpected", "mismatched", "ignored")

# ---------------------------------------------------------------- a toy model


class Norm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = Norm(dim)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim)
        self.register_buffer("decay", torch.zeros(hidden))  # persistent: part of the state


class Toy(nn.Module):
    """Qwen-like names: embed_tokens, layers.N...., norm, lm_head (tied to the embedding).
    Other sizes, and Meta Llama's names for the embedding and the head (tok_embeddings, output),
    on request."""

    def __init__(self, tie=True, n_layers=2, sizes=(VOCAB, DIM, HIDDEN), names=("embed_tokens", "lm_head")):
        super().__init__()
        vocab, dim, hidden = sizes
        self.embed_name, self.head_name = names
        setattr(self, self.embed_name, nn.Embedding(vocab, dim))
        self.layers = nn.ModuleList(Block(dim, hidden) for _ in range(n_layers))
        self.norm = Norm(dim)
        setattr(self, self.head_name, nn.Linear(dim, vocab, bias=False))
        if tie:
            self.head.weight = self.embed.weight
        # Computed, never saved: not part of the state dict.
        self.register_buffer("inv_freq", 0.5 ** torch.arange(dim // 2, dtype=torch.float32), persistent=False)

    @property
    def embed(self):
        return getattr(self, self.embed_name)

    @property
    def head(self):
        return getattr(self, self.head_name)


def _model(rng, tie=True, **kwargs):
    """A toy model whose every parameter and buffer holds known values (not the checkpoint's)."""
    m = Toy(tie=tie, **kwargs)
    with torch.no_grad():
        for t in m.state_dict(keep_vars=True).values():
            t.copy_(rng.normal(*t.shape))
    return m


def _state(m):
    return m.state_dict(keep_vars=True)


def _checkpoint(rng, m, dtype=torch.float32, prefix="model.", skip=()):
    """A checkpoint laid out like Qwen's: "model."-prefixed names, lm_head.weight without prefix."""
    sd = {}
    for name, t in _state(m).items():
        if name in skip:
            continue
        key = name if name.startswith(m.head_name + ".") else prefix + name
        sd[key] = rng.normal(*t.shape).to(dtype)
    return sd


# ---------------------------------------------------------------- calling and observing


@contextlib.contextmanager
def _builtin_loader_forbidden():
    """nn.Module.load_state_dict and its per-module helper raise while the learner's code runs.

    problem.toml's `forbidden` cannot reach methods of a class, so the cases guard them here.
    """
    called = []
    saved = {n: nn.Module.__dict__[n] for n in ("load_state_dict", "_load_from_state_dict")}

    def guard(api):
        def forbidden(*args, **kwargs):
            called.append(api)
            raise ForbiddenAPIError(api)

        return forbidden

    for n in saved:
        setattr(nn.Module, n, guard(f"torch.nn.Module.{n}"))
    try:
        yield called
    finally:
        for n, f in saved.items():
            setattr(nn.Module, n, f)
    if called:  # even if the learner's code caught the exception
        raise ForbiddenAPIError(called[0])


def _snapshot(m, sd):
    return {
        "objects": dict(_state(m)),
        "values": {k: v.detach().clone() for k, v in _state(m).items()},
        "keys": list(sd.keys()),
        "ckpt_objects": dict(sd),
        "ckpt_values": {k: v.clone() for k, v in sd.items()},
    }


def _call(impl, m, sd, **kwargs):
    with _builtin_loader_forbidden():
        return impl.load_checkpoint(m, sd, **kwargs)


def _names(names):
    return ", ".join(sorted(names)) or "none"


def _checkpoint_untouched(sd, snap):
    """The caller's dict after the call: its keys (as data), and which of its tensors changed."""
    changed = [
        k
        for k, v in snap["ckpt_values"].items()
        if not (v.dtype == snap["ckpt_objects"][k].dtype and torch.equal(snap["ckpt_objects"][k], v))
    ]
    return {"dict_keys": list(sd.keys()), "tensors_changed": _names(changed)}


def _mark_checkpoint(sd, snap):
    """Edit every tensor the caller passed in place (+100), then read the caller's dict: its
    entries are still those tensors, so each shows the edit; an entry the loader replaced by
    another object does not. (Observed as data: a case that asked `is` here would be asking in
    the learner's process.) A model tensor that shares storage with one changes too."""
    with torch.no_grad():
        for t in snap["ckpt_objects"].values():
            t.add_(100.0)
    return {k: _frozen(sd.get(k)) for k in snap["keys"]}


def _frozen(value):
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _observe(m, sd, snap, report=None):
    state = _state(m)
    obs = {
        "values": {k: v.detach().clone() for k, v in state.items()},
        "replaced_objects": _names(k for k, v in snap["objects"].items() if state.get(k) is not v),
        "non_persistent_inv_freq": m.inv_freq.clone(),
        "checkpoint": _checkpoint_untouched(sd, snap),
    }
    before = obs["values"]
    obs["checkpoint"]["entries_after_marking_every_tensor"] = _mark_checkpoint(sd, snap)
    obs["changes_with_checkpoint"] = _names(
        k for k, v in _state(m).items() if k in before and not torch.equal(v.detach(), before[k])
    )
    # Whether lm_head is the embedding's tensor (tied), seen in the data: edit the embedding in
    # place and observe the head, which shows the edit exactly when the two are one tensor.
    with torch.no_grad():
        m.embed.weight.add_(1000.0)
    obs["lm_head_after_editing_embedding"] = m.head.weight.detach().clone()
    if report is not None:
        # A list the report lacks is observed as None (a failed comparison that names it), not a KeyError.
        obs["report"] = {k: list(report[k]) if k in report else None for k in REPORT_KEYS}
    return obs


def _load_and_observe(impl, m, sd, extras=(), **kwargs):
    """Load and observe; for each checkpoint key in `extras`, also which list of the report holds
    it: one string per key, so that a key in the wrong list is a difference the judge can name."""
    snap = _snapshot(m, sd)
    report = _call(impl, m, sd, **kwargs)
    obs = _observe(m, sd, snap, report)
    if extras:
        prefix = kwargs.get("prefix", "model.")
        obs["where_extra_keys_went"] = {k: _where(report, k, prefix) for k in extras}
    return obs


def _where(report, key, prefix):
    stripped = key[len(prefix) :] if prefix and key.startswith(prefix) else key
    if key in report.get("ignored", ()):
        return "ignored"
    if key in report.get("unexpected", ()) or stripped in report.get("unexpected", ()):
        return "unexpected"
    return "in neither list"


# ---------------------------------------------------------------- cases


@case(points=8, public=True, checker=exact())
def full_load_bf16(impl, rng):
    """完整的 bf16 检查点装入 fp32 模型：键带 "model." 前缀，没有 lm_head（与嵌入共享）/
    a complete bf16 checkpoint into an fp32 model: "model."-prefixed keys, no lm_head (tied to the embedding)"""
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    return _load_and_observe(impl, m, sd)


@case(points=9, public=True, checker=exact())
def report_problems(impl, rng):
    """strict=False：缺失、多余、形状不符的条目都写进报告，其余照常加载 /
    strict=False: missing, unexpected and mismatched entries are all reported, the rest still loads"""
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight", "layers.1.up.weight", "layers.0.decay"})
    sd["model.layers.0.down.weight"] = rng.normal(HIDDEN, DIM).bfloat16()  # transposed shape
    sd["model.layers.0.gate.weight"] = rng.normal(HIDDEN, DIM).bfloat16()
    sd["model.inv_freq"] = torch.ones(DIM // 2)  # the model's inv_freq is not persistent
    return _load_and_observe(impl, m, sd, strict=False)


@case(points=8, checker=exact())
def fp32_not_aliased(impl, rng):
    """fp32 检查点装入 fp32 模型：要复制数值，不能与检查点共用存储（含非连续的张量）/
    an fp32 checkpoint into an fp32 model: copy the values, share no storage (non-contiguous tensors too)"""
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.float32, skip={"lm_head.weight"})
    sd["model.layers.0.down.weight"] = rng.normal(HIDDEN, DIM).t()  # a transposed view
    return _load_and_observe(impl, m, sd)


def _strict_attempt(impl, m, sd, problems, **kwargs):
    """Call with strict=True (the default; other arguments passed on): did it raise, which
    problems does the message name, and is the model (values and objects) and the caller's
    checkpoint as it was?"""
    snap = _snapshot(m, sd)
    try:
        _call(impl, m, sd, **kwargs)
    except ValueError as exc:
        message, raised = str(exc), True
    else:
        message, raised = "", False
    state = _state(m)
    changed = [k for k, v in snap["values"].items() if not torch.equal(state[k].detach(), v)]
    out = {
        "raised_value_error": raised,
        "message_names": {p: p in message for p in problems},
        "model_changed": _names(changed),
        "replaced_objects": _names(k for k, v in snap["objects"].items() if state.get(k) is not v),
        "checkpoint": _checkpoint_untouched(sd, snap),
    }
    out["checkpoint"]["entries_after_marking_every_tensor"] = _mark_checkpoint(sd, snap)
    return out


@case(points=7, checker=exact())
def strict_raises_all(impl, rng):
    """strict=True（默认）：检查完全部条目后抛出 ValueError，列出每个问题，模型保持不变 /
    strict=True (the default): check everything, then raise ValueError naming every problem; the model is left unchanged"""
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight", "layers.1.up.weight", "layers.0.decay"})
    sd["model.layers.1.down.bias"] = rng.normal(DIM + 1).bfloat16()
    sd["model.layers.2.up.weight"] = rng.normal(HIDDEN, DIM).bfloat16()
    sd["model.rotary_emb.inv_freq"] = torch.ones(DIM // 2)
    problems = [
        "layers.1.up.weight",
        "layers.0.decay",
        "layers.1.down.bias",
        "layers.2.up.weight",
        "rotary_emb.inv_freq",
    ]
    return _strict_attempt(impl, m, sd, problems)


@case(points=7, checker=exact())
def strict_single_problem(impl, rng):
    """strict=True 时一个问题就足以抛出 ValueError：只缺一个、只多一个、只有一个形状不符，各自都要抛出，模型不变 /
    under strict=True one problem is enough to raise: only one missing, only one unexpected, only one mismatched entry each raise ValueError and leave the model unchanged"""
    out = {}
    # Only missing: the first layer's norm weight is left out (lm_head still comes from the embedding).
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight", "layers.0.norm.weight"})
    out["only_missing"] = _strict_attempt(impl, m, sd, ["layers.0.norm.weight"])
    # Only unexpected: a complete checkpoint plus a tensor the model has no place for.
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    sd["model.layers.0.gate.weight"] = rng.normal(HIDDEN, DIM).bfloat16()
    out["only_unexpected"] = _strict_attempt(impl, m, sd, ["layers.0.gate.weight"])
    # Only mismatched: a complete checkpoint whose final norm has one element too many.
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    sd["model.norm.weight"] = rng.normal(DIM + 1).bfloat16()
    out["only_mismatched"] = _strict_attempt(impl, m, sd, ["norm.weight"])
    return out


@case(points=6, checker=exact())
def untied_head_from_embedding(impl, rng):
    """lm_head 与嵌入不共享的模型，检查点缺 lm_head：用嵌入的值填，但仍是两个张量 /
    an untied model and a checkpoint without lm_head: the head takes the embedding's values but stays a separate tensor"""
    m = _model(rng, tie=False)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    return _load_and_observe(impl, m, sd, strict=False)


@case(points=6, checker=exact())
def tied_head_in_checkpoint(impl, rng):
    """共享权重的模型，检查点同时有 embed_tokens 和 lm_head（值相同）：两个名字都算加载，仍共享 /
    a tied model and a checkpoint holding both embed_tokens and lm_head (equal values): both names load, still tied"""
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    sd["lm_head.weight"] = sd["model.embed_tokens.weight"].clone()
    return _load_and_observe(impl, m, sd, strict=False)


@case(points=6, checker=exact())
def tied_disabled(impl, rng):
    """tied=None：不做共享回退，缺 lm_head 就报告缺失 / tied=None: no fallback, a missing lm_head is reported missing"""
    m = _model(rng, tie=False)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    return _load_and_observe(impl, m, sd, tied=None, strict=False)


@case(points=6, checker=exact())
def buffers_and_prefixes(impl, rng):
    """持久 buffer 要加载，非持久的 inv_freq 不算；没有前缀的键、自定义前缀 "backbone." /
    persistent buffers load, the non-persistent inv_freq does not count; keys without a prefix, a custom prefix "backbone." """
    plain_model = _model(rng)
    plain = _checkpoint(rng, plain_model, skip={"lm_head.weight"}, prefix="")
    custom_model = _model(rng)
    custom = _checkpoint(rng, custom_model, skip={"lm_head.weight"}, prefix="backbone.")
    return {
        "no_prefix": _load_and_observe(impl, plain_model, plain),
        "backbone": _load_and_observe(impl, custom_model, custom, prefix="backbone."),
    }


@case(points=7, checker=exact())
def mixed_dtype_model(impl, rng):
    """bf16 模型（归一化权重为 fp32）装入 fp32 检查点：每个张量转成它自己的 dtype /
    a bf16 model with fp32 norm weights and an fp32 checkpoint: each tensor gets its own dtype"""
    m = _model(rng).to(torch.bfloat16)
    for mod in m.modules():
        if isinstance(mod, Norm):
            mod.float()
    sd = _checkpoint(rng, m, torch.float32, skip={"lm_head.weight"})
    return _load_and_observe(impl, m, sd)


@case(points=6, checker=exact())
def empty_checkpoint(impl, rng):
    """空的检查点，strict=False：全部缺失，什么也不加载 / an empty checkpoint with strict=False: all missing, nothing loaded"""
    m = _model(rng)
    return _load_and_observe(impl, m, {}, strict=False)


def _qwen35_checkpoint(rng, m, dtype=torch.bfloat16):
    """A checkpoint laid out like a real Qwen3.5 one (Qwen3_5ForConditionalGeneration): the text
    model under "model.language_model.", the vision tower under "model.visual.", the
    multi-token-prediction head under "mtp.", the tied lm_head left out."""
    sd = _checkpoint(rng, m, dtype, prefix="model.language_model.", skip={"lm_head.weight"})
    sd["model.visual.patch_embed.proj.weight"] = rng.normal(DIM, 3, 2, 2).to(dtype)
    sd["model.visual.blocks.0.attn.qkv.weight"] = rng.normal(3 * DIM, DIM).to(dtype)
    sd["model.visual.merger.linear_fc1.weight"] = rng.normal(DIM, DIM).to(dtype)
    sd["mtp.fc.weight"] = rng.normal(DIM, 2 * DIM).to(dtype)
    sd["mtp.layers.0.input_layernorm.weight"] = rng.normal(DIM).to(dtype)
    return sd


@case(points=10, public=True, checker=exact())
def qwen35_checkpoint_layout(impl, rng):
    """真实 Qwen3.5 检查点的布局：文本模型在 "model.language_model." 下，旁边是 "model.visual."（视觉塔）和 "mtp."；
    传 prefix="model.language_model."，视觉与 mtp 的键按默认的 ignore 跳过并列入 "ignored"，strict 不因它们报错；
    用默认的 prefix="model." 则什么也装不上 /
    a real Qwen3.5 checkpoint's layout: the text model under "model.language_model.", beside "model.visual."
    (the vision tower) and "mtp."; with prefix="model.language_model." the visual and mtp keys are skipped by
    the default ignore and listed in "ignored", and strict does not fail on them; the default prefix="model." loads nothing"""
    right = _model(rng)
    sd = _qwen35_checkpoint(rng, right)
    wrong_prefix = _model(rng)
    sd_again = _qwen35_checkpoint(rng, wrong_prefix)
    extras = [k for k in sd if not k.startswith("model.language_model.")]
    return {
        "prefix_language_model": _load_and_observe(impl, right, sd, extras, prefix="model.language_model."),
        "default_prefix": _load_and_observe(impl, wrong_prefix, sd_again, extras, strict=False),
    }


@case(points=6, checker=exact())
def ignore_rules(impl, rng):
    """ignore 按原始键（去前缀之前）的开头匹配："model." 布局里的 "model.visual.*" 也被跳过；"mtp_head.weight" 不以 "mtp." 开头，
    仍算多余；ignore=() 时视觉与 mtp 的键都算多余；被跳过的键不会让 strict 报错，但别的问题照样报错 /
    ignore matches the start of the raw key (before the prefix is stripped): "model.visual.*" in a "model." layout is
    skipped too; "mtp_head.weight" does not start with "mtp." and is unexpected; with ignore=() the visual and mtp
    keys are unexpected; ignored keys never make strict fail, other problems still do"""
    out = {}
    # A "model." checkpoint (as transformers' Qwen3_5ForCausalLM saves it) with a vision tower beside it.
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    sd["model.visual.blocks.0.mlp.fc1.weight"] = rng.normal(HIDDEN, DIM).bfloat16()
    sd["mtp_head.weight"] = rng.normal(DIM).bfloat16()
    extras = ["model.visual.blocks.0.mlp.fc1.weight", "mtp_head.weight"]
    out["model_prefix_with_visual"] = _load_and_observe(impl, m, sd, extras, strict=False)
    # Nothing ignored: the same keys are unexpected.
    m = _model(rng)
    sd = _qwen35_checkpoint(rng, m)
    extras = [k for k in sd if not k.startswith("model.language_model.")]
    out["ignore_nothing"] = _load_and_observe(
        impl, m, sd, extras, prefix="model.language_model.", ignore=(), strict=False
    )
    # A custom rule: only the vision tower is ignored, under its own name.
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    sd["vision_tower.proj.weight"] = rng.normal(DIM, DIM).bfloat16()
    out["custom_ignore"] = _load_and_observe(
        impl, m, sd, ["vision_tower.proj.weight"], ignore=("vision_tower.",), strict=False
    )
    # The Qwen3.5 layout with strict=False: where each visual and mtp key goes, whatever strict does.
    m = _model(rng)
    sd = _qwen35_checkpoint(rng, m)
    extras = [k for k in sd if not k.startswith("model.language_model.")]
    out["language_model_prefix"] = _load_and_observe(
        impl, m, sd, extras, prefix="model.language_model.", strict=False
    )
    # strict=True: ignored keys beside a missing tensor still raise, and nothing loads.
    m = _model(rng)
    sd = _qwen35_checkpoint(rng, m)
    del sd["model.language_model.layers.1.up.weight"]
    out["strict_missing_beside_ignored"] = _strict_attempt(
        impl, m, sd, ["layers.1.up.weight"], prefix="model.language_model."
    )
    return out


# Meta Llama's names for the embedding and the output layer.
LLAMA_NAMES = ("tok_embeddings", "output")
LARGER = (13, 12, 20)  # vocab, dim, hidden


@case(points=8, checker=exact())
def one_loader_many_checkpoints(impl, rng):
    """同一个进程里连续加载多个模型：先是默认参数的 bf16 检查点；再是 Meta Llama 命名（tok_embeddings / output，不共享）、
    更大尺寸、没有前缀的 fp32 检查点，传入对应的 prefix 和 tied；最后是不共享的更大模型，tied=None。每次都只按本次的参数和模型来 /
    one process loads several models in turn: first a bf16 checkpoint with the default arguments; then a larger model with
    Meta Llama's names (tok_embeddings / output, not tied) from an unprefixed fp32 checkpoint, with the matching prefix and tied;
    last a larger untied model with tied=None. Each call must follow its own arguments and model, nothing from an earlier call"""
    calls = []
    m = _model(rng)
    sd = _checkpoint(rng, m, torch.bfloat16, skip={"lm_head.weight"})
    calls.append(_load_and_observe(impl, m, sd))
    # Meta's consolidated checkpoints name the head "output.weight" and carry no prefix; this one
    # leaves the head out, so only the tied pair given here fills the model's separate head.
    m = _model(rng, tie=False, sizes=LARGER, names=LLAMA_NAMES)
    sd = _checkpoint(rng, m, torch.float32, prefix="", skip={"output.weight"})
    calls.append(
        _load_and_observe(
            impl, m, sd, prefix="", tied=("output.weight", "tok_embeddings.weight"), strict=False
        )
    )
    m = _model(rng, tie=False, sizes=LARGER)
    sd = _checkpoint(rng, m, torch.float32)
    calls.append(_load_and_observe(impl, m, sd, tied=None, strict=False))
    # One item per call: the judge can say "right on the first call, wrong on a later one".
    return {"calls": calls}
