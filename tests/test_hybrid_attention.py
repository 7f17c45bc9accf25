"""Qwen3-Next / Qwen3.5: Gated DeltaNet linear-attention layers between gated full-attention layers.

Parameter counts and LoRA sizes are checked against transformers and PEFT building the same (tiny) configs on the
meta device; cache sizes against the tensor shapes vLLM allocates, worked out by hand.
"""

from __future__ import annotations

import re

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.errors import ModelConfigError
from gpuplan.estimate.memory import kv_bytes_per_token, kv_cache_bytes, linear_state_bytes, lora_params, max_context
from gpuplan.estimate.params import count_params
from gpuplan.types import InferSetup

# 8 layers, every 4th attends: 6 Gated DeltaNet layers and 2 full-attention layers
TINY = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000, "linear_num_key_heads": 2,
        "linear_num_value_heads": 4, "linear_key_head_dim": 32, "linear_value_head_dim": 48,
        "linear_conv_kernel_dim": 4, "full_attention_interval": 4, "tie_word_embeddings": False}
TINY_MOE = {**TINY, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
            "shared_expert_intermediate_size": 128, "decoder_sparse_step": 1, "mlp_only_layers": []}


def _built(model_type: str, cfg: dict[str, object], class_name: str) -> object:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with torch.device("meta"):
        return getattr(transformers, class_name)(transformers.AutoConfig.for_model(model_type, **cfg))


@pytest.mark.parametrize(("model_type", "cfg", "class_name"), [
    ("qwen3_5_text", TINY, "Qwen3_5ForCausalLM"),
    ("qwen3_5_moe_text", TINY_MOE, "Qwen3_5MoeForCausalLM"),
    ("qwen3_next", TINY_MOE, "Qwen3NextForCausalLM"),  # fused in_proj_qkvz / in_proj_ba: the same weights
], ids=["qwen3.5", "qwen3.5-moe", "qwen3-next"])
def test_count_equals_transformers(model_type: str, cfg: dict[str, object], class_name: str) -> None:
    model = _built(model_type, dict(cfg), class_name)
    numel = sum(p.numel() for p in model.parameters())  # type: ignore[attr-defined]
    spec = parse_config({"model_type": model_type, **cfg}, "tiny")
    assert (spec.n_layers, spec.n_linear_layers, spec.n_attention_layers) == (8, 6, 2)
    assert count_params(spec).total == numel


def test_the_multimodal_wrapper_ties_the_embeddings_by_its_own_field() -> None:
    """Qwen3.5's small checkpoints give tie_word_embeddings at the top of config.json, not in text_config, and
    transformers' Qwen3_5ForConditionalGeneration ties by the top-level field (5.24.0: text_config false, lm_head
    still the embedding), so the text model's count drops one vocab × hidden matrix."""
    text = {k: v for k, v in TINY.items() if k != "tie_word_embeddings"}
    tied = parse_config({"model_type": "qwen3_5", "tie_word_embeddings": True, "text_config": dict(text)}, "tied")
    untied = parse_config({"model_type": "qwen3_5", "tie_word_embeddings": False,
                           "text_config": {**text, "tie_word_embeddings": True}}, "untied")
    assert tied.tied_embeddings and not untied.tied_embeddings
    assert count_params(untied).total - count_params(tied).total == 1000 * 256


@pytest.mark.parametrize(("targets", "modules"), [
    ("all-linear", "all-linear"), ("qv", ["q_proj", "v_proj"]),
    ("attention", ["q_proj", "k_proj", "v_proj", "o_proj"]), ("mlp", ["gate_proj", "up_proj", "down_proj"]),
])
def test_lora_size_equals_peft(targets: str, modules: object) -> None:
    """The linear layers have no q/k/v/o projections (attention targets adapt only the 2 attending layers), and
    all-linear adapts their own five projections; q_proj is twice the query width for the output gate."""
    peft = pytest.importorskip("peft")
    model = _built("qwen3_5_text", dict(TINY), "Qwen3_5ForCausalLM")
    adapted = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=modules))
    trainable = sum(p.numel() for p in adapted.parameters() if p.requires_grad)
    assert lora_params(parse_config({"model_type": "qwen3_5_text", **TINY}, "tiny"), 8, targets) == trainable


def test_preset_caches_by_hand(catalog: Catalog) -> None:
    """Qwen3.5-35B-A3B: 10 attending layers of 2 KV heads × 256, and 30 Gated DeltaNet layers each holding a
    32 × 128 × 128 fp32 state (mamba_ssm_dtype) and the last 3 inputs of the convolution over q, k, v
    (2 × 16 × 128 + 32 × 128 = 8192 channels) in bf16."""
    m = catalog.model("Qwen3.5-35B-A3B")
    assert kv_bytes_per_token(m, "bf16") == 10 * 2 * 2 * 256 * 2 == 20_480
    state = 30 * (32 * 128 * 128 * 4 + 8192 * 3 * 2)
    assert linear_state_bytes(m) == state == 64_389_120
    assert kv_cache_bytes(m, 4, 1000, "bf16") == 4 * (1000 * 20_480 + state)
    # TP 2 splits value heads and convolution channels: half of each per GPU; 1 KV head of 2 per GPU
    assert kv_cache_bytes(m, 1, 1000, "bf16", tp=2) == 1000 * 10_240 + state / 2


def test_longest_context_leaves_room_for_the_state(catalog: Catalog) -> None:
    m = catalog.model("Qwen3.5-35B-A3B")
    state = linear_state_bytes(m)
    budget = 2 * state + 2 * 20_480 * 5000  # 2 sequences of 5,000 tokens
    assert max_context(m, budget, 2, "bf16", 1, 1, True) == 5000
    assert max_context(m, 2 * state - 1, 2, "bf16", 1, 1, True) == 0


def test_layer_types_are_read_and_checked() -> None:
    listed = {**TINY, "layer_types": ["linear_attention"] * 5 + ["full_attention"] * 3}
    assert parse_config({"model_type": "qwen3_5_text", **listed}, "x").n_linear_layers == 5
    short = {**TINY, "layer_types": ["linear_attention", "full_attention"]}
    with pytest.raises(ModelConfigError, match="layer_types lists 2 layers but num_hidden_layers is 8"):
        parse_config({"model_type": "qwen3_5_text", **short}, "x")


def test_linear_attention_keys_still_refused_for_other_architectures() -> None:
    """A Llama-type config carrying linear-attention keys is not sized as if they were absent."""
    cfg = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8,
           "num_attention_heads": 4, "vocab_size": 1000, "linear_num_value_heads": 4}
    with pytest.raises(ModelConfigError, match=re.escape("has linear_num_value_heads: linear-attention")):
        parse_config(cfg, "x")


def test_qwen3_6_names_resolve_to_the_same_shapes(catalog: Catalog) -> None:
    assert catalog.model("Qwen/Qwen3.6-35B-A3B").name == "Qwen3.5-35B-A3B"
    assert catalog.model("unsloth/Qwen3.5-27B-GGUF").name == "Qwen3.5-27B"


@pytest.mark.parametrize("name", ["Qwen3-Next-80B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct",
                                  "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8",
                                  "mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit"])
def test_qwen3_next_names_resolve(catalog: Catalog, name: str) -> None:
    assert catalog.model(name).name == "Qwen3-Next-80B-A3B"


def test_qwen3_next_caches_by_hand(catalog: Catalog) -> None:
    """Qwen3-Next-80B-A3B (config: 48 layers, full_attention_interval 4): 12 attending layers of 2 KV heads × 256,
    and 36 Gated DeltaNet layers each holding 32 value heads of a 128 × 128 fp32 state and the last 3 inputs of the
    convolution over q, k, v (2 × 16 × 128 + 32 × 128 = 8192 channels) in bf16; 10 of 512 experts per token."""
    m = catalog.model("Qwen3-Next-80B-A3B")
    assert (m.n_layers, m.n_linear_layers, m.n_experts, m.n_active_experts) == (48, 36, 512, 10)
    assert kv_bytes_per_token(m, "bf16") == 12 * 2 * 2 * 256 * 2 == 24_576
    assert linear_state_bytes(m) == 36 * (32 * 128 * 128 * 4 + 8192 * 3 * 2) == 77_266_944


def test_only_the_attending_layers_slow_decode_as_the_context_grows(catalog: Catalog) -> None:
    """Qwen3.5-27B attends in 16 of its 64 layers: going from 1k to 65k tokens of context adds a quarter of what
    the same model with every layer attending adds (the cache read per step is the only term that grows; the linear
    layers' state is read and written whatever the context)."""
    from dataclasses import replace

    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.infer_speed import decode_step_seconds

    m = catalog.model("Qwen3.5-27B")
    dense = replace(m, n_linear_layers=0)
    gpu, s = catalog.gpu("H100"), InferSetup(batch=8)

    def growth(spec: object) -> float:
        return (decode_step_seconds(spec, gpu, s, 8, 65_536, fitted())[0]  # type: ignore[arg-type]
                - decode_step_seconds(spec, gpu, s, 8, 1024, fitted())[0])  # type: ignore[arg-type]

    assert growth(m) == pytest.approx(growth(dense) * 16 / 64, rel=1e-9)


# ---------------------------------------------------------------- DeepSeek Sparse Attention (DeepSeek-V3.2)


def test_sparse_attention_cache_by_hand(catalog: Catalog) -> None:
    """DeepSeek-V3.2 caches per layer the 512 + 64 latent in bf16 and the indexer's 128-value key in FP8 with one
    fp32 scale (132 bytes, vLLM's indexer cache); a decode step reads every indexer key but only the 2,048 latent
    rows the indexer picks."""
    from gpuplan.estimate.memory import kv_read_bytes

    m = catalog.model("DeepSeek-V3.2")
    assert (m.index_heads, m.index_head_dim, m.index_topk) == (64, 128, 2048)
    assert kv_bytes_per_token(m, "bf16") == 61 * (576 * 2 + 132) == 78_324
    assert kv_read_bytes(m, 1000, "bf16") == 1000 * 78_324  # short contexts: every token is picked
    assert kv_read_bytes(m, 100_000, "bf16") == 2048 * 61 * 1152 + 100_000 * 61 * 132


def test_sparse_attention_decodes_long_contexts_faster_than_dense_mla(catalog: Catalog) -> None:
    """Same weights and latent cache, but at 100k tokens V3.2 reads 2,048 latent rows where V3.1 reads 100k."""
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.infer_speed import decode_step_seconds

    gpu, s = catalog.gpu("H200"), InferSetup(engine="sglang", weight_format="fp8", tp=8, batch=8)
    v32, v31 = catalog.model("DeepSeek-V3.2"), catalog.model("DeepSeek-V3.1")
    short = [decode_step_seconds(m, gpu, s, 8, 1000, fitted())[0] for m in (v32, v31)]
    long = [decode_step_seconds(m, gpu, s, 8, 100_000, fitted())[0] for m in (v32, v31)]
    assert short[0] == pytest.approx(short[1], rel=0.02)  # the indexer's weights and keys: a little more
    assert long[0] < 0.5 * long[1]


def test_glm5_is_read_as_sparse_attention(catalog: Catalog) -> None:
    """GLM-5 (glm_moe_dsa): the DeepSeek-V3.2 layout over 78 layers, each caching a 512 + 64 latent in bf16 and a
    132-byte FP8 indexer key (zai-org/GLM-5 config.json: kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim
    128); its indexer has 32 heads."""
    m = catalog.model("GLM-5")
    assert (m.n_layers, m.index_heads, m.index_head_dim, m.index_topk) == (78, 32, 128, 2048)
    assert kv_bytes_per_token(m, "bf16") == 78 * (576 * 2 + 132) == 100_152
    assert catalog.model("zai-org/GLM-5.1-FP8").name == "GLM-5"


GLM5_TINY = {"model_type": "glm_moe_dsa", "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 64,
             "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000,
             "kv_lora_rank": 64, "q_lora_rank": 128, "qk_rope_head_dim": 16, "qk_nope_head_dim": 32,
             "v_head_dim": 32, "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
             "first_k_dense_replace": 1, "index_n_heads": 4, "index_head_dim": 32, "index_topk": 64}


def test_glm5_count_equals_transformers() -> None:
    model = _built("glm_moe_dsa", {k: v for k, v in GLM5_TINY.items() if k != "model_type"}, "GlmMoeDsaForCausalLM")
    assert count_params(parse_config(GLM5_TINY, "tiny")).total == sum(
        p.numel() for p in model.parameters())  # type: ignore[attr-defined]


@pytest.mark.parametrize(("extra", "field"), [
    # GLM-5.2's config.json: every 4th layer from the 4th runs its indexer, the others reuse its picks
    ({"indexer_types": ["full", "full", "shared", "shared"]}, "indexer_types"),
    ({"index_topk_freq": 4}, "index_topk_freq"),
    ({"mlp_layer_types": ["dense", "dense", "sparse", "sparse"]}, "mlp_layer_types"),
])
def test_glm5_layer_patterns_it_cannot_model_are_refused(extra: dict[str, object], field: str) -> None:
    with pytest.raises(ModelConfigError, match=field) as info:
        parse_config({**GLM5_TINY, **extra}, "x")
    assert info.value.fix


def test_a_config_without_the_output_gate_is_refused_naming_the_field() -> None:
    with pytest.raises(ModelConfigError, match="attn_output_gate is false") as info:
        parse_config({"model_type": "qwen3_5_text", **TINY, "attn_output_gate": False}, "x")
    assert info.value.fix
