"""Gemma 4: sliding-window layers and full-attention layers with their own head size and KV heads (values equal to
keys), and in 26B-A4B a routed MoE beside the dense MLP in every layer.

Parameter counts are checked against transformers building the same (tiny) configs on the meta device; cache sizes
and attention FLOPs worked out by hand from the presets' config.json.
"""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.errors import ModelConfigError
from gpuplan.estimate.flops import attention_flops_per_token
from gpuplan.estimate.memory import kv_bytes_per_token, kv_cache_bytes
from gpuplan.estimate.params import count_params

# 4 layers: 3 sliding (2 KV heads × 32), 1 full (1 KV head × 64, no v_proj)
TINY = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 32, "global_head_dim": 64, "num_global_key_value_heads": 1,
        "attention_k_eq_v": True, "vocab_size": 1000, "sliding_window": 16, "hidden_size_per_layer_input": 0,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"]}
TINY_MOE = {**TINY, "enable_moe_block": True, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 32}


@pytest.mark.parametrize("cfg", [TINY, TINY_MOE, {**TINY, "attention_k_eq_v": False}],
                         ids=["dense", "moe", "separate-values"])
def test_count_equals_transformers(cfg: dict[str, object]) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    with torch.device("meta"):
        model = transformers.Gemma4ForCausalLM(transformers.AutoConfig.for_model("gemma4_text", **cfg))
    spec = parse_config({"model_type": "gemma4_text", **cfg}, "tiny")
    assert count_params(spec).total == sum(p.numel() for p in model.parameters())


def test_multimodal_config_is_read_for_its_text_model() -> None:
    spec = parse_config({"model_type": "gemma4", "text_config": dict(TINY)}, "tiny")
    assert spec.vision_tower and (spec.n_sliding_layers, spec.global_head_dim, spec.global_kv_heads) == (3, 64, 1)


def test_31b_cache_by_hand(catalog: Catalog) -> None:
    """Gemma 4 31B: 50 sliding layers of 16 KV heads × 256 and 10 full layers of 4 KV heads × 512, K and V in bf16
    (both cached although V is K); the sliding layers hold at most 1,024 tokens."""
    m = catalog.model("Gemma-4-31B")
    sliding, full = 50 * 2 * 16 * 256 * 2, 10 * 2 * 4 * 512 * 2
    assert (sliding, full) == (819_200, 81_920)
    assert kv_bytes_per_token(m, "bf16") == sliding + full
    assert kv_cache_bytes(m, 1, 8192, "bf16") == 8192 * full + 1024 * sliding


def test_full_layers_attend_with_their_own_head_size(catalog: Catalog) -> None:
    """26B-A4B at 4,096 tokens: 25 sliding layers over 1,024 positions with 256-wide q·k and p·v, 5 full layers over
    4,096 with 512-wide ones, 16 heads, 2 FLOPs per multiply-add."""
    m = catalog.model("Gemma-4-26B-A4B")
    expected = 25 * 1024 * 2 * 16 * (256 + 256) + 5 * 4096 * 2 * 16 * (512 + 512)
    assert attention_flops_per_token(m, 4096) == expected == 1_090_519_040


def test_26b_is_a_moe_with_the_dense_mlp_always_active(catalog: Catalog) -> None:
    m = catalog.model("Gemma-4-26B-A4B")
    p = count_params(m)
    assert (m.n_experts, m.n_active_experts, m.moe_ffn_hidden) == (128, 8, 704)
    assert p.shared_experts == 30 * 3 * 2816 * 2112  # the dense GeGLU MLP of every layer
    assert p.active_experts == 30 * 8 * 3 * 2816 * 704


@pytest.mark.parametrize(("extra", "field"), [
    ({"hidden_size_per_layer_input": 256}, "hidden_size_per_layer_input"),  # E2B, E4B
    ({"num_kv_shared_layers": 2}, "num_kv_shared_layers"),
    ({"attention_bias": True}, "attention_bias"),
    ({"layer_types": ["sliding_attention", "full_attention"]}, "layer_types lists 2 layers"),
    ({"num_global_key_value_heads": 3}, "3 global KV heads"),
])
def test_what_it_cannot_model_is_refused_naming_the_field(extra: dict[str, object], field: str) -> None:
    with pytest.raises(ModelConfigError, match=field) as info:
        parse_config({"model_type": "gemma4_text", **TINY, **extra}, "x")
    assert info.value.fix
