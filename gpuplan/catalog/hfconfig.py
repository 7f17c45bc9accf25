"""Turn a Hugging Face ``config.json`` into a :class:`~gpuplan.types.ModelSpec`.

Each model family names its fields in its own way (ChatGLM's ``num_layers`` and ``multi_query_group_num``,
Falcon's ``num_kv_heads``, MPT's ``d_model``, GPT-2's ``n_embd``); the readers below take them as they are.
The flags they set mirror the module layout of the transformers class (or, for remote-code models, of the
model repo's modeling file) so that :func:`gpuplan.estimate.params.count_params` is exact. Only JSON is read:
remote code is never imported or executed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from gpuplan.errors import GpuplanError, ModelConfigError
from gpuplan.types import ModelSpec

MAX_CONFIG_BYTES = 1024 * 1024
_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "fp16": "fp16", "bf16": "bf16",
           "fp32": "fp32", "float": "fp32", "half": "fp16"}

Config = dict[str, Any]


def read_config_file(path: Path, name: str | None = None) -> ModelSpec:
    """Read and parse a config.json from disk: a regular file of at most 1 MiB, JSON nested at most
    :data:`MAX_DEPTH` deep."""
    from gpuplan.catalog.csvload import FileProblem, read_regular_file

    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # read_regular_file says why
    if size > MAX_CONFIG_BYTES:
        raise ModelConfigError(f"'{path}' is {size / 1024 / 1024:.1f} MiB; a config.json is a few KiB.",
                               "pass the model's config.json, not a weights file.")
    try:
        raw = read_regular_file(path, MAX_CONFIG_BYTES)
    except FileProblem as problem:
        raise ModelConfigError(f"'{path}': {problem.problem}", problem.fix) from None
    try:
        data = _loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelConfigError(f"'{path}' is not valid JSON ({exc}).",
                               "pass the model's config.json as published on its Hugging Face page.") from None
    if not isinstance(data, dict):
        raise ModelConfigError(f"'{path}' holds JSON but not an object.", "pass a config.json.")
    return parse_config(data, name or path.parent.name or path.stem)


MAX_DEPTH = 32  # a config.json nests 2-4 levels (rope_scaling, quantization_config, text_config)


def _loads(text: str) -> Any:
    """JSON, refusing nesting deeper than :data:`MAX_DEPTH` before the parser recurses into it (100,000 nested
    arrays would end in a RecursionError)."""
    depth = 0
    for bracket in re.finditer(r"[\[\]{}]", re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise ModelConfigError(f"the JSON nests more than {MAX_DEPTH} levels deep; a config.json nests a few.",
                                   "pass the model's config.json as published.")
    return json.loads(text)


def parse_config(cfg: Config, name: str) -> ModelSpec:
    """The architecture described by ``cfg``; raises :class:`ModelConfigError` if it cannot be read."""
    if "text_config" in cfg and isinstance(cfg["text_config"], dict):  # multimodal wrapper (Gemma 3)
        inner = dict(cfg["text_config"])
        inner.setdefault("model_type", _text_type(cfg.get("model_type", "")))
        inner.setdefault("torch_dtype", cfg.get("torch_dtype"))
        if "tie_word_embeddings" in cfg:  # the wrapper ties by its own field (Qwen3.5-4B: true there, absent inside)
            inner["tie_word_embeddings"] = cfg["tie_word_embeddings"]
        spec = parse_config(inner, name)
        return _with_note(replace(spec, vision_tower=True), "vision tower not counted: text model only, served so "
                          "(--language-model-only)")
    _check_finite(cfg, name)
    model_type = str(cfg.get("model_type", "")).lower()
    if model_type in _UNSUPPORTED:
        raise ModelConfigError(f"'{name}' is a {model_type} model: {_UNSUPPORTED[model_type]}.",
                               "gpuplan sizes decoder-only transformers whose layers it models (and BERT); "
                               "see 'gpuplan models'.")
    if cfg.get("auto_map") and model_type not in _READERS:
        raise ModelConfigError(f"'{name}' has auto_map: its architecture is custom code in the model repository, "
                               f"for model_type '{cfg.get('model_type')}', an architecture gpuplan does not know. "
                               "gpuplan never runs that code, and sizing the model as another architecture would "
                               "be a guess.", f"gpuplan reads these model types: {', '.join(SUPPORTED_MODEL_TYPES)}; "
                               "if the custom code only renames one of them, copy the config.json and set "
                               "model_type to it.")
    if model_type not in _READERS:
        raise ModelConfigError(f"'{name}': field model_type is '{cfg.get('model_type')}', an architecture gpuplan "
                               "does not know; sizing it as another would be a guess (its experts, attention or "
                               "layer pattern may differ).",
                               f"gpuplan reads these model types: {', '.join(SUPPORTED_MODEL_TYPES)}; if the model "
                               "really is one of them (a renamed Llama, say), copy its config.json and set "
                               "model_type to that type.")
    _refuse_unread(cfg, name, model_type)
    reader = _READERS[model_type]
    try:
        spec = reader(cfg, name)
    except GpuplanError:  # already says what is wrong (and is a ValueError: not the clause below)
        raise
    except KeyError as exc:
        raise ModelConfigError(f"config of '{name}' (model_type '{model_type}') lacks the key {exc}.",
                               "pass the complete config.json of the model.") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelConfigError(f"config of '{name}' has a value of the wrong type ({exc}).",
                               "pass the config.json as published.") from None
    except ZeroDivisionError:
        raise ModelConfigError(f"config of '{name}' has zero attention heads or zero layers.",
                               "check num_attention_heads and num_hidden_layers in the config.json.") from None
    _sanity(spec)
    _check_sizes(cfg, name)
    _check_read(cfg, spec)
    checkpoint = _checkpoint_format(cfg.get("quantization_config"))
    if checkpoint:
        spec = _with_note(replace(spec, native_dtype=checkpoint, weight_block=_weight_block(cfg)),
                          f"checkpoint published in {checkpoint}")
    if cfg.get("auto_map"):  # its modelling or tokenizer code lives in the repository: engines must be told to load it
        spec = replace(spec, remote_code=True)
    return spec


# Sizes that are whole numbers above 0 wherever a config gives them (0 or less is a broken config, not "none").
_POSITIVE_KEYS = (
    "hidden_size", "n_embd", "d_model", "intermediate_size", "intermediate_size_mlp", "n_inner", "ffn_hidden_size",
    "ffn_dim", "inner_hidden_size", "moe_intermediate_size", "num_attention_heads", "n_head", "n_heads",
    "num_key_value_heads", "num_kv_heads", "multi_query_group_num", "num_hidden_layers", "n_layer", "n_layers",
    "num_layers", "head_dim", "kv_channels", "v_head_dim", "qk_rope_head_dim", "vocab_size", "padded_vocab_size",
    "max_position_embeddings", "n_positions", "seq_length", "max_sequence_length", "max_seq_len",
    "num_experts_per_tok", "num_local_experts", "n_routed_experts", "expansion_ratio",
)
MAX_SIZE = 10**12  # beyond any layer, vocabulary or context
_EXPERT_COUNTS = ("num_local_experts", "num_experts_per_tok")


def _no_moe_layers(cfg: Config) -> bool:
    """A Llama 4 text config that builds no MoE layer (:func:`_llama4_dense`); its expert counts may be 0."""
    return _text_type(str(cfg.get("model_type", "")).lower()) == "llama4_text" and _llama4_dense(cfg)


def _check_finite(cfg: Config, name: str) -> None:
    """Every number in ``cfg`` is finite: JSON's ``Infinity``, ``NaN`` and ``1e400`` are refused, naming the
    field. The one exception is an unbounded upper clamp on Mamba's step size, which Nemotron-H configs publish as
    ``time_step_limit: [0.0, Infinity]`` (it changes no size)."""
    for path, value in _numbers(cfg, ""):
        if path == "time_step_limit[1]" and value == math.inf:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelConfigError(f"'{name}': field {path} is {value}, not a finite number.",
                                   f"set {path} to the model's value, as in the published config.json.")


def _check_sizes(cfg: Config, name: str) -> None:
    """The sizes of :data:`_POSITIVE_KEYS` are above 0 and at most :data:`MAX_SIZE` wherever the config gives
    them, also those a reader replaces when falsy (``head_dim: 0``)."""
    for key in _POSITIVE_KEYS:
        value = cfg.get(key)
        if key in _EXPERT_COUNTS and value == 0 and _no_moe_layers(cfg):
            continue  # a dense Llama 4 (Llama Guard 4) declares num_local_experts 0: no expert is built
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not 0 < value <= MAX_SIZE:
            shown = f"{value:g}" if abs(value) < 1e15 else f"a {len(str(int(value)))}-digit number"
            raise ModelConfigError(f"'{name}': field {key} is {shown}; a size must be above 0 and at most "
                                   f"{MAX_SIZE:.0e}.", f"set {key} to the model's value, as in the published "
                                   "config.json.")


def _numbers(value: Any, path: str, depth: int = 0) -> list[tuple[str, Any]]:
    """(dotted path, number) for every number in a JSON value, at most :data:`MAX_DEPTH` levels down."""
    if depth > MAX_DEPTH:
        raise ModelConfigError(f"the config nests more than {MAX_DEPTH} levels deep at {path}.",
                               "pass the model's config.json as published.")
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _numbers(v, f"{path}.{k}" if path else str(k), depth + 1)]
    if isinstance(value, list):
        return [n for i, v in enumerate(value) for n in _numbers(v, f"{path}[{i}]", depth + 1)]
    return [(path, value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def _checkpoint_format(qc: Any) -> str | None:
    """The weight format a pre-quantized checkpoint ships in (its ``quantization_config``), or None.

    DeepSeek-V3/R1 publish block-wise FP8 weights (``quant_method: fp8``); AWQ and GPTQ repositories carry
    ``quant_method`` and ``bits``. bitsandbytes configs quantize at load time, so they leave the format alone."""
    if not isinstance(qc, dict):
        return None
    quant = str(qc.get("quant_method", "")).lower()
    bits = qc.get("bits", qc.get("w_bit", 4))
    if quant == "fp8":
        return "fp8"
    if quant == "mxfp4":  # gpt-oss: MoE experts in MXFP4, attention, router, embeddings and head in BF16
        return "mxfp4"
    if quant in ("awq", "gptq") and bits in (4, 8):
        return f"{quant}-int{bits}" if (quant, bits) != ("awq", 8) else None
    return None


def _weight_block(cfg: Config) -> tuple[int, int] | None:
    """(rows, columns) of a block-wise quantized checkpoint's scale tiles (``quantization_config``
    ``weight_block_size``, DeepSeek-V3/R1: [128, 128]), or None where the config gives no such pair."""
    block = (cfg.get("quantization_config") or {}).get("weight_block_size")
    if not (isinstance(block, list) and len(block) == 2 and all(type(b) is int and b > 0 for b in block)):
        return None
    return block[0], block[1]


def _text_type(model_type: str) -> str:
    return {"gemma3": "gemma3_text", "gemma4": "gemma4_text", "llama4": "llama4_text", "qwen3_5": "qwen3_5_text",
            "qwen3_5_moe": "qwen3_5_moe_text"}.get(model_type, model_type)


# Config fields that change the architecture in ways a reader must model; a config that has one its reader
# does not handle is refused, naming the field, instead of being sized as if the field were absent.
_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_LINEAR_ATTENTION_KEYS = ("linear_num_value_heads", "linear_key_head_dim", "full_attention_interval",
                          "attn_type_list", "block_types")
_KNOWN_LAYER_TYPES = {"full_attention", "sliding_attention", "chunked_attention"}
# Readers that model Gated DeltaNet linear-attention layers (:func:`_qwen3_hybrid`): they read the keys above.
_HYBRID_TYPES = ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text")
_GDN_KEYS = ("linear_num_value_heads", "linear_key_head_dim", "full_attention_interval")
# Readers that model DeepSeek Sparse Attention's indexer (:func:`_deepseek`): DeepSeek-V3.2 and GLM-5.
_DSA_TYPES = ("deepseek_v32", "glm_moe_dsa")
# Fields of architectures a ModelSpec cannot hold, whatever model_type the config claims: (key, what it means).
_UNMODELLED_KEYS = (
    ("index_n_heads", "a sparse-attention indexer (DeepSeek Sparse Attention), whose weights and key cache"),
    ("block_configs", "per-layer block shapes (DeciLM / Nemotron NAS: layers that differ in width or skip "
                      "attention), whose parameters"),
    ("hybrid_override_pattern", "hybrid Mamba-2 / attention / MoE layers (Nemotron-H), whose parameters and "
                                "recurrent state"),
)


def _refuse_unread(cfg: Config, name: str, model_type: str) -> None:
    for key, what in _UNMODELLED_KEYS:
        if cfg.get(key) and not ((key == "index_n_heads" and model_type in _DSA_TYPES)
                                 or (key == "hybrid_override_pattern" and model_type == "nemotron_h")):
            raise ModelConfigError(f"'{name}' (model_type '{model_type}') has {key}: {what} gpuplan does not "
                                   "model.", "choose a model whose layers gpuplan models; see 'gpuplan models'.")
    hybrid = model_type in _HYBRID_TYPES
    for key in _LINEAR_ATTENTION_KEYS:
        if cfg.get(key) and not (hybrid and key in _GDN_KEYS):
            raise ModelConfigError(f"'{name}' (model_type '{model_type}') has {key}: linear-attention / hybrid "
                                   "layers, whose parameters and recurrent state gpuplan does not model.",
                                   "choose a model with standard attention layers; see 'gpuplan models'.")
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):
        known = _KNOWN_LAYER_TYPES | ({"linear_attention"} if hybrid else set()) | (
            {"linear_attention", "mlp", "moe"} if model_type == "nemotron_h" else set())
        odd = sorted({str(x) for x in layer_types} - known)
        if odd:
            raise ModelConfigError(f"'{name}': layer_types holds {', '.join(odd)}, a layer kind gpuplan does not "
                                   "model.", "choose a model with full or sliding-window attention layers.")


def _check_read(cfg: Config, spec: ModelSpec) -> None:
    """The reader used every architecture field the config has (experts, latent attention)."""
    for key in _EXPERT_KEYS:
        value = cfg.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1 and not spec.is_moe:
            raise ModelConfigError(f"'{spec.name}': the config sets {key} = {value} (a mixture of experts), but "
                                   f"gpuplan's reader for model_type '{spec.model_type}' is for dense models.",
                                   "check model_type in the config.json; a MoE needs its MoE model type.")
    if cfg.get("kv_lora_rank") and not spec.is_mla:
        raise ModelConfigError(f"'{spec.name}': the config sets kv_lora_rank (latent attention), which the "
                               f"reader for model_type '{spec.model_type}' does not model.",
                               "check model_type in the config.json.")


def _with_note(spec: ModelSpec, note: str) -> ModelSpec:
    return replace(spec, notes=(*spec.notes, note))


def _sanity(spec: ModelSpec) -> None:
    checks = [
        ("number of layers", spec.n_layers, 1, 1000), ("hidden size", spec.hidden, 1, 200_000),
        ("attention heads", spec.n_heads, 1, 4096), ("KV heads", spec.n_kv_heads, 1, 4096),
        ("head size", spec.head_dim, 1, 4096), ("FFN size", spec.ffn_hidden, 1, 2_000_000),
        ("vocabulary", spec.vocab, 1, 10_000_000), ("experts", spec.n_experts, 0, 100_000),
        ("max positions", spec.max_positions, 1, 100_000_000),
    ]
    for label, value, low, high in checks:
        if not low <= value <= high:
            shown = str(value) if abs(value) < 10**15 else f"{len(str(abs(value)))} digits long"
            raise ModelConfigError(f"'{spec.name}': {label} {shown} is outside [{low}, {high}].",
                                   "check the config.json; this is not a plausible transformer.")
    if spec.n_heads % spec.n_kv_heads:
        raise ModelConfigError(f"'{spec.name}': {spec.n_heads} heads do not divide into {spec.n_kv_heads} KV heads.",
                               "check num_key_value_heads in the config.json.")
    if spec.n_experts and not 0 < spec.moe_ffn_hidden <= 2_000_000:
        raise ModelConfigError(f"'{spec.name}': expert FFN size {spec.moe_ffn_hidden} is outside [1, 2000000].",
                               "check moe_intermediate_size (or intermediate_size) in the config.json.")
    negative = [f.name for f in fields(spec) if type(getattr(spec, f.name)) is int and getattr(spec, f.name) < 0]
    if negative:
        raise ModelConfigError(f"'{spec.name}': {', '.join(negative)} below 0.", "check the config.json.")
    if spec.n_experts and not 0 < spec.n_active_experts <= spec.n_experts:
        raise ModelConfigError(f"'{spec.name}': {spec.n_active_experts} active of {spec.n_experts} experts.",
                               "check num_experts_per_tok in the config.json.")
    if spec.n_experts and (spec.n_expert_groups, spec.n_routed_groups) != (1, 1):
        _check_groups(spec)


def _check_groups(spec: ModelSpec) -> None:
    """The router's groups split the experts evenly and the chosen groups hold a token's top-k (transformers
    reshapes the scores to n_group rows and takes top-k of the unmasked ones)."""
    groups, routed = spec.n_expert_groups, spec.n_routed_groups
    if groups < 1 or spec.n_experts % groups or not 1 <= routed <= groups:
        raise ModelConfigError(f"'{spec.name}': {spec.n_experts} experts do not split into {groups} groups with "
                               f"{routed} chosen per token.", "check n_group and topk_group in the config.json.")
    if spec.n_active_experts > routed * (spec.n_experts // groups):
        raise ModelConfigError(f"'{spec.name}': top-{spec.n_active_experts} experts do not fit in the {routed} chosen "
                               f"expert groups of {spec.n_experts // groups}.", "check topk_group in the config.json.")


def _first(cfg: Config, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if key in cfg and cfg[key] is not None:
            return cfg[key]
    if default is None:
        raise KeyError(keys[0])
    return default


def _dtype(cfg: Config, default: str = "fp32") -> str:
    raw = cfg.get("torch_dtype") or cfg.get("dtype")
    return _DTYPES.get(str(raw).lower(), default) if raw else default


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ValueError(f"{value!r} is not a whole number")
    return int(value)


def _base(cfg: Config, name: str, **overrides: Any) -> dict[str, Any]:
    """Fields shared by Llama-style configs; families override what differs."""
    hidden = _int(_first(cfg, "hidden_size", "n_embd", "d_model"))
    n_heads = _int(_first(cfg, "num_attention_heads", "n_head", "n_heads"))
    n_kv = _int(_first(cfg, "num_key_value_heads", "num_kv_heads", default=n_heads))
    head_dim = _int(cfg.get("head_dim") or hidden // n_heads)
    fields: dict[str, Any] = dict(
        name=name, model_type=str(cfg.get("model_type", "")), hidden=hidden, n_heads=n_heads,
        n_kv_heads=n_kv, head_dim=head_dim, n_layers=_int(_first(cfg, "num_hidden_layers", "n_layer", "n_layers")),
        ffn_hidden=_int(_first(cfg, "intermediate_size", "n_inner", "ffn_hidden_size", default=4 * hidden)),
        vocab=_int(_first(cfg, "vocab_size", "padded_vocab_size")),
        tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        max_positions=_int(_first(cfg, "max_position_embeddings", "n_positions", "seq_length",
                                  "max_sequence_length", "max_seq_len", default=2048)),
        native_dtype=_dtype(cfg),
        qkv_bias=bool(cfg.get("attention_bias", False)), out_bias=bool(cfg.get("attention_bias", False)),
        mlp_bias=bool(cfg.get("mlp_bias", False)),
        attn_softcap=float(cfg.get("attn_logit_softcapping") or 0.0),
        final_softcap=float(cfg.get("final_logit_softcapping") or 0.0),
    )
    window = cfg.get("sliding_window")
    if window and cfg.get("use_sliding_window", True):
        fields.update(sliding_window=_int(window), n_sliding_layers=fields["n_layers"])
    fields.update(overrides)
    return fields


def _llama_like(cfg: Config, name: str) -> ModelSpec:
    """Llama, Mistral, Yi, TinyLlama, SmolLM3, Baichuan 2, InternLM2, and unknown Llama-style configs."""
    if "intermediate_size" not in cfg:
        raise KeyError("intermediate_size")
    spec = _base(cfg, name)
    if cfg.get("model_type") == "internlm2":
        spec.update(qkv_bias=bool(cfg.get("bias", False)), out_bias=bool(cfg.get("bias", False)),
                    mlp_bias=bool(cfg.get("bias", False)))
    if cfg.get("model_type") == "baichuan" and cfg.get("model_max_length"):
        spec.update(max_positions=_int(cfg["model_max_length"]), positional="alibi"
                    if spec["n_layers"] >= 40 else "rope")
    return ModelSpec(**spec)


def _qwen2(cfg: Config, name: str) -> ModelSpec:
    spec = _base(cfg, name, qkv_bias=True, out_bias=False)
    layers = spec["n_layers"]
    if cfg.get("use_sliding_window"):
        max_window_layers = _int(cfg.get("max_window_layers", layers))
        spec.update(n_sliding_layers=max(0, layers - max_window_layers))
    else:
        spec.update(sliding_window=None, n_sliding_layers=0)
    if cfg.get("model_type") in ("qwen2_moe", "qwen3_moe") and _int(cfg.get("num_experts", 0)):
        spec.update(_qwen_moe(cfg))
    if str(cfg.get("model_type")).startswith("qwen3"):
        spec.update(qkv_bias=bool(cfg.get("attention_bias", False)),
                    out_bias=bool(cfg.get("attention_bias", False)), qk_norm=True)
    return ModelSpec(**spec)


def _qwen_moe(cfg: Config) -> dict[str, Any]:
    if cfg.get("mlp_only_layers"):
        raise ValueError("mlp_only_layers is not supported")
    shared = _int(cfg.get("shared_expert_intermediate_size", 0))
    return dict(
        n_experts=_int(cfg["num_experts"]), n_active_experts=_int(cfg["num_experts_per_tok"]),
        moe_ffn_hidden=_int(cfg["moe_intermediate_size"]), moe_every=_int(cfg.get("decoder_sparse_step", 1)),
        n_shared_experts=1 if shared else 0, shared_ffn_hidden=shared, shared_expert_gate=bool(shared),
    )


def _mixtral(cfg: Config, name: str) -> ModelSpec:
    spec = _base(cfg, name, n_experts=_int(cfg["num_local_experts"]),
                 n_active_experts=_int(cfg["num_experts_per_tok"]))
    spec.update(moe_ffn_hidden=spec["ffn_hidden"])
    return ModelSpec(**spec)


def _gemma(cfg: Config, name: str) -> ModelSpec:
    mt = str(cfg.get("model_type"))
    spec = _base(cfg, name, tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))
    if mt in ("gemma2", "gemma3_text", "gemma3"):
        spec.update(norms_per_layer=4)
        window = cfg.get("sliding_window")
        if window:
            pattern = _int(cfg.get("sliding_window_pattern", 2 if mt == "gemma2" else 6))
            layer_types = cfg.get("layer_types")
            n_sliding = (sum(1 for t in layer_types if t == "sliding_attention") if layer_types
                         else sum(1 for i in range(spec["n_layers"]) if (i + 1) % pattern))
            spec.update(sliding_window=_int(window), n_sliding_layers=n_sliding)
    if mt in ("gemma3_text", "gemma3"):
        spec.update(qk_norm=True)
    return ModelSpec(**spec)


# Gemma 4 fields that change weights or cache in ways a ModelSpec cannot hold: (key, what it is)
_GEMMA4_UNMODELLED = (
    ("hidden_size_per_layer_input", "per-layer input embeddings (Gemma 4 E2B, E4B: a second embedding table and a "
                                    "gate and projection per layer)"),
    ("num_kv_shared_layers", "layers that reuse an earlier layer's KV cache and have no k/v projections"),
    ("use_double_wide_mlp", "MLPs twice as wide in the KV-sharing layers"),
    ("attention_bias", "biased attention projections"),
)


def _gemma4(cfg: Config, name: str) -> ModelSpec:
    """Gemma 4 text model (transformers models/gemma4 ``Gemma4ForCausalLM``, 5.24.0): Gemma 3's four norms per layer
    and q/k norms, sliding-window layers of ``head_dim`` heads and ``num_key_value_heads`` KV heads, full-attention
    layers of ``global_head_dim`` heads with ``num_global_key_value_heads`` KV heads and, under ``attention_k_eq_v``,
    no v_proj; with ``enable_moe_block`` (26B-A4B) every layer runs a routed MoE (fused gate/up experts) and the dense
    MLP side by side — the dense MLP counted as a shared expert — with three more norms, a router scale per hidden
    unit and a scale per expert."""
    for key, what in _GEMMA4_UNMODELLED:
        if cfg.get(key):
            raise ModelConfigError(f"'{name}': {key} is {cfg[key]}: {what}, which gpuplan does not model.",
                                   "choose Gemma 4 31B or 26B-A4B; see 'gpuplan models'.")
    layer_types = cfg.get("layer_types")
    if not isinstance(layer_types, list) or set(layer_types) - {"sliding_attention", "full_attention"}:
        raise ModelConfigError(f"'{name}': layer_types must list sliding_attention or full_attention for each layer.",
                               "pass the config.json as published.")
    k_eq_v = bool(cfg.get("attention_k_eq_v", False))
    global_kv = cfg.get("num_global_key_value_heads") if k_eq_v else None
    spec = _base(cfg, name, tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), norms_per_layer=4,
                 qk_norm=True, sliding_window=_int(cfg["sliding_window"]),
                 n_sliding_layers=sum(1 for t in layer_types if t == "sliding_attention"),
                 global_head_dim=_int(cfg.get("global_head_dim", 512)), global_k_eq_v=k_eq_v)
    spec.update(global_kv_heads=_int(global_kv) if global_kv else spec["n_kv_heads"])
    if len(layer_types) != spec["n_layers"]:
        raise ModelConfigError(f"'{name}': layer_types lists {len(layer_types)} layers but num_hidden_layers is "
                               f"{spec['n_layers']}.", "pass the config.json as published.")
    if spec["n_heads"] % spec["global_kv_heads"]:
        raise ModelConfigError(f"'{name}': {spec['n_heads']} heads do not divide into {spec['global_kv_heads']} global "
                               "KV heads.", "check num_global_key_value_heads in the config.json.")
    if cfg.get("enable_moe_block"):
        n_experts = _int(cfg["num_experts"])
        spec.update(n_experts=n_experts, n_active_experts=_int(cfg["top_k_experts"]),
                    moe_ffn_hidden=_int(cfg["moe_intermediate_size"]), n_shared_experts=1,
                    shared_ffn_hidden=spec["ffn_hidden"],
                    extra_params=spec["n_layers"] * (4 * spec["hidden"] + n_experts))
    return ModelSpec(**spec)


def _phi(cfg: Config, name: str) -> ModelSpec:
    spec = _base(cfg, name, qkv_bias=True, out_bias=True, mlp_bias=True, gated_mlp=False, norm_bias=True,
                 norms_per_layer=1, lm_head_bias=True, parallel_attn=True)
    return ModelSpec(**spec)


def _phi3(cfg: Config, name: str) -> ModelSpec:
    return ModelSpec(**_base(cfg, name))


def _falcon(cfg: Config, name: str) -> ModelSpec:
    hidden = _int(cfg["hidden_size"])
    n_heads = _int(cfg["num_attention_heads"])
    new_arch = bool(cfg.get("new_decoder_architecture", False))
    if new_arch:
        n_kv = _int(cfg.get("num_kv_heads", n_heads))
    elif cfg.get("multi_query", True):
        n_kv = 1
    else:
        n_kv = n_heads
    parallel = bool(cfg.get("parallel_attn", True))
    n_ln = _int(cfg.get("num_ln_in_parallel_attn") or (2 if new_arch else 1)) if parallel else 2
    bias = bool(cfg.get("bias", False))
    spec = _base(cfg, name, n_kv_heads=n_kv, gated_mlp=False, norm_bias=True, norms_per_layer=n_ln,
                 qkv_bias=bias, out_bias=bias, mlp_bias=bias, parallel_attn=parallel,
                 tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                 ffn_hidden=_int(cfg.get("ffn_hidden_size") or 4 * hidden),
                 positional="alibi" if cfg.get("alibi") else "rope")
    return ModelSpec(**spec)


def _mpt(cfg: Config, name: str) -> ModelSpec:
    d_model = _int(cfg["d_model"])
    attn = cfg.get("attn_config") or {}
    biased = cfg.get("no_bias", True) is False  # llm-foundry's default: biased linears and LayerNorms
    learned = not attn.get("alibi", True)
    spec = _base(cfg, name, gated_mlp=False, ffn_hidden=_int(cfg.get("expansion_ratio", 4)) * d_model,
                 tied_embeddings=True, positional="learned" if learned else "alibi",
                 qkv_bias=biased, out_bias=biased, mlp_bias=biased, norm_bias=biased)
    if learned:  # MPT without ALiBi learns a position table of max_seq_len rows (wpe)
        spec.update(learned_positions=spec["max_positions"])
    return ModelSpec(**spec)


def _gpt2(cfg: Config, name: str) -> ModelSpec:
    positions = _int(_first(cfg, "n_positions", "max_position_embeddings", default=1024))
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                 tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), positional="learned",
                 learned_positions=positions, max_positions=positions)
    if cfg.get("model_type") == "gpt_bigcode" and cfg.get("multi_query", True):
        spec.update(n_kv_heads=1)
    return ModelSpec(**spec)


def _gpt_neox(cfg: Config, name: str) -> ModelSpec:
    hidden = _int(cfg["hidden_size"])
    n_heads = _int(cfg["num_attention_heads"])
    bias = bool(cfg.get("attention_bias", True))
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, qkv_bias=bias, out_bias=bias, mlp_bias=True,
                 head_dim=hidden // n_heads, parallel_attn=bool(cfg.get("use_parallel_residual", True)))
    return ModelSpec(**spec)


def _nemotron(cfg: Config, name: str) -> ModelSpec:
    """Nemotron-3 and Nemotron-4 (transformers NemotronForCausalLM; NeMo NemotronConfig): a non-gated MLP (up, then
    squared ReLU, then down), LayerNorm1P with a bias, biases on the linears only where the config sets them,
    rotary on part of each head, untied embeddings."""
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, mlp_bias=bool(cfg.get("mlp_bias", False)))
    return ModelSpec(**spec)


def _gptj(cfg: Config, name: str) -> ModelSpec:
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, mlp_bias=True, norms_per_layer=1,
                 lm_head_bias=True, parallel_attn=True)
    return ModelSpec(**spec)


def _bloom(cfg: Config, name: str) -> ModelSpec:
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                 embed_norm=True, tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                 positional="alibi", max_positions=_int(cfg.get("seq_length", 2048)))
    return ModelSpec(**spec)


def _opt(cfg: Config, name: str) -> ModelSpec:
    if cfg.get("word_embed_proj_dim", cfg["hidden_size"]) != cfg["hidden_size"]:
        raise ValueError("OPT with word_embed_proj_dim != hidden_size is not supported")
    positions = _int(cfg.get("max_position_embeddings", 2048))
    bias = bool(cfg.get("enable_bias", True))
    final = bool(cfg.get("do_layer_norm_before", True)) and not cfg.get("_remove_final_layer_norm", False)
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, qkv_bias=bias, out_bias=bias, mlp_bias=bias,
                 ffn_hidden=_int(cfg["ffn_dim"]), positional="learned", learned_positions=positions + 2,
                 max_positions=positions, final_norm=final,
                 tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))
    return ModelSpec(**spec)


def _bert(cfg: Config, name: str) -> ModelSpec:
    hidden = _int(cfg["hidden_size"])
    positions = _int(cfg.get("max_position_embeddings", 512))
    # BertForMaskedLM: MLM head = dense H×H + bias, LayerNorm, decoder tied to the embedding + bias V
    head = hidden * hidden + hidden + 2 * hidden
    spec = _base(cfg, name, gated_mlp=False, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                 positional="learned", learned_positions=positions, token_types=_int(cfg.get("type_vocab_size", 2)),
                 embed_norm=True, final_norm=False, tied_embeddings=True, lm_head_bias=True, encoder_only=True,
                 extra_params=head, native_dtype=_dtype(cfg, "fp32"))
    return ModelSpec(**spec)


def _deepseek(cfg: Config, name: str) -> ModelSpec:
    qk_nope = _int(cfg.get("qk_nope_head_dim", 128))
    qk_rope = _int(cfg.get("qk_rope_head_dim", 64))
    n_routed = _int(cfg.get("n_routed_experts") or 0)
    spec = _base(cfg, name, head_dim=qk_nope + qk_rope, v_head_dim=_int(cfg.get("v_head_dim", 128)),
                 q_lora_rank=_int(cfg.get("q_lora_rank") or 0), kv_lora_rank=_int(cfg["kv_lora_rank"]),
                 qk_rope_head_dim=qk_rope, qk_nope_head_dim=qk_nope)
    spec.update(n_kv_heads=spec["n_heads"])
    if n_routed:
        spec.update(n_experts=n_routed, n_active_experts=_int(cfg["num_experts_per_tok"]),
                    n_shared_experts=_int(cfg.get("n_shared_experts") or 0),
                    moe_ffn_hidden=_int(cfg["moe_intermediate_size"]),
                    n_dense_layers=_int(cfg.get("first_k_dense_replace", 0)),
                    moe_every=_int(cfg.get("moe_layer_freq", 1)), **_expert_groups(cfg))
        spec["shared_ffn_hidden"] = spec["moe_ffn_hidden"] * spec["n_shared_experts"]
    if cfg.get("num_nextn_predict_layers"):
        spec["notes"] = ("multi-token-prediction layer not counted (transformers does not build it)",)
    if str(cfg.get("model_type")) in _DSA_TYPES:  # DeepSeek Sparse Attention's lightning indexer
        spec.update(index_heads=_int(cfg["index_n_heads"]), index_head_dim=_int(cfg["index_head_dim"]),
                    index_topk=_int(cfg["index_topk"]))
        if not spec["q_lora_rank"]:
            raise ModelConfigError(f"'{name}': DeepSeek Sparse Attention's indexer reads the query's low-rank "
                                   "projection, but q_lora_rank is not set.", "pass the config.json as published.")
    if str(cfg.get("model_type")) == "glm_moe_dsa":
        _check_glm5_layers(cfg, name, spec)
    return ModelSpec(**spec)


# transformers' config defaults of n_group / topk_group where they are not 1 / 1 (DeepseekV3Config,
# DeepseekV32Config, 5.24.0): the DeepSeek-V3 preset's config.json leaves them out and is built with 8 / 4
_GROUP_DEFAULTS = {"deepseek_v3": (8, 4), "deepseek_v32": (8, 4)}


def _expert_groups(cfg: Config) -> dict[str, int]:
    """``n_expert_groups`` and ``n_routed_groups`` of a group-limited router: transformers' DeepseekV3TopkRouter
    (and its copies in GLM-4.5, GLM-5, Nemotron-H) always picks a token's top-k within its best ``topk_group`` of
    ``n_group`` groups of consecutive experts; DeepseekV2Moe only under ``topk_method`` "group_limited_greedy" (its
    default is "greedy": top-k over all experts). DeepSeek-AI 2024, DeepSeek-V2, arXiv:2405.04434, sec. 2.1.3
    ("device-limited routing", M = 3); DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 2.1.2 ("node-limited
    routing", M = 4)."""
    model_type = str(cfg.get("model_type"))
    if model_type == "deepseek_v2" and cfg.get("topk_method", "greedy") != "group_limited_greedy":
        return {}
    groups, routed = _GROUP_DEFAULTS.get(model_type, (1, 1))
    return {"n_expert_groups": _int(cfg.get("n_group") or groups),
            "n_routed_groups": _int(cfg.get("topk_group") or routed)}


def _check_glm5_layers(cfg: Config, name: str, spec: dict[str, Any]) -> None:
    """GLM-5 (transformers models/glm_moe_dsa, 5.24.0: the DeepSeek-V3.2 layout) may list per layer whether it runs
    its own indexer (``indexer_types``: "full") or reuses the previous layer's picks ("shared", no indexer weights
    or key cache), and which MLP it has (``mlp_layer_types``). A ModelSpec holds an indexer in every attending layer
    and dense MLPs in the first ``first_k_dense_replace`` layers only, so other patterns are refused."""
    layers = spec["n_layers"]
    shared = [t for t in cfg.get("indexer_types") or [] if t != "full"]
    if shared or _int(cfg.get("index_topk_freq") or 1) != 1 or cfg.get("index_topk_pattern"):
        raise ModelConfigError(f"'{name}': indexer_types (or index_topk_freq / index_topk_pattern) has layers that "
                               "reuse another layer's sparse-attention picks ('shared'), whose missing indexer "
                               "weights and keys gpuplan does not model.",
                               "choose GLM-5 or GLM-5.1, whose every layer runs its indexer; see 'gpuplan models'.")
    mlp_types = cfg.get("mlp_layer_types")
    dense = spec.get("n_dense_layers", 0)
    if mlp_types is not None and list(mlp_types) != ["dense"] * dense + ["sparse"] * (layers - dense):
        raise ModelConfigError(f"'{name}': mlp_layer_types is not {dense} dense layers followed by MoE layers "
                               f"(first_k_dense_replace {dense}), a layer pattern gpuplan does not model.",
                               "pass the config.json as published.")


def _chatglm(cfg: Config, name: str) -> ModelSpec:
    """ChatGLM-6B (GLM-1 layout) and ChatGLM2/3, GLM-4 (multi-query groups); remote code in the model repo."""
    hidden = _int(cfg["hidden_size"])
    n_heads = _int(cfg["num_attention_heads"])
    layers = _int(cfg["num_layers"])
    if "inner_hidden_size" in cfg:  # ChatGLM-6B: LayerNorm, biased linears, GELU MLP
        return ModelSpec(
            name=name, model_type="chatglm", n_layers=layers, hidden=hidden, n_heads=n_heads, n_kv_heads=n_heads,
            head_dim=hidden // n_heads, ffn_hidden=_int(cfg["inner_hidden_size"]), vocab=_int(cfg["vocab_size"]),
            gated_mlp=False, tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
            max_positions=_int(cfg.get("max_sequence_length", 2048)), native_dtype=_dtype(cfg, "fp16"),
            norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
        )
    groups = _int(cfg["multi_query_group_num"]) if cfg.get("multi_query_attention") else n_heads
    bias = bool(cfg.get("add_bias_linear", False))
    return ModelSpec(
        name=name, model_type="chatglm", n_layers=layers, hidden=hidden, n_heads=n_heads, n_kv_heads=groups,
        head_dim=_int(cfg.get("kv_channels", hidden // n_heads)), ffn_hidden=_int(cfg["ffn_hidden_size"]),
        vocab=_int(_first(cfg, "padded_vocab_size", "vocab_size")),
        tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        max_positions=_int(_first(cfg, "seq_length", "max_position_embeddings", default=2048)),
        native_dtype=_dtype(cfg, "fp16"), norm_bias=not cfg.get("rmsnorm", True),
        qkv_bias=bool(cfg.get("add_qkv_bias", False)) or bias, out_bias=bias, mlp_bias=bias,
        final_norm=bool(cfg.get("post_layer_norm", True)),
    )


def _qwen_v1(cfg: Config, name: str) -> ModelSpec:
    """Qwen (v1), remote code: c_attn with bias, gated MLP whose ``intermediate_size`` is twice each branch."""
    spec = _base(cfg, name, ffn_hidden=_int(cfg["intermediate_size"]) // 2, qkv_bias=True,
                 max_positions=_int(_first(cfg, "seq_length", "max_position_embeddings", default=2048)),
                 tied_embeddings=bool(cfg.get("tie_word_embeddings", False)))
    if cfg.get("bf16"):
        spec.update(native_dtype="bf16")
    return ModelSpec(**spec)


def _glm_paper(cfg: Config, name: str) -> ModelSpec:
    """GLM-130B as described in its paper (GeGLU FFN, LayerNorm, biased linears, tied embedding)."""
    spec = _base(cfg, name, norm_bias=True, qkv_bias=True, out_bias=True, mlp_bias=True,
                 tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), native_dtype=_dtype(cfg, "fp16"))
    return ModelSpec(**spec)


def _sliding_from_layer_types(cfg: Config, spec: dict[str, Any]) -> None:
    """Sliding-window layers as ``layer_types`` lists them (gpt-oss alternates sliding and full layers)."""
    types = cfg.get("layer_types")
    window = cfg.get("sliding_window")
    if isinstance(types, list) and window:
        spec.update(sliding_window=_int(window), n_sliding_layers=sum(1 for x in types if x == "sliding_attention"))
    elif isinstance(types, list):
        spec.update(sliding_window=None, n_sliding_layers=0)


def _gpt_oss(cfg: Config, name: str) -> ModelSpec:
    """gpt-oss (transformers GptOssForCausalLM): biased attention with per-head sinks, a biased router, and
    experts whose fused gate/up and down projections carry biases."""
    n_experts = _int(cfg["num_local_experts"])
    spec = _base(cfg, name, qkv_bias=True, out_bias=True, mlp_bias=True, n_experts=n_experts,
                 n_active_experts=_int(_first(cfg, "num_experts_per_tok", "experts_per_token")),
                 moe_ffn_hidden=_int(cfg["intermediate_size"]))
    _sliding_from_layer_types(cfg, spec)
    # per layer: the router's bias (one per expert) and the attention sinks (one per head)
    spec.update(extra_params=spec["n_layers"] * (n_experts + spec["n_heads"]))
    return ModelSpec(**spec)


def _llama4(cfg: Config, name: str) -> ModelSpec:
    """Llama 4 text model (Llama4ForCausalLM): every ``interleave_moe_layer_step``-th layer a MoE of routed
    experts plus one shared expert (both ``intermediate_size`` wide), the others dense MLPs
    ``intermediate_size_mlp`` wide; RoPE layers attend within chunks of ``attention_chunk_size``. A Llama 4
    without MoE layers (:func:`_llama4_dense`) has only the dense MLPs."""
    layers = cfg.get("moe_layers")
    if cfg.get("interleave_moe_layer_step", 1) == 0 and layers:
        raise ModelConfigError(f"'{name}': interleave_moe_layer_step is 0 (no MoE layer) but moe_layers lists "
                               f"{layers}.", "pass the config.json as published; a dense Llama 4 (Llama Guard 4) "
                               "has interleave_moe_layer_step 0 and no moe_layers.")
    if _llama4_dense(cfg):
        spec = _base(cfg, name, ffn_hidden=_int(cfg["intermediate_size_mlp"]))
    else:
        spec = _base(cfg, name, ffn_hidden=_int(cfg["intermediate_size_mlp"]),
                     n_experts=_int(cfg["num_local_experts"]), n_active_experts=_int(cfg["num_experts_per_tok"]),
                     moe_ffn_hidden=_int(cfg["intermediate_size"]), n_shared_experts=1,
                     shared_ffn_hidden=_int(cfg["intermediate_size"]),
                     moe_every=_int(cfg.get("interleave_moe_layer_step", 1)))
        every = spec["moe_every"]
        if layers is not None and list(layers) != [i for i in range(spec["n_layers"]) if (i + 1) % every == 0]:
            raise ValueError("moe_layers other than every interleave_moe_layer_step-th layer are not supported")
    chunk = cfg.get("attention_chunk_size")
    rope_layers = cfg.get("no_rope_layers") or _llama4_default_rope_layers(cfg, spec["n_layers"])
    if chunk and isinstance(rope_layers, list):  # 1 = a RoPE layer, which attends within its chunk
        spec.update(sliding_window=_int(chunk), n_sliding_layers=sum(1 for x in rope_layers if x),
                    notes=("chunked local attention counted as a sliding window of attention_chunk_size",))
    return ModelSpec(**spec)


def _llama4_default_rope_layers(cfg: Config, n_layers: int) -> list[int]:
    """The RoPE (chunked-attention) layers of a Llama 4 config that lists none: transformers' Llama4TextConfig reads
    a missing or empty ``no_rope_layers`` as every layer a RoPE layer but each ``no_rope_layer_interval``-th (default
    4), which attends globally without RoPE (huggingface/transformers @b17cfe48c5a9631dcf9f57f3865a055903800f81
    src/transformers/models/llama4/configuration_llama4.py ``default_no_rope_layers``): 36 of Scout's and Maverick's
    48 layers attend within their chunk."""
    interval = _int(cfg.get("no_rope_layer_interval", 4))
    return [int((i + 1) % interval != 0) for i in range(n_layers)]


def _llama4_dense(cfg: Config) -> bool:
    """A Llama 4 text config without MoE layers: ``moe_layers: []`` (transformers builds every layer as a dense MLP)
    or ``interleave_moe_layer_step: 0`` (Llama Guard 4's config.json, with ``num_local_experts: 0``; vLLM and SGLang
    read step 0 as no MoE layer)."""
    layers = cfg.get("moe_layers")
    return cfg.get("interleave_moe_layer_step", 1) == 0 or (isinstance(layers, list) and not layers)


def _qwen3_hybrid(cfg: Config, name: str) -> ModelSpec:
    """Qwen3-Next and Qwen3.5 (dense and MoE): Gated DeltaNet linear-attention layers interleaved with gated
    full-attention layers (``layer_types``, or every ``full_attention_interval``-th layer attends), Qwen3's q/k norms,
    and for the MoE models Qwen-MoE experts with a gated shared expert (transformers models/qwen3_next and
    models/qwen3_5(_moe) modeling files, 5.24.0: q_proj is twice the query width for the output gate)."""
    spec = _base(cfg, name, qk_norm=True, attn_output_gate=bool(cfg.get("attn_output_gate", True)))
    spec.update(sliding_window=None, n_sliding_layers=0)
    if not spec["attn_output_gate"]:
        raise ModelConfigError(f"'{name}': attn_output_gate is false, but Qwen3-Next and Qwen3.5 attention always has "
                               "its output gate (transformers builds it whatever the field says).",
                               "pass the config.json as published.")
    layers = spec["n_layers"]
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):
        if len(layer_types) != layers:
            raise ModelConfigError(f"'{name}': layer_types lists {len(layer_types)} layers but num_hidden_layers is "
                                   f"{layers}.", "pass the config.json as published.")
        n_linear = sum(1 for t in layer_types if t == "linear_attention")
    else:
        interval = _int(cfg.get("full_attention_interval", 4))
        n_linear = sum(1 for i in range(layers) if (i + 1) % interval)
    spec.update(n_linear_layers=n_linear, linear_k_heads=_int(cfg["linear_num_key_heads"]),
                linear_v_heads=_int(cfg["linear_num_value_heads"]), linear_k_dim=_int(cfg["linear_key_head_dim"]),
                linear_v_dim=_int(cfg["linear_value_head_dim"]),
                linear_conv_kernel=_int(cfg.get("linear_conv_kernel_dim", 4)),
                linear_state_dtype=_DTYPES.get(str(cfg.get("mamba_ssm_dtype", "float32")).lower(), "fp32"))
    if spec["linear_v_heads"] % spec["linear_k_heads"]:
        raise ModelConfigError(f"'{name}': {spec['linear_v_heads']} linear value heads do not divide into "
                               f"{spec['linear_k_heads']} key heads.", "check linear_num_key_heads in the config.json.")
    if _int(cfg.get("num_experts", 0)):
        spec.update(_qwen_moe(cfg))
    spec["notes"] = ("linear-attention (Gated DeltaNet) layers keep a fixed recurrent state per sequence, not a KV "
                     "cache",)
    if cfg.get("mtp_num_hidden_layers") or cfg.get("num_nextn_predict_layers"):
        spec["notes"] += ("multi-token-prediction layer not counted (transformers does not build it)",)
    return ModelSpec(**spec)


def _glm4_moe(cfg: Config, name: str) -> ModelSpec:
    """GLM-4.5 / 4.5-Air (Glm4MoeForCausalLM): DeepSeek-style MoE (shared experts, leading dense layers) with
    standard grouped-query attention, biased q/k/v and optional q/k norms."""
    spec = _base(cfg, name, qkv_bias=bool(cfg.get("attention_bias", False)), out_bias=False,
                 qk_norm=bool(cfg.get("use_qk_norm", False)), n_experts=_int(cfg["n_routed_experts"]),
                 n_active_experts=_int(cfg["num_experts_per_tok"]),
                 n_shared_experts=_int(cfg.get("n_shared_experts") or 0),
                 moe_ffn_hidden=_int(cfg["moe_intermediate_size"]),
                 n_dense_layers=_int(cfg.get("first_k_dense_replace", 0)), **_expert_groups(cfg))
    spec["shared_ffn_hidden"] = spec["moe_ffn_hidden"] * spec["n_shared_experts"]
    if cfg.get("num_nextn_predict_layers"):
        spec["notes"] = ("multi-token-prediction layer not counted (transformers does not build it)",)
    return ModelSpec(**spec)


_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
# block names of ``layers_block_type`` / ``layer_types`` (transformers NemotronHConfig, and its legacy names)
_NEMOTRON_BLOCK_NAMES = {"mamba": "M", "linear_attention": "M", "attention": "*", "full_attention": "*", "mlp": "-",
                         "moe": "E"}


def _nemotron_h(cfg: Config, name: str) -> ModelSpec:
    """Nemotron-H and Nemotron 3 (transformers models/nemotron_h, 5.24.0: ``NemotronHForCausalLM``): a stack of
    single blocks, each a norm and one mixer, spelled by ``hybrid_override_pattern`` — Mamba-2 ("M"), grouped-query
    attention without biases ("*"), a squared-ReLU MLP without gate ("-") or a MoE of such experts plus one shared
    expert ("E"), whose experts may work in a projected space (``moe_latent_size``: Nemotron 3 Super, Ultra).
    gpuplan pairs every FFN block with a token-mixer block: ``n_layers`` counts the Mamba and attention
    blocks, ``n_layers_without_ffn`` those left without an FFN."""
    pattern = cfg.get("hybrid_override_pattern")
    listed = cfg.get("layers_block_type") or cfg.get("layer_types")  # Nemotron 3 Ultra lists the blocks by name
    if pattern is None and isinstance(listed, list):
        pattern = "".join(_NEMOTRON_BLOCK_NAMES.get(str(b), "?") for b in listed)
    if not isinstance(pattern, str) or set(pattern) - set(_NEMOTRON_BLOCKS):
        raise ModelConfigError(f"'{name}': hybrid_override_pattern is '{pattern}'; it spells one block per layer with "
                               "M (Mamba-2), * (attention), - (MLP) and E (MoE).", "pass the config.json as published.")
    for key in ("use_bias", "mamba_proj_bias", "attention_bias"):
        if cfg.get(key):
            raise ModelConfigError(f"'{name}': {key} is true; gpuplan models Nemotron-H's projections without biases, "
                                   "as every published config has them.", "pass the config.json as published.")
    n_mamba, n_attention, n_mlp, n_moe = (pattern.count(c) for c in "M*-E")
    if n_mlp and n_moe:
        raise ModelConfigError(f"'{name}': hybrid_override_pattern mixes MLP (-) and MoE (E) blocks, which gpuplan "
                               "does not model in one model.", "pass the config.json as published.")
    if n_mlp + n_moe > n_mamba + n_attention:
        raise ModelConfigError(f"'{name}': hybrid_override_pattern has more FFN blocks (- or E) than Mamba and "
                               "attention blocks, a layout gpuplan does not model.",
                               "pass the config.json as published.")
    mixers = n_mamba + n_attention
    spec = _base({"num_hidden_layers": len(pattern), **cfg}, name, n_layers=mixers, gated_mlp=False, qkv_bias=False,
                 out_bias=False,
                 n_kv_heads=_int(cfg.get("num_key_value_heads") or _first(cfg, "num_attention_heads")),
                 head_dim=_int(_first(cfg, "head_dim", "attention_head_dim", default=128)),
                 n_layers_without_ffn=mixers - n_mlp - n_moe, n_linear_layers=n_mamba, linear_kind="mamba2",
                 linear_k_heads=_int(_first(cfg, "n_groups", "mamba_n_groups", default=8)),
                 linear_k_dim=_int(_first(cfg, "ssm_state_size", default=128)),
                 linear_v_heads=_int(_first(cfg, "mamba_num_heads", default=128)),
                 linear_v_dim=_int(_first(cfg, "mamba_head_dim", default=64)),
                 linear_conv_kernel=_int(_first(cfg, "conv_kernel", "mamba_d_conv", default=4)),
                 linear_state_dtype=_DTYPES.get(str(cfg.get("mamba_ssm_cache_dtype", "float32")).lower(), "fp32"))
    if n_moe:
        if cfg.get("mlp_bias"):
            raise ModelConfigError(f"'{name}': mlp_bias is true in a MoE Nemotron-H, whose experts have no biases "
                                   "while its shared expert would.", "pass the config.json as published.")
        spec.update(n_experts=_int(cfg["n_routed_experts"]), n_active_experts=_int(cfg["num_experts_per_tok"]),
                    moe_ffn_hidden=_int(cfg["moe_intermediate_size"]), n_shared_experts=1,
                    shared_ffn_hidden=_int(cfg["moe_shared_expert_intermediate_size"]),
                    moe_latent=_int(cfg.get("moe_latent_size") or 0), **_expert_groups(cfg))
    if spec["linear_v_heads"] % spec["linear_k_heads"]:
        raise ModelConfigError(f"'{name}': {spec['linear_v_heads']} Mamba heads do not divide into "
                               f"{spec['linear_k_heads']} groups.", "check n_groups in the config.json.")
    spec["notes"] = (f"{n_mamba} Mamba-2 layers keep a fixed recurrent state per sequence, not a KV cache; "
                     f"{n_attention} attention layers",)
    if cfg.get("num_nextn_predict_layers"):
        spec["notes"] += ("multi-token-prediction layer not counted (transformers does not build it)",)
    return ModelSpec(**spec)


_READERS: dict[str, Callable[[Config, str], ModelSpec]] = {
    "gpt_oss": _gpt_oss, "llama4_text": _llama4, "glm4_moe": _glm4_moe, "kimi_k2": _deepseek,
    "llama": _llama_like, "mistral": _llama_like, "yi": _llama_like, "smollm3": _llama_like,
    "baichuan": _llama_like, "internlm2": _llama_like, "qwen2": _qwen2, "qwen2_moe": _qwen2, "qwen3": _qwen2,
    "qwen3_moe": _qwen2, "mixtral": _mixtral, "gemma": _gemma, "gemma2": _gemma, "gemma3_text": _gemma,
    "phi": _phi, "phi3": _phi3, "falcon": _falcon, "mpt": _mpt, "gpt2": _gpt2, "gpt_bigcode": _gpt2,
    "gpt_neox": _gpt_neox, "gptj": _gptj, "bloom": _bloom, "opt": _opt, "bert": _bert,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "deepseek_v32": _deepseek, "glm_moe_dsa": _deepseek,
    "chatglm": _chatglm, "qwen": _qwen_v1, "glm": _glm_paper, "nemotron_h": _nemotron_h, "gemma4_text": _gemma4,
    "qwen3_next": _qwen3_hybrid, "qwen3_5_text": _qwen3_hybrid, "qwen3_5_moe_text": _qwen3_hybrid,
    "nemotron": _nemotron,
}
SUPPORTED_MODEL_TYPES = tuple(sorted(_READERS))
_UNSUPPORTED = {
    "t5": "an encoder-decoder model", "mt5": "an encoder-decoder model", "bart": "an encoder-decoder model",
    "mamba": "a state-space model without attention layers", "mamba2": "a state-space model without attention",
    "rwkv": "a recurrent model without attention layers", "whisper": "a speech encoder-decoder model",
    "deci": "a model with per-layer block shapes (block_configs: layers that differ in width or skip attention) "
            "that gpuplan does not model",
}
