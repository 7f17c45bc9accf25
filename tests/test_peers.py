"""The accuracy benchmark's peer adapters (bench/peers.py) hand each tool the row's setup and read its answer
back in gpuplan's base units. One known case per tool; a tool's test is skipped where it is not installed
(bench/requirements-peers.txt installs them)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from calib import Case
from peers import (
    Skip,
    accelerate_predict,
    answer,
    deepspeed_predict,
    infer_quantity,
    la_gpu,
    llm_analysis_predict,
    peers,
    train_quantity,
    vramcalc_predict,
)

from gpuplan import load_catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.types import InferSetup, Parallelism, TrainSetup
from gpuplan.units import GB, HOUR, GiB

LLAMA2_7B = 6_738_415_616  # transformers LlamaForCausalLM numel (tests/data/param_counts.csv)
LLAMA2_7B_EMBED = 32_000 * 4_096  # one vocab × hidden table


def make_case(cls: str, setup: TrainSetup | InferSetup, model: str = "Llama-2-7B", gpu: str = "A100-80GB",
              measured: float = 1.0, **meta: Any) -> Case:
    cat = load_catalog()
    return Case(id="t", cls=cls, measured=measured, predict=lambda cal: math.nan, source="test", describe="test",
                meta={"model_name": model, "model": cat.model(model), "gpu": cat.gpu(gpu), "setup": setup, **meta})


def weights_row() -> Case:
    """mem-0024's shape: Llama-2-7B fp16 weights, as transformers loads them."""
    return make_case("inference_memory", InferSetup(engine="hf", weight_format="fp16"), measure="weights")


# ---------------------------------------------------------------- conversions (no tool needed)


def test_train_quantity_units() -> None:
    # 1e9 tokens at 1e5 tokens/s over 8 GPUs: 1e4 s, 1.25e4 tokens/s per GPU, 8e4 GPU-seconds
    setup = TrainSetup(parallel=Parallelism(dp=8))
    for measure, expected in (("seconds", 1e4), ("tokens_per_s", 1e5), ("tokens_per_s_per_gpu", 1.25e4),
                              ("gpu_hours", 8e4 / HOUR)):
        case = make_case("pretrain_throughput", setup, measure=measure, tokens=1e9)
        assert train_quantity(case, 1e5) == pytest.approx(expected)


def test_infer_quantity_units() -> None:
    # batch 4, 100 output tokens, TTFT 0.5 s, TPOT 0.02 s: 400 tokens in 2.5 s = 160 tokens/s (80 per GPU at TP2)
    setup = InferSetup(batch=4, prompt_len=10, output_len=100, tp=2)
    rate = make_case("inference_throughput", setup, quantity="output_tokens_per_s", per_gpu=False)
    per_gpu = make_case("inference_throughput", setup, quantity="output_tokens_per_s", per_gpu=True)
    tpot = make_case("inference_latency", setup, quantity="tpot_s", per_gpu=False)
    assert infer_quantity(rate, 0.5, 0.02, 4) == pytest.approx(160.0)
    assert infer_quantity(per_gpu, 0.5, 0.02, 4) == pytest.approx(80.0)
    assert infer_quantity(tpot, 0.5, 0.02, 4) == 0.02


def test_a_skip_is_recorded_not_raised() -> None:
    vram = next(p for p in peers() if p.name == "vramcalc")
    row = make_case("inference_latency", InferSetup(engine="hf"), quantity="tpot_s")
    got = answer(vram, row, fitted())
    assert math.isnan(got.predicted) and got.skipped


# ---------------------------------------------------------------- each tool on one known case


def test_accelerate_llama2_7b_fp16_is_12_55_gib() -> None:
    pytest.importorskip("accelerate")
    pytest.importorskip("transformers")
    got = accelerate_predict(weights_row(), fitted())
    assert got == pytest.approx(LLAMA2_7B * 2, abs=1024)  # parameters plus the rotary inv_freq buffer
    assert got / GiB == pytest.approx(12.55, abs=0.005)


def test_vramcalc_weights_and_device_overhead() -> None:
    pytest.importorskip("vramcalc")
    assert vramcalc_predict(weights_row(), fitted()) == LLAMA2_7B * 2
    setup = InferSetup(engine="hf", weight_format="fp16", prompt_len=512, output_len=512)
    allocator = vramcalc_predict(make_case("inference_memory", setup, measure="active"), fitted())
    device = vramcalc_predict(make_case("inference_memory", setup, measure="device"), fitted())
    assert device - allocator == pytest.approx(0.75 * GB)  # vramcalc's default overhead_gb, decimal GB


def test_deepspeed_model_states_in_bytes() -> None:
    pytest.importorskip("deepspeed")
    one_gpu = TrainSetup(method="full", precision="bf16-mixed")
    # no ZeRO: 2 bytes of 16-bit weights + 18 bytes of gradients, master weights and Adam states per parameter
    assert deepspeed_predict(make_case("finetune_memory", one_gpu, measure="device"), fitted()) == 20 * LLAMA2_7B
    fsdp8 = TrainSetup(method="full", parallel=Parallelism(dp=8, zero=3))
    got = deepspeed_predict(make_case("pretrain_memory", fsdp8, measure="reserved"), fitted())
    assert got == int(18 * LLAMA2_7B / 8) + 4 * LLAMA2_7B_EMBED  # ZeRO-3: shards + the largest layer in fp32


def test_llm_analysis_units() -> None:
    pytest.importorskip("llm_analysis")
    gpu = la_gpu(load_catalog().gpu("A100-80GB"), load_catalog().gpu("A100-80GB").memory_bytes)
    # the values of llm-analysis's own gpu_configs/a100-sxm-80gb.json
    assert (gpu.mem_per_GPU_in_GB, gpu.hbm_bandwidth_in_GB_per_sec, gpu.peak_fp16_TFLOPS,
            gpu.intra_node_bandwidth_in_GB_per_sec) == (80, 2039, 312, 300)
    # it assumes a tied embedding: Llama-2-7B less one vocab × hidden table, 2 bytes each
    assert llm_analysis_predict(weights_row(), fitted(), matched=False) == 2 * (LLAMA2_7B - LLAMA2_7B_EMBED)
    with pytest.raises(Skip):
        llm_analysis_predict(weights_row(), fitted(), matched=True)  # memory does not depend on efficiencies
