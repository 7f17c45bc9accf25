"""Nemotron-3 8B and Nemotron-4 (transformers NemotronForCausalLM): a two-matrix squared-ReLU MLP, LayerNorm with a
bias, grouped-query attention with heads wider than hidden / heads allows.

Parameter counts and LoRA sizes are checked against transformers and PEFT building the same tiny configs on the meta
device; the KV cache of the 340B preset by hand from its config.json.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.estimate.memory import kv_bytes_per_token, lora_params
from gpuplan.estimate.params import count_params

TINY = {"model_type": "nemotron", "hidden_size": 256, "intermediate_size": 1024, "num_attention_heads": 4,
        "num_key_value_heads": 2, "num_hidden_layers": 3, "vocab_size": 1000}


def _transformers_model(cfg: dict[str, object]) -> Any:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    fields = {k: v for k, v in cfg.items() if k != "model_type"}
    with torch.device("meta"):
        return transformers.NemotronForCausalLM(transformers.AutoConfig.for_model("nemotron", **fields))


@pytest.mark.parametrize("cfg", [
    TINY,
    {**TINY, "attention_bias": True, "mlp_bias": True, "num_key_value_heads": 4},
    {**TINY, "head_dim": 96, "num_key_value_heads": 1, "tie_word_embeddings": True},
], ids=["gqa", "biases", "wide-heads-tied"])
def test_count_equals_transformers(cfg: dict[str, object]) -> None:
    model = _transformers_model(cfg)
    assert count_params(parse_config(cfg, "tiny")).total == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(("targets", "modules"), [
    ("attention", ["q_proj", "k_proj", "v_proj", "o_proj"]), ("mlp", ["up_proj", "down_proj"]),
])
def test_lora_size_equals_peft(targets: str, modules: list[str]) -> None:
    # the MLP has no gate: an MLP adapter set is two matrices per layer, not the three of a Llama-style model
    peft = pytest.importorskip("peft")
    model = _transformers_model(TINY)
    adapted = peft.get_peft_model(model, peft.LoraConfig(r=8, target_modules=modules))
    trainable = sum(p.numel() for p in adapted.parameters() if p.requires_grad)
    assert lora_params(parse_config(TINY, "tiny"), 8, targets) == trainable


@pytest.mark.parametrize(("typed", "preset"), [
    ("nvidia/Nemotron-4-340B-Base", "Nemotron-4-340B"),
    ("nvidia/Nemotron-4-340B-Instruct", "Nemotron-4-340B"),
    ("nvidia/nemotron-3-8b-base-4k", "Nemotron-3-8B-Base-4k"),
])
def test_nemo_benchmark_names_resolve(catalog: Catalog, typed: str, preset: str) -> None:
    # NVIDIA NeMo's performance tables name the models by these Hub ids
    assert catalog.model(typed).name == preset


def test_340b_kv_cache_by_hand(catalog: Catalog) -> None:
    # 96 layers × K and V × 8 KV heads × 192 (18432 / 96) × 2 bytes
    m = catalog.model("Nemotron-4-340B")
    assert kv_bytes_per_token(m, "bf16") == 96 * 2 * 8 * 192 * 2 == 589_824
