"""vLLM before 0.8 and SGLang before 0.4.4 run a block-FP8 checkpoint's routed experts (DeepSeek-V3/R1,
``weight_block_size`` [128, 128]) through the Triton fused-MoE kernel, which vllm-project/vllm PR #13932 timed at
48-80 TFLOP/s on DeepSeek-V3's expert shapes on one H100: a prompt's experts then take far longer than the fitted
MoE rate says, on NVIDIA parts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.catalog.hfconfig import parse_config
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.engines import triton_block_fp8_moe_cap, with_engine_defaults
from gpuplan.estimate.infer_speed import prefill_seconds
from gpuplan.types import Engine, InferSetup


def test_deepseek_presets_carry_their_fp8_blocks(catalog: Catalog) -> None:
    # config.json quantization_config: quant_method fp8, weight_block_size [128, 128]
    assert catalog.model("DeepSeek-R1").weight_block == (128, 128)
    assert catalog.model("DeepSeek-V3").weight_block == (128, 128)
    assert catalog.model("Llama-3.1-8B").weight_block is None  # a 16-bit checkpoint


def test_a_config_without_block_size_has_no_blocks() -> None:
    cfg = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_hidden_layers": 2, "vocab_size": 1000, "quantization_config": {"quant_method": "fp8"}}
    m = parse_config(cfg, "tiny-fp8")
    assert m.native_dtype == "fp8" and m.weight_block is None


@pytest.mark.parametrize(("engine", "version", "gpu", "fmt", "capped"), [
    (Engine.VLLM, "0.7.3", "H200", "fp8", True),  # dstack's H200 server: Fp8MoEMethod -> fused_experts (Triton)
    (Engine.SGLANG, "0.4.3.post2", "H200", "fp8", True),  # fused_moe_triton with the H200 configs
    (Engine.SGLANG, "0.4.1", "H100", "fp8", True),  # the same kernel, default tile
    (Engine.VLLM, "0.8.0", "H200", "fp8", False),  # after the measurement: not described by it
    (Engine.VLLM, "", "H200", "fp8", False),  # plans run the current release
    (Engine.VLLM, "0.7.3", "MI300X", "fp8", False),  # the ROCm build: no published figure
    (Engine.VLLM, "0.7.3", "H200", "bf16", False),  # dequantized to 16 bits: another kernel path
    (Engine.TRTLLM, "0.17", "H200", "fp8", False),
])
def test_which_setups_run_the_timed_kernel(catalog: Catalog, engine: Engine, version: str, gpu: str, fmt: str,
                                           capped: bool) -> None:
    s = InferSetup(engine=engine, weight_format=fmt, tp=8, engine_version=version)
    cap = triton_block_fp8_moe_cap(catalog.model("DeepSeek-R1"), s, catalog.gpu(gpu))
    assert (cap is not None) is capped


def _prefill(catalog: Catalog, gpu: str, blocks: bool, tokens: int = 12_800) -> float:
    m = catalog.model("DeepSeek-R1")
    m = m if blocks else replace(m, weight_block=None)
    g = catalog.gpu(gpu)
    s = InferSetup(engine=Engine.VLLM, weight_format="fp8", tp=8, prompt_len=3200, output_len=1,
                   engine_version="0.7.3")
    return prefill_seconds(m, g, with_engine_defaults(s, g), tokens, fitted())


def test_the_experts_bound_a_block_fp8_prefill_on_hopper(catalog: Catalog) -> None:
    # dstack's 4-client wave: 12,800 prompt tokens on 8 H200. DeepSeek-V3's routed experts: 58 MoE layers x 8
    # experts x 3 x 7,168 x 2,048 = 20.4 G parameters, 40.9 GFLOP a token; 12,800 x 40.9 G / (8 x 80 TFLOP/s) =
    # 0.82 s for the experts alone, where the fitted rate (~290 TFLOP/s a GPU) gives them about 0.23 s. The source
    # measured 0.97 s to the first token.
    capped, fitted_rate = _prefill(catalog, "H200", True), _prefill(catalog, "H200", False)
    assert capped >= 0.82
    assert capped - fitted_rate == pytest.approx(0.82 - 0.23, abs=0.1)


def test_mi300x_keeps_the_fitted_rate(catalog: Catalog) -> None:
    assert _prefill(catalog, "MI300X", True) == _prefill(catalog, "MI300X", False)
