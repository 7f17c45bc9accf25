"""Mixture-of-experts serving speed: the kernels a MoE layer launches, expert GEMMs that cannot hide behind the
dense ones, and closed-loop prompts that share one prefill pass."""

from __future__ import annotations

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import (
    decode_step_seconds,
    layer_launches,
    prefill_seconds,
    routed_expert_bytes,
)
from gpuplan.estimate.load import at_concurrency, request_seconds
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.types import InferSetup

# Kernels per decoder layer in vLLM v0.7.3's decode path, counted by hand in its model code. A dense GQA layer:
# input norm, QKV, rotary, KV-cache write, attention, output, all-reduce, post norm, gate-up, act, down, all-reduce.
LAUNCHES = [
    ("Llama-3.1-8B", 32 * 12, "llama.py: 12 kernels in each of 32 layers"),
    # fused_experts adds the router GEMM, topk_softmax, moe_align_block_size and the combine sum to the MLP's 3
    ("Mixtral-8x7B", 32 * (12 + 4), "mixtral.py + fused_moe.py: 16 in each of 32 MoE layers"),
    # MLA's attention block is 12 kernels (q_a, q_a norm, q_b, kv_a, kv_a norm, rotary, W_UK bmm, cache write,
    # two-stage decode attention, W_UV bmm, output) where GQA's is 5; grouped_topk is ~14 PyTorch ops where
    # topk_softmax is 1; the shared expert adds gate-up, act, down and an add
    ("DeepSeek-V3", 3 * 19 + 58 * (19 + 4 + 13 + 4), "deepseek_v2.py: 3 dense MLA layers, 58 MoE layers"),
]


@pytest.mark.parametrize(("name", "kernels", "source"), LAUNCHES)
def test_a_layer_costs_launch_overhead_in_proportion_to_its_kernels(catalog: Catalog, name: str, kernels: int,
                                                                    source: str) -> None:
    assert layer_launches(catalog.model(name)) * 12 == pytest.approx(kernels), source


def test_expert_gemms_cannot_hide_behind_the_dense_gemms_compute(catalog: Catalog) -> None:
    # DeepSeek-V3 decoding 1024 sequences on one H200 (the step's physics only; it would not fit): every expert is
    # reached, so the expert GEMMs stream ~650 GB of FP8 weights at ~32 tokens per expert (memory-bound), while
    # the attention projections and shared experts run 1024 tokens through ~17 GB (compute-bound). They are
    # separate kernels, so the step is at least the experts' stream plus the dense GEMMs' compute — well above
    # either the whole model's stream or its whole compute, which a roofline over the sums would take
    m, g = catalog.model("DeepSeek-V3"), catalog.gpu("H200")
    s = InferSetup(engine="vllm", weight_format="fp8", prompt_len=1, output_len=1)
    cal = fitted().with_values(layer_overhead_s_vllm=0.0)
    batch, p = 1024, count_params(m)
    expert_bytes = routed_expert_bytes(m, weight_format("fp8"), s, batch)
    assert expert_bytes > 0.99 * p.experts  # 1 byte per FP8 weight, all experts reached
    stream = expert_bytes / (g.memory_bandwidth_bytes_per_s * cal.get("eta_memory_vllm"))
    dense_flops = 2 * (p.active - p.active_experts - p.embeddings)
    dense_compute = batch * dense_flops / (g.peak_flops_per_s("fp8") * cal.get("eta_compute_vllm"))
    assert dense_compute > 0.2 * stream  # large enough for the sum to differ from the larger part
    step, _ = decode_step_seconds(m, g, s, batch, 1, cal)
    assert step > stream + 0.9 * dense_compute


def test_prompts_that_share_a_prefill_pass_get_their_first_token_together(catalog: Catalog) -> None:
    # 8 lockstep clients with 512-token prompts: the wave's 4096 prompt tokens fit one pass of vLLM's 8192-token
    # budget, so every request's first token comes when that pass ends — no earlier for the first in line
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    s = InferSetup(engine="vllm", prompt_len=512, output_len=128)
    wave = at_concurrency(m, g, s, 8, lockstep=True)
    whole = prefill_seconds(m, g, s, 8 * 512, fitted()) + request_seconds(s, g, fitted())  # and the API server's
    assert wave.ttft_p50_s == pytest.approx(whole) and wave.ttft_p99_s == pytest.approx(whole)
    assert wave.ttft_mean_s > prefill_seconds(m, g, s, 512, fitted())
