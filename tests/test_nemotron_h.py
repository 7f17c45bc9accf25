"""Nemotron-H and Nemotron 3: Mamba-2, attention, MLP and MoE blocks stacked by ``hybrid_override_pattern``.

Parameter counts are checked against transformers building the same (tiny) configs on the meta device; the state a
sequence keeps against the tensor shapes vLLM allocates for a Mamba-2 layer, worked out by hand from the preset's
config.json.
"""

from __future__ import annotations

import json
import math

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.errors import ModelConfigError
from gpuplan.estimate.flops import attention_flops_per_token
from gpuplan.estimate.memory import kv_bytes_per_token, kv_cache_bytes, linear_state_bytes
from gpuplan.estimate.params import count_params

# 6 blocks: 2 Mamba, 1 attention, 3 FFN blocks (one mixer has no FFN after it)
TINY = {"model_type": "nemotron_h", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1000, "mamba_num_heads": 8, "mamba_head_dim": 32,
        "n_groups": 2, "ssm_state_size": 16, "conv_kernel": 4, "hybrid_override_pattern": "M-*-M-",
        "num_hidden_layers": 6, "tie_word_embeddings": False}
TINY_MOE = {**TINY, "hybrid_override_pattern": "MEM*E", "num_hidden_layers": 5, "n_routed_experts": 8,
            "num_experts_per_tok": 2, "moe_intermediate_size": 64, "moe_shared_expert_intermediate_size": 128}
# Nemotron 3 Super / Ultra: experts on a 32-wide projection of the hidden state; Ultra lists its blocks by name
TINY_LATENT = {**TINY_MOE, "moe_latent_size": 32}
TINY_LISTED = {**{k: v for k, v in TINY_LATENT.items() if k not in ("hybrid_override_pattern", "num_hidden_layers")},
               "layers_block_type": ["mamba", "moe", "mamba", "attention", "moe"]}


@pytest.mark.parametrize(("cfg", "layout"), [
    (TINY, (3, 2, 0)),  # M - * - M -: three mixers, each followed by an MLP
    (TINY_MOE, (3, 2, 1)),  # M E M * E: three mixers, two MoE blocks
    (TINY_LATENT, (3, 2, 1)),
    (TINY_LISTED, (3, 2, 1)),
], ids=["mlp", "moe", "latent-moe", "listed-blocks"])
def test_count_equals_transformers(cfg: dict[str, object], layout: tuple[int, int, int]) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = {k: v for k, v in cfg.items() if k != "model_type"}
    with torch.device("meta"):
        model = transformers.NemotronHForCausalLM(transformers.AutoConfig.for_model("nemotron_h", **fields))
    spec = parse_config(cfg, "tiny")
    assert (spec.n_layers, spec.n_linear_layers, spec.n_layers_without_ffn) == layout
    assert count_params(spec).total == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(("targets", "modules"), [
    ("attention", ["q_proj", "k_proj", "v_proj", "o_proj"]), ("mlp", ["up_proj", "down_proj"]),
])  # PEFT 'all-linear' refuses Mamba models (out_proj and conv1d are incompatible), so no all-linear row
def test_lora_size_equals_peft(targets: str, modules: object) -> None:
    """Attention targets adapt only the attending layer; the mixer without an MLP after it (M - * M -) adds no MLP
    adapters."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    from gpuplan.estimate.memory import lora_params

    cfg = {**TINY, "hybrid_override_pattern": "M-*M-", "num_hidden_layers": 5}
    fields = {k: v for k, v in cfg.items() if k != "model_type"}
    with torch.device("meta"):
        model = transformers.NemotronHForCausalLM(transformers.AutoConfig.for_model("nemotron_h", **fields))
    adapted = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=modules))
    trainable = sum(p.numel() for p in adapted.parameters() if p.requires_grad)
    assert lora_params(parse_config(cfg, "tiny"), 8, targets) == trainable


def test_nano_state_and_cache_by_hand(catalog: Catalog) -> None:
    """Nemotron 3 Nano 30B-A3B: 6 attention layers of 2 KV heads × 128, and 23 Mamba-2 layers each holding a
    64 heads × 64 × 128 fp32 state (mamba_ssm_cache_dtype) and the last 3 inputs of the convolution over x, B, C
    (64 × 64 + 2 × 8 × 128 = 6144 channels) in bf16 (vLLM MambaStateShapeCalculator.mamba2_state_shape)."""
    m = catalog.model("Nemotron-3-Nano-30B-A3B")
    assert (m.n_layers, m.n_linear_layers, m.n_attention_layers, m.n_moe_layers) == (29, 23, 6, 23)
    assert kv_bytes_per_token(m, "bf16") == 6 * 2 * 2 * 128 * 2 == 6144
    state = 23 * (64 * 64 * 128 * 4 + 6144 * 3 * 2)
    assert linear_state_bytes(m) == state == 49_082_368
    assert kv_cache_bytes(m, 2, 1000, "bf16") == 2 * (1000 * 6144 + state)


def test_mamba_flops_do_not_grow_with_the_context(catalog: Catalog) -> None:
    """A Mamba-2 step reads and writes each head's 128 × 64 state twice (B·x^T into h, C^T·h out): 2 × 2 FLOPs per
    element, 23 layers × 64 heads; the 6 attention layers add 2 × 32 heads × (128 + 128) FLOPs per position."""
    m = catalog.model("Nemotron-3-Nano-30B-A3B")
    mamba = 23 * 64 * 2 * 2 * 128 * 64
    assert attention_flops_per_token(m, 0) == mamba == 48_234_496
    assert attention_flops_per_token(m, 1000) == mamba + 6 * 2 * 32 * 256 * 1000


def test_latent_experts_are_counted_in_their_space(catalog: Catalog) -> None:
    """Nemotron 3 Super: 40 MoE layers of 512 experts, each an up and a down projection between the 1024-wide latent
    and 2688; 22 of them per token; the projections in and out of the latent (2 × 4096 × 1024) run for every token
    beside the shared expert (2 × 4096 × 5376)."""
    m = catalog.model("Nemotron-3-Super-120B-A12B")
    p = count_params(m)
    assert p.experts == 40 * 512 * 2 * 1024 * 2688
    assert p.active_experts == 40 * 22 * 2 * 1024 * 2688
    assert p.shared_experts == 40 * (2 * 4096 * 5376 + 2 * 4096 * 1024)


def test_56b_counts_its_mlp_blocks(catalog: Catalog) -> None:
    """Nemotron-H 56B: 54 Mamba, 10 attention and 54 MLP blocks, 118 norms plus the final one."""
    m = catalog.model("Nemotron-H-56B")
    assert (m.n_layers, m.n_linear_layers, m.n_layers_without_ffn) == (64, 54, 10)
    assert count_params(m).mlp == 54 * 2 * 8192 * 32768
    assert count_params(m).norms == 119 * 8192


def test_unbounded_time_step_limit_is_read_but_other_infinities_are_not() -> None:
    assert parse_config({**TINY, "time_step_limit": [0.0, math.inf]}, "x").n_linear_layers == 2
    with pytest.raises(ModelConfigError, match=r"time_step_min is inf"):
        parse_config({**TINY, "time_step_min": math.inf}, "x")
    assert json.loads('{"a": Infinity}')["a"] == math.inf  # what the published config.json parses to


@pytest.mark.parametrize(("extra", "field"), [
    ({"hybrid_override_pattern": "M-*-X-"}, "hybrid_override_pattern"),
    ({"hybrid_override_pattern": "M-*E"}, "mixes MLP"),
    ({"hybrid_override_pattern": "M--"}, "more FFN blocks"),
    ({"use_bias": True}, "use_bias"),
    ({"mamba_num_heads": 6, "n_groups": 4}, "do not divide into 4 groups"),
])
def test_what_it_cannot_model_is_refused_naming_the_field(extra: dict[str, object], field: str) -> None:
    with pytest.raises(ModelConfigError, match=field) as info:
        parse_config({**TINY, **extra}, "x")
    assert info.value.fix
