"""trtllm-bench's own scheduler limits (gpuplan.estimate.trtllm_bench), checked against hand-computed runs of the
heuristic in NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py, and carried by the perf-overview rows that
ran them (bench/calib.py)."""

from __future__ import annotations

import csv
import sys
from dataclasses import replace
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from calib import _inference_case  # noqa: E402

from gpuplan.catalog import Catalog  # noqa: E402
from gpuplan.estimate.calibration import fitted  # noqa: E402
from gpuplan.estimate.engines import token_budget  # noqa: E402
from gpuplan.estimate.infer_speed import prefill_seconds  # noqa: E402
from gpuplan.estimate.trtllm_bench import bench_limits, config_head_size, running_limits  # noqa: E402
from gpuplan.types import InferSetup  # noqa: E402

# Llama-3.1-8B FP8 (FP8 KV cache) on one H100 (NVML total 81,559 MiB): 8.03 B weights at 1 byte leave
# (79.65 − 7.48) GiB × 0.95 = 68.56 GiB of cache; a token holds 2 × 32 layers × 8 KV heads × 128 × 1 byte = 64 KiB
CASES = [
    # 2,000 tokens a request: 68.56 GiB / 125 MiB = 561.6 requests -> 640 (multiple of 128); tokens 561.6 × 2
    # = 1,123 -> the 2,048 floor
    (1000, 1000, False, (640, 2048)),
    # 256 tokens a request: 4,388 requests, capped at 4,096; tokens 4,096 × 2 = 8,192
    (128, 128, False, (4096, 8192)),
    # 22,000 tokens a request: 51.1 requests -> the 64 floor; tokens 51.1 × 11 = 562 -> 2,048, and the PyTorch
    # backend without chunked prefill raises it to the whole prompt plus the batch: 20,000 + 64
    (20000, 2000, False, (64, 2048)),
    (20000, 2000, True, (64, 20064)),
]


@pytest.mark.parametrize(("isl", "osl", "pytorch", "expected"), CASES)
def test_limits_match_the_heuristic_worked_by_hand(catalog: Catalog, isl: int, osl: int, pytorch: bool,
                                                  expected: tuple[int, int]) -> None:
    m, gpu = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")
    assert bench_limits(m, gpu, "fp8", "fp8", 1, 1, isl, osl, pytorch=pytorch) == expected


def test_more_memory_never_shrinks_the_batch(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.3-70B")
    one = bench_limits(m, catalog.gpu("H100"), "fp8", "fp8", 1, 1, 1000, 1000)
    for tp in (2, 4, 8):
        more = bench_limits(m, catalog.gpu("H100"), "fp8", "fp8", tp, 1, 1000, 1000)
        assert more[0] >= one[0]
        one = more
    # a 16-bit cache holds half the requests of an FP8 one
    assert bench_limits(m, catalog.gpu("H200"), "fp8", "bf16", 1, 1, 1000, 1000)[0] < \
        bench_limits(m, catalog.gpu("H200"), "fp8", "fp8", 1, 1, 1000, 1000)[0]


def test_pipeline_stages_and_attention_ranks_each_run_a_batch_of_the_limits() -> None:
    # 4 pipeline stages of 64 sequences are 256 running; attention DP over 8 ranks runs 8 batches and 8 passes
    assert running_limits(64, 2048, tp=1, pp=4) == (256, 2048)
    assert running_limits(64, 2048, tp=8, pp=1, attention_dp=True) == (512, 16384)
    assert running_limits(64, 2048, tp=8, pp=1) == (64, 2048)


def test_a_run_with_its_own_token_budget_prefills_in_passes_of_it(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.1-8B")
    assert token_budget(m, InferSetup(engine="trtllm")) == 8192  # engines.csv
    assert token_budget(m, InferSetup(engine="trtllm", max_batched_tokens=2048)) == 2048


def _serving_row(rid: str) -> dict[str, str]:
    with (BENCH / "calibration" / "inference_serving.csv").open(encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f) if r["id"] == rid)


def test_a_perf_overview_row_carries_the_limits_its_benchmark_picked(catalog: Catalog) -> None:
    # srv-0002: TensorRT-LLM 0.17 perf overview, Llama-3.1-8B FP8 on one H100, 128/128, trtllm-bench
    row = _serving_row("srv-0002")
    case = _inference_case(catalog, row)[0]
    assert case is not None
    setup = case.meta["setup"]
    assert (setup.max_num_seqs, setup.max_batched_tokens) == (4096, 8192)
    # the same run under trtllm-serve keeps the engine's defaults: only the benchmark picks its own limits
    served = _inference_case(catalog, {**row, "notes": "trtllm-serve", "system": ""})[0]
    assert served is not None
    assert (served.meta["setup"].max_num_seqs, served.meta["setup"].max_batched_tokens) == (None, None)


def test_the_heuristic_sizes_an_mla_cache_by_the_head_size_its_config_gives(catalog: Catalog) -> None:
    # DeepSeek-R1's config.json states no head_dim, so trtllm-bench's ModelConfig takes 7,168 // 128 = 56; GLM-5's
    # states 64; a config with neither falls back to hidden // heads like the MLA one
    assert config_head_size({"hidden_size": 7168, "num_attention_heads": 128, "qk_nope_head_dim": 128}) == 56
    assert config_head_size({"hidden_size": 6144, "num_attention_heads": 64, "head_dim": 64}) == 64
    assert config_head_size({"text_config": {"hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128}}) == 128
    m, gpu = catalog.model("DeepSeek-R1"), catalog.gpu("B200")
    # 4 B200 (179.06 GiB each) less 671.03 B weights at NVFP4's 0.5 byte, × 0.95 = 411.87 GB of cache; a token holds
    # 2 × 61 layers × 128 KV heads × 56 × 1 byte (FP8) = 874,496 bytes, so 2,048 tokens a request: 229.97 requests
    # -> 256 (multiple of 32); tokens 229.97 × 2 = 460 -> the 2,048 floor (above the prompt plus the batch, 1,280)
    assert bench_limits(m, gpu, "nvfp4", "fp8", 4, 1, 1024, 1024, pytorch=True, head_size=56) == (256, 2048)
    # sized by the 192 of a query head instead, the cache would seem to hold 67 requests (rounded up to 96)
    assert bench_limits(m, gpu, "nvfp4", "fp8", 4, 1, 1024, 1024, pytorch=True)[0] == 96



def test_perf_overview_rows_of_an_mla_model_run_the_batch_its_config_gives(catalog: Catalog) -> None:
    # DEP4 on B200 (NVFP4, 1024/1024): 256 sequences on each of 4 attention-DP ranks; DEP8 on H200 (FP8): 384 × 8
    for rid, running in (("srv-6063", 1024), ("srv-6065", 3072)):
        case = _inference_case(catalog, _serving_row(rid))[0]
        assert case is not None
        assert case.meta["setup"].max_num_seqs == running


def test_runs_that_balance_attention_dp_ranks_prefill_them_together(catalog: Catalog) -> None:
    # the DeepSeek-R1 runs state attention_dp_config enable_balance true; the Qwen3-235B ones only attention DP
    balanced = _inference_case(catalog, _serving_row("srv-6063"))[0]
    default = _inference_case(catalog, _serving_row("srv-6119"))[0]
    assert balanced is not None and default is not None
    assert balanced.meta["setup"].attention_dp_balance and not default.meta["setup"].attention_dp_balance
    s = balanced.meta["setup"]
    m, gpu, cal = catalog.model("DeepSeek-R1"), catalog.gpu("B200"), fitted()
    # 8,192 prompt tokens: balanced, the four ranks prefill 2,048 each in one pass; one after another, a rank's
    # 2,048 a pass, four passes
    assert prefill_seconds(m, gpu, s, 8192, cal) < 0.5 * prefill_seconds(m, gpu, replace(s, attention_dp_balance=False),
                                                                          8192, cal)
