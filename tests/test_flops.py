"""FLOPs per token: 2·N_matmul + attention for a forward pass; training = 3× forward; frozen base = 2×;
full recomputation adds one forward. Cross-checked against torch's FlopCounterMode on tiny transformers models.

FlopCounterMode counts matrix multiplies only (mm/addmm/bmm/SDPA), 2 FLOPs per multiply-accumulate, and for
attention it counts the whole s×s score matrix even when a causal mask discards half of it. So the cross-check
compares with gpuplan's forward at context = s (every token attends all s positions); the causal average
(s+1)/2 that gpuplan uses for training is tested separately.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.estimate.flops import (
    attention_flops_per_token,
    forward_flops_per_token,
    fp8_excluded_params,
    matmul_params,
    mtp_forward_flops_per_token,
    train_flops_per_token,
)
from gpuplan.estimate.memory import lora_params
from gpuplan.estimate.params import count_params
from gpuplan.types import TrainSetup

# ---------------------------------------------------------------- forward: 2·N + attention

# Llama-2-7B: N = 6,738,415,616; the embedding lookup (32000·4096) and the 65 RMSNorm vectors (65·4096) are
# not matmuls, the LM head is: N_matmul = 6,607,077,376.
LLAMA2_7B_MATMUL = 6_738_415_616 - 32000 * 4096 - 65 * 4096


def test_matmul_params_llama_2_7b(catalog: Catalog) -> None:
    assert matmul_params(catalog.model("Llama-2-7B")) == LLAMA2_7B_MATMUL


@pytest.mark.parametrize(("model", "expected", "source"), [
    # the LM head alone: vocab 128,256 × hidden 4,096 (Llama-3.1-8B config.json)
    ("Llama-3.1-8B", 128_256 * 4096, "config.json: vocab_size, hidden_size; no router"),
    # head 151,936 × 2,048 and 48 routers of 128 experts × 2,048 (Qwen3-30B-A3B config.json)
    ("Qwen3-30B-A3B", 151_936 * 2048 + 48 * 128 * 2048, "config.json: vocab_size, num_experts, 48 MoE layers"),
])
def test_fp8_training_leaves_the_head_and_router_16_bit(catalog: Catalog, model: str, expected: int,
                                                         source: str) -> None:
    # Megatron-Core's output layer is not a Transformer Engine module (gpt_model.py: ColumnParallelLinear), so an
    # FP8 recipe does not reach it; the router scores tokens in 16/32 bits
    assert fp8_excluded_params(catalog.model(model)) == expected


@pytest.mark.parametrize(("model", "per_position", "source"), [
    # PaLM (Chowdhery et al. 2022) appendix B: attention adds 6·L·H·Q·T per training token = 2·L·H·Q·T per
    # forward token for each of QK^T and AV, i.e. 4·L·H·Q per attended position
    ("Llama-2-7B", 4 * 32 * 32 * 128, "32 layers × 32 heads × head 128"),
    ("Llama-2-70B", 4 * 80 * 64 * 128, "GQA does not shrink the FLOPs: all 64 query heads attend"),
    ("DeepSeek-V3", 2 * 61 * 128 * (192 + 128), "MLA: QK^T over 192 (nope 128 + rope 64), AV over v_head 128"),
])
def test_attention_flops_per_position(catalog: Catalog, model: str, per_position: int, source: str) -> None:
    m = catalog.model(model)
    assert attention_flops_per_token(m, 1) == per_position, source
    assert attention_flops_per_token(m, 1000) == 1000 * per_position


@pytest.mark.parametrize("context", [0, 1, 512, 4096])
def test_forward_is_2n_plus_attention(catalog: Catalog, context: int) -> None:
    m = catalog.model("Llama-2-7B")
    assert forward_flops_per_token(m, context) == 2 * LLAMA2_7B_MATMUL + 4 * 32 * 32 * 128 * context


def test_moe_forward_counts_active_experts_only(catalog: Catalog) -> None:
    # Mixtral-8x7B: top-2 of 8 experts; the router is a matmul too
    m = catalog.model("Mixtral-8x7B")
    p = count_params(m)
    assert matmul_params(m) == p.active - p.embeddings - p.norms
    assert matmul_params(m) < 0.3 * p.total  # about 12.9B of 46.7B touch each token


def test_gpt_oss_120b_counts_match_its_model_card(catalog: Catalog) -> None:
    # OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card" (2025-08-05, arXiv:2508.10925), table 1: 116.83B total and
    # 5.13B active parameters; its active count leaves the embedding out and keeps the unembedding, as the matmul
    # count does. The attention projections are 64 heads × 64 = 4096 wide over a 2880-wide residual stream.
    m = catalog.model("gpt-oss-120b")
    assert m.q_dim == 4096 and m.hidden == 2880
    assert round(count_params(m).total / 1e9, 2) == 116.83
    assert round(matmul_params(m) / 1e9, 2) == 5.13


def test_gpt_oss_120b_training_flops_match_megatron_bridge(catalog: Catalog) -> None:
    # NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @067f987df03b8355b03192d88d70f1709fedf51a, 26.08
    # container, GPT OSS 120B on 64 GB300 (seq 4096, no recomputation): 33,024 tokens/s/GPU and 1,077 model
    # TFLOP/s/GPU, i.e. Megatron's own count of 32.61 GFLOP per trained token; its sliding layers attend 128
    # positions, its full layers the causal half of 4096
    m = catalog.model("gpt-oss-120b")
    flops = train_flops_per_token(m, TrainSetup(seq_len=4096))
    assert flops == pytest.approx(1077e12 / 33024, rel=0.01)


# Megatron-Bridge's own model FLOPs per trained token for DeepSeek-V3 at seq 4096 (docs/performance-summary-archive.md
# @067f987df03b8355b03192d88d70f1709fedf51a, model TFLOP/s/GPU over tokens/s/GPU of the same row): 25.11's
# "DeepSeekV3 (w/o MTP)" on 256 GB300, BF16: 961e12 / 3848 = 249.7 GFLOP; its "DeepSeekV3 (w/ MTP)" on 256 B200,
# FP8-MX: 557e12 / 2139 = 260.4 GFLOP (the recipe's mtp_num_layers = 1)
@pytest.mark.parametrize(("depths", "megatron", "row"), [
    (0, 961e12 / 3848, "25.11 DeepSeekV3 (w/o MTP), 256 GB300"),
    (1, 557e12 / 2139, "25.11 DeepSeekV3 (w/ MTP), 256 B200"),
])
def test_deepseek_v3_mtp_flops_match_megatron_bridge(catalog: Catalog, depths: int, megatron: float,
                                                      row: str) -> None:
    m = catalog.model("DeepSeek-V3")
    assert train_flops_per_token(m, TrainSetup(seq_len=4096, mtp_layers=depths)) == pytest.approx(megatron, rel=0.01)


def test_deepseek_v3_mtp_depth_costs_about_one_moe_layer_and_the_head(catalog: Catalog) -> None:
    # by hand, forward per token: one MoE layer's active weights (8 routed + 1 shared expert of 3·7168·2048, the
    # router 7168·256), MLA's projections (7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168), the
    # 2h→h projection 2·7168² and the head 129280·7168: 396 + 2 + 187 + 103 + 927 M = 1.61e9 weights, 2 FLOPs
    # each, plus QK^T/AV over 2048 positions, 2·128·320·2048: 3.40 GFLOP forward, 10.2 trained (3×), which is
    # Megatron's 260.4 − 249.7 GFLOP per token between its with- and without-MTP rows
    m = catalog.model("DeepSeek-V3")
    weights = (9 * 3 * 7168 * 2048 + 7168 * 256 + 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
               + 128 * 128 * 7168 + 2 * 7168 ** 2 + 129280 * 7168)
    by_hand = 2 * weights + 2 * 128 * 320 * 2048
    assert mtp_forward_flops_per_token(m, 1, 2048) == pytest.approx(by_hand, rel=0.02)
    assert mtp_forward_flops_per_token(m, 2, 2048) == 2 * mtp_forward_flops_per_token(m, 1, 2048)


@pytest.mark.parametrize("model", ["DeepSeek-V3", "Llama-2-7B", "Nemotron-3-Super-120B-A12B"])
def test_no_mtp_changes_nothing(catalog: Catalog, model: str) -> None:
    m = catalog.model(model)
    for setup in (TrainSetup(seq_len=4096), TrainSetup(seq_len=4096, recompute="full"),
                  TrainSetup(method="lora", seq_len=1024)):
        assert train_flops_per_token(m, replace(setup, mtp_layers=0)) == train_flops_per_token(m, setup)
        assert mtp_forward_flops_per_token(m, 0, 4096) == 0.0


def test_tied_head_is_still_a_matmul(catalog: Catalog) -> None:
    m = catalog.model("Gemma-2-2B")  # ties the LM head to the embedding: counted once in N, used twice
    p = count_params(m)
    assert m.tied_embeddings
    assert matmul_params(m) == p.total - p.norms


def test_sliding_window_caps_attention(catalog: Catalog) -> None:
    m = catalog.model("Mistral-7B")  # every layer uses a 4096-token window
    assert attention_flops_per_token(m, 32768) == attention_flops_per_token(m, 4096)


# ---------------------------------------------------------------- training multiples


def _causal_forward(m, seq_len: int) -> float:
    return forward_flops_per_token(m, (seq_len + 1) / 2)  # a causal token attends (s+1)/2 positions on average


@pytest.mark.parametrize("model", ["Llama-2-7B", "Mixtral-8x7B", "Qwen2.5-7B", "DeepSeek-V2-Lite"])
@pytest.mark.parametrize("seq_len", [512, 4096])
def test_full_training_is_three_forwards(catalog: Catalog, model: str, seq_len: int) -> None:
    m = catalog.model(model)
    s = TrainSetup(method="full", seq_len=seq_len, recompute="none")
    assert train_flops_per_token(m, s) == pytest.approx(3 * _causal_forward(m, seq_len), rel=1e-12)


def test_six_n_rule_of_thumb_for_llama_2_7b(catalog: Catalog) -> None:
    # Kaplan et al. 2020: C ≈ 6·N per token; at 2048 tokens attention adds a few percent on top
    m = catalog.model("Llama-2-7B")
    flops = train_flops_per_token(m, TrainSetup(seq_len=2048))
    assert 1.0 < flops / (6 * 6_738_415_616) < 1.05


@pytest.mark.parametrize(("method", "targets"), [("lora", "all-linear"), ("lora", "qv"), ("qlora", "all-linear")])
def test_lora_is_two_forwards_plus_adapter(catalog: Catalog, method: str, targets: str) -> None:
    # frozen base: forward + input gradients (no weight gradients); the adapter trains fully (6 FLOPs/param)
    m = catalog.model("Llama-3.1-8B")
    s = TrainSetup(method=method, seq_len=2048, lora_rank=16, lora_targets=targets)
    expected = 2 * _causal_forward(m, 2048) + 6 * lora_params(m, 16, targets)
    assert train_flops_per_token(m, s) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("method", ["full", "lora", "qlora", "ptuning", "freeze"])
def test_full_recompute_adds_one_forward(catalog: Catalog, method: str) -> None:
    m = catalog.model("Llama-3.1-8B")
    none = TrainSetup(method=method, seq_len=2048, recompute="none")
    full = replace(none, recompute="full")
    extra = train_flops_per_token(m, full) - train_flops_per_token(m, none)
    assert extra == pytest.approx(_causal_forward(m, 2048), rel=1e-12)


def test_frozen_methods_cost_less_than_full(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.1-8B")
    full = train_flops_per_token(m, TrainSetup(method="full"))
    for method in ("lora", "qlora", "ptuning", "freeze"):
        assert train_flops_per_token(m, TrainSetup(method=method)) < full


# ---------------------------------------------------------------- live cross-check: FlopCounterMode

SEQ = 64
TINY_LLAMA = {  # 2 layers, hidden 256, 4 heads / 2 KV heads (GQA), SwiGLU 688, vocab 1000
    "model_type": "llama", "hidden_size": 256, "intermediate_size": 688, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 128,
}
TINY_MIXTRAL = {  # same attention, 4 experts of width 512, top-2
    "model_type": "mixtral", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 128,
    "num_local_experts": 4, "num_experts_per_tok": 2,
}


def _count(cfg: dict, backward: bool = False) -> dict[str, int]:
    """FLOPs by aten op of one forward (and backward) over SEQ tokens of a randomly initialised tiny model."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from torch.utils.flop_counter import FlopCounterMode

    config = transformers.AutoConfig.for_model(**cfg)
    torch.manual_seed(0)
    # eager attention: QK^T and AV are plain bmm's over all heads (K/V repeated for GQA); eager experts: each
    # expert's linears run on the tokens routed to it, so the count is exactly top-k experts per token
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager",
                                                          experts_implementation="eager")
    ids = torch.randint(0, cfg["vocab_size"], (1, SEQ))
    with FlopCounterMode(display=False) as counter:
        if backward:
            model(ids, labels=ids).loss.backward()
        else:
            with torch.no_grad():
                model(ids)
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


@pytest.mark.parametrize("cfg", [TINY_LLAMA, TINY_MIXTRAL], ids=["llama-gqa", "mixtral-4x-top2"])
def test_forward_matches_flop_counter(cfg: dict) -> None:
    counts = _count(cfg)
    m = parse_config(cfg, "tiny")
    # weight matmuls (projections, MLP / routed experts, router, LM head) are aten.mm: exact
    assert counts["aten.mm"] == SEQ * 2 * matmul_params(m)
    # attention over the full s×s matrix (the counter ignores the causal mask): context = SEQ; within 1 %
    assert counts["aten.bmm"] == pytest.approx(SEQ * attention_flops_per_token(m, SEQ), rel=0.01)
    assert sum(counts.values()) == pytest.approx(SEQ * forward_flops_per_token(m, SEQ), rel=0.01)


def test_training_step_matches_three_forwards() -> None:
    # backward of every matmul = 2 matmuls (input and weight gradients); attention bmm's likewise
    forward = sum(_count(TINY_LLAMA).values())
    step = sum(_count(TINY_LLAMA, backward=True).values())
    assert step == pytest.approx(3 * forward, rel=1e-9)  # exact: the embedding lookup is no matmul
