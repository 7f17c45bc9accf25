"""Inference speed: what the kernels an engine runs change — the attention's dtype, llama.cpp's 16-bit copy of
quantized weights before a prefill GEMM — and which calibration rows
describe a configuration gpuplan does not model (speculative decoding)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import engine
from gpuplan.estimate.flops import matmul_params
from gpuplan.estimate.infer_speed import (
    compute_peak,
    dequant_seconds,
    latency,
    prefill_logit_rows,
    prefill_seconds,
    sixteen_bit_extra_flops,
    weight_bandwidth,
)
from gpuplan.estimate.quant import weight_format
from gpuplan.types import InferSetup, ModelSpec

# ---------------------------------------------------------------- attention dtype


def test_an_fp8_cache_speeds_up_a_long_prompt_only_where_the_part_has_fp8(catalog: Catalog) -> None:
    # FP8 weights with a 16-bit cache (vLLM's --kv-cache-dtype auto) run QK^T and AV at the 16-bit rate; an FP8
    # cache feeds FP8 attention (FlashAttention-3) on H100, which A100 lacks (no FP8 tensor cores)
    m = catalog.model("Llama-3.1-8B")
    long_prompt = dict(engine="vllm", weight_format="fp8", prompt_len=32_000, output_len=1)
    for gpu, faster in (("H100", True), ("A100-80GB", False)):
        g = catalog.gpu(gpu)
        bf16_cache = prefill_seconds(m, g, InferSetup(kv_dtype="bf16", **long_prompt), 32_000, fitted())
        fp8_cache = prefill_seconds(m, g, InferSetup(kv_dtype="fp8", **long_prompt), 32_000, fitted())
        assert (fp8_cache < bf16_cache) is faster, gpu


# ---------------------------------------------------------------- the matmuls a quantized checkpoint keeps 16-bit


@pytest.mark.parametrize(("model", "gpu", "fmt", "extra_flops"), [
    # Llama-3.1-8B: LM head 128,256 × 4,096 = 525,336,576 weights, 2 FLOPs each per token; FP8 peak 1,978.9 TFLOP/s is
    # 2.0001 × the 989.4 BF16 one (H100 SXM datasheet), so the head costs one more FP8-rate pass of its FLOPs
    ("Llama-3.1-8B", "H100", "fp8", 2 * 525_336_576 * (1978.9 / 989.4 - 1)),
    # Qwen3-30B-A3B: head 151,936 × 2,048 = 311,164,928 plus 48 routers of 128 × 2,048 = 12,582,912; B200's NVFP4
    # GEMMs run at 4,500 × 3,904 / 2,545 = 6,903 TFLOP/s (see the FP4 GEMM share below), 3.068 × its 2,250 BF16,
    # so they cost 2.068 more FP4-rate passes
    ("Qwen3-30B-A3B", "B200", "nvfp4", 2 * (311_164_928 + 12_582_912) * (4500 * 3904 / 2545 / 2250 - 1)),
    ("Llama-3.1-8B", "H100", "bf16", 0.0),  # one rate for every matmul
    ("Llama-3.1-8B", "A100-80GB", "fp8", 0.0),  # no FP8 tensor cores: every matmul already at the 16-bit rate
    ("Llama-3.1-8B", "H100", "gguf-q4_k_m", 0.0),  # GGUF quantizes the output matrix too
])
def test_the_lm_head_and_routers_a_checkpoint_keeps_16_bit_run_at_the_16_bit_rate(
        catalog: Catalog, model: str, gpu: str, fmt: str, extra_flops: float) -> None:
    got = sixteen_bit_extra_flops(catalog.model(model), catalog.gpu(gpu), weight_format(fmt))
    assert got == pytest.approx(extra_flops, rel=1e-3)


# ---------------------------------------------------------------- block-scaled FP4 GEMMs on datacenter Blackwell


@pytest.mark.parametrize(("gpu", "fmt", "tflops"), [
    # vLLM's CUTLASS GEMMs on SM100 at M = 16,384, N = 6,144, K = 4,096 (PRs #19566 and #20646): FP8 2,545 TFLOP/s,
    # NVFP4 3,904, so an NVFP4 GEMM runs 3,904 / 2,545 = 1.53 × as fast as an FP8 one, not the datasheets' 2 ×
    ("B200", "nvfp4", 4500 * 3904 / 2545),
    ("GB200", "nvfp4", 5000 * 3904 / 2545),  # the same die at its own clocks: 10,000 FP4, 5,000 FP8
    ("B200", "fp8", 4500),  # FP8 keeps its datasheet peak: the fitted efficiencies were fitted on it
    ("RTXPRO6000", "nvfp4", 2015.2),  # SM120 (mma.sync block scales), not measured short of its peak's share
    ("B300", "nvfp4", 13500),  # Blackwell Ultra: no measurement, the datasheet stands
])
def test_nvfp4_gemms_on_datacenter_blackwell_run_short_of_twice_fp8(
        catalog: Catalog, gpu: str, fmt: str, tflops: float) -> None:
    assert compute_peak(catalog.gpu(gpu), weight_format(fmt))[0] == pytest.approx(tflops * 1e12, rel=1e-3)


def test_an_nvfp4_prompt_on_b200_prefills_well_short_of_twice_as_fast_as_fp8(catalog: Catalog) -> None:
    # a GEMM-bound 8k-token Llama-3.3-70B pass: the GEMMs gain 1.53 ×, attention (FP8 in both) nothing
    m, g = catalog.model("Llama-3.3-70B"), catalog.gpu("B200")
    seconds = {fmt: prefill_seconds(m, g, InferSetup(engine="trtllm", weight_format=fmt, prompt_len=8192,
                                                     output_len=1), 8192, fitted()) for fmt in ("fp8", "nvfp4")}
    assert 1.3 < seconds["fp8"] / seconds["nvfp4"] < 3904 / 2545


def test_an_fp4_estimate_says_what_share_of_the_datasheet_its_gemms_get(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.3-70B")
    fp4 = InferSetup(engine="trtllm", weight_format="nvfp4", prompt_len=1024, output_len=128)
    values = {a.name: a.value for a in latency(m, catalog.gpu("B200"), fp4, fitted()).assumptions}
    assert "9,000 TFLOP/s" in values["fp4 gemm share"]
    fp8 = InferSetup(engine="trtllm", weight_format="fp8", prompt_len=1024, output_len=128)
    assert "fp4 gemm share" not in {a.name for a in latency(m, catalog.gpu("H200"), fp8, fitted()).assumptions}


# ---------------------------------------------------------------- the LM head in a prefill


@pytest.mark.parametrize(("setup", "tokens", "rows"), [
    # a pass of eight whole 1,024-token prompts: one sampled position each
    (InferSetup(engine="vllm", prompt_len=1024), 8192, 8),
    # a 2,048-token chunk of a 32k prompt still samples (and discards) one token: vLLM's partial requests
    (InferSetup(engine="sglang", prompt_len=32_768), 2048, 1),
    (InferSetup(engine="llamacpp", prompt_len=512), 512, 1),
    # transformers' generate before 4.45 ran lm_head over the whole prompt
    (InferSetup(engine="hf", prompt_len=1024, full_logits=True), 8192, 8192),
    (InferSetup(engine="mindie", prompt_len=1024), 8192, 8192),  # not checked in MindIE's source: as before
])
def test_a_prefill_runs_the_lm_head_once_per_sequence(setup: InferSetup, tokens: int, rows: int) -> None:
    assert prefill_logit_rows(setup, tokens) == rows


def _lm_head_share(m: ModelSpec) -> float:
    return m.vocab * m.hidden / matmul_params(m)


@pytest.mark.parametrize(("model", "head_share", "least"), [
    # Qwen2.5-0.5B: 151,936 × 896 = 136,134,656 of its 493,988,864 matmul weights are the (tied) LM head
    ("Qwen2.5-0.5B", 0.2756, 1.2),
    # Llama-3.1-8B: 128,256 × 4,096 = 525,336,576 of 7,504,658,432
    ("Llama-3.1-8B", 0.0700, 1.03),
])
def test_a_long_prompt_prefills_faster_without_every_positions_logits(
        catalog: Catalog, model: str, head_share: float, least: float) -> None:
    # a 4,096-token prompt on an H100 is compute-bound: leaving the head out of all but the last position saves
    # most of its share of the GEMM FLOPs (the attention and launches, which it does not touch, dilute it)
    m, gpu = catalog.model(model), catalog.gpu("H100")
    assert _lm_head_share(m) == pytest.approx(head_share, abs=1e-4)
    last = InferSetup(engine="vllm", prompt_len=4096, output_len=1)
    every = InferSetup(engine="vllm", prompt_len=4096, output_len=1, full_logits=True)
    ratio = prefill_seconds(m, gpu, every, 4096, fitted()) / prefill_seconds(m, gpu, last, 4096, fitted())
    assert least < ratio < 1 / (1 - head_share)


# ---------------------------------------------------------------- llama.cpp's dequantized copy


def test_llamacpp_prefills_quantized_weights_slower_than_fp16_on_cuda_but_not_on_metal(catalog: Catalog) -> None:
    # measured on an RTX 4090 (llama-bench pp512, Llama-2-7B): FP16 46 ms, Q4_0 64 ms — the Q4_0 GEMMs first
    # write an FP16 copy of every weight (ggml_cuda_op_mul_mat_cublas); Metal dequantizes tiles on chip
    m = catalog.model("Llama-2-7B")
    for gpu, slower in (("RTX4090", True), ("M2-Ultra", False)):
        g = catalog.gpu(gpu)
        fp16, q4 = (prefill_seconds(m, g, InferSetup(engine="llamacpp", weight_format=f, prompt_len=512), 512,
                                    fitted()) for f in ("fp16", "gguf-q4_0"))
        assert (q4 > fp16) is slower, gpu


def test_only_an_engine_that_copies_quantized_weights_pays_for_it(catalog: Catalog) -> None:
    m, g = catalog.model("Llama-2-7B"), catalog.gpu("RTX4090")
    q4 = dequant_seconds(m, g, InferSetup(engine="llamacpp", weight_format="gguf-q4_0"), 512)
    # 6.5 G linear weights: 3.7 GB of Q4_0 read and 13 GB of FP16 written at 1008 GB/s, about 17 ms
    assert 0.014 < q4 < 0.020
    assert dequant_seconds(m, g, InferSetup(engine="llamacpp", weight_format="fp16"), 512) == 0
    assert dequant_seconds(m, g, InferSetup(engine="vllm", weight_format="awq-int4"), 512) == 0


# ---------------------------------------------------------------- llama.cpp's per-SM load cap


def _with_sm_load(bytes_per_cycle: float) -> Calibration:
    cal = fitted()
    return Calibration({**cal.values, "sm_load_bytes_llamacpp": bytes_per_cycle}, cal.bands, cal.fitted_on)


def test_llamacpp_streams_weights_no_faster_than_its_sms_load_them(catalog: Catalog) -> None:
    # 7 bytes per SM cycle: A100 108 SMs × 1.41 GHz (A100 whitepaper) × 7 = 1,066 GB/s, about half its 2,039 GB/s
    # HBM; an RTX 4090's 128 SMs × 2.52 GHz × 7 = 2,258 GB/s is far above its 1,008 GB/s GDDR6X, which binds
    cal = _with_sm_load(7.0)
    llamacpp, eta = engine("llamacpp"), cal.get("eta_memory_llamacpp")
    assert weight_bandwidth(catalog.gpu("A100-80GB"), llamacpp, cal) == pytest.approx(1.066e12, rel=0.001)
    assert weight_bandwidth(catalog.gpu("RTX4090"), llamacpp, cal) == pytest.approx(eta * 1008e9, rel=0.001)
    # vLLM's GEMV kernels reach its fitted share of the HBM on the same A100: no cap
    vllm = engine("vllm")
    assert weight_bandwidth(catalog.gpu("A100-80GB"), vllm, cal) == pytest.approx(
        cal.get("eta_memory_vllm") * 2039e9, rel=0.001)


def test_llamacpp_decodes_on_an_a100_about_as_fast_as_on_an_rtx_3090(catalog: Catalog) -> None:
    # XiongjieDai GPU-Benchmarks-on-LLM-Inference (llama-bench build 2824, Llama-3-8B F16, tg512): A100-SXM4-80GB
    # 53.5 tok/s (lcp-0209), RTX 3090 47.7 tok/s (lcp-0016): 1.12× for 2.2× the datasheet bandwidth
    m, s = catalog.model("Llama-3-8B"), InferSetup(engine="llamacpp", weight_format="fp16", prompt_len=1,
                                                   output_len=512)
    a100, rtx3090 = (1 / latency(m, catalog.gpu(g), s).figures.tpot_s for g in ("A100-80GB", "RTX3090"))
    assert a100 == pytest.approx(53.5, rel=0.15)
    assert a100 / rtx3090 < 1.4


def test_the_load_cap_is_named_only_where_it_binds(catalog: Catalog) -> None:
    m, s = catalog.model("Llama-3-8B"), InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m")
    named = {g: [a.name for a in latency(m, catalog.gpu(g), s).assumptions]
             for g in ("A100-80GB", "RTX4090", "M2-Ultra")}
    assert "weight load rate" in named["A100-80GB"]
    assert "weight load rate" not in named["RTX4090"] and "weight load rate" not in named["M2-Ultra"]


# ---------------------------------------------------------------- rows gpuplan does not model


def test_speculative_decoding_rows_are_not_mapped(calibration_cases: tuple[list[Any], list[Any]]) -> None:
    # GPUStack's SGLang EAGLE3 run reports a TPOT of 3.8 ms (srv-4589) where the same server without drafts
    # measures 5.7 ms (srv-4553): several accepted draft tokens per step, a number the rows do not state
    cases, unmapped = calibration_cases
    why = {u.id: u.why for u in unmapped}
    assert "speculative decoding" in why["srv-4589"]
    assert "srv-4553" in {c.id for c in cases}


# ---------------------------------------------------------------- llama.cpp's Metal backend


def test_llamacpp_on_apple_silicon_decodes_at_the_metal_kernels_fitted_efficiency(catalog: Catalog) -> None:
    # llama.cpp on a Mac runs ggml-metal, not its CUDA kernels: its bandwidth efficiency is fitted on the Apple rows
    # alone, so changing the CUDA one moves a CUDA estimate and leaves the Mac's where it was
    from dataclasses import replace as copy

    from gpuplan.estimate.infer_speed import decode_step_seconds

    m, s = catalog.model("Llama-3.1-8B"), InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m")
    cal = fitted()
    slower_cuda = copy(cal, values={**cal.values, "eta_memory_llamacpp": cal.values["eta_memory_llamacpp"] / 2})
    for gpu, moves in (("M2-Max", False), ("RTX4090", True)):
        g = catalog.gpu(gpu)
        before, _ = decode_step_seconds(m, g, s, 1.0, 1024.0, cal)
        after, _ = decode_step_seconds(m, g, s, 1.0, 1024.0, slower_cuda)
        assert (after > before * 1.2) is moves, gpu


def test_only_parts_and_engines_no_published_run_covers_are_called_uncalibrated(catalog: Catalog) -> None:
    # the Apple rows are llama.cpp runs, so llama.cpp on a Mac is calibrated; no published vLLM run on AMD parts is
    from gpuplan.estimate.infer_speed import latency

    def source(model: str, gpu: str, engine: str, fmt: str) -> str:
        est = latency(catalog.model(model), catalog.gpu(gpu), InferSetup(engine=engine, weight_format=fmt))
        return next(a.source for a in est.assumptions if a.name == "engine efficiency")

    assert "not calibrated" not in source("Llama-3.1-8B", "M2-Max", "llamacpp", "gguf-q4_k_m")
    assert "not calibrated" not in source("Llama-3.1-8B", "H100", "vllm", "bf16")
    assert "none on AMD parts" in source("Llama-3.1-8B", "MI300X", "vllm", "bf16")


# ---------------------------------------------------------------- pipeline parallelism


def test_pipeline_stages_overlap_their_batches_only_in_engines_that_interleave_them(catalog: Catalog) -> None:
    # Llama-3.1-70B in FP8 over 2 pipeline stages of one H100 each, 64 sequences decoding. Run one after another
    # (transformers' device_map), a token of every sequence waits for stage 1 then stage 2 with all 64 in one batch:
    # one pass reading every weight once and all 64 sequences' KV caches. vLLM keeps one batch per stage in flight
    # (pipeline_parallel_size batches at once): two batches of 32 alternate, each stage busy with one while the
    # other stage has the other, so a cycle costs each stage two half-passes — every weight once per batch at half
    # the layers, i.e. the weights once and 32 sequences' caches, plus the last stage's LM head twice. Per token: a
    # little less than the serial step (half the KV reads), never more than it. At one sequence there is one batch.
    from dataclasses import replace

    from gpuplan.estimate import infer_speed

    m, g = catalog.model("Llama-3.1-70B"), catalog.gpu("H100")
    s = InferSetup(engine="vllm", weight_format="fp8", pp=2, prompt_len=512, output_len=512)
    cal = fitted()
    interleaved = infer_speed.decode_step_seconds(m, g, s, 64, 768, cal)[0]
    one = infer_speed.decode_step_seconds(m, g, s, 1, 768, cal)[0]
    serial_engine = replace(infer_speed.get_engine("vllm"), pp_microbatches=False)
    original = infer_speed.get_engine
    try:
        infer_speed.get_engine = lambda name: serial_engine  # type: ignore[assignment]
        serial = infer_speed.decode_step_seconds(m, g, s, 64, 768, cal)[0]
        serial_one = infer_speed.decode_step_seconds(m, g, s, 1, 768, cal)[0]
    finally:
        infer_speed.get_engine = original  # type: ignore[assignment]
    assert serial_one == one
    assert interleaved < serial
    # the weights (70 GB in FP8 over 2 GPUs) outweigh the KV reads (64 × 768 tokens × 160 KiB = 8 GB): the saving is
    # a part of the cache's share, not a doubling
    assert interleaved > 0.75 * serial


def test_a_gguf_decode_step_reads_the_files_tensors_less_its_token_table(catalog: Catalog) -> None:
    from gpuplan.estimate.infer_speed import decode_weight_bytes
    from gpuplan.estimate.quant import weight_format
    from gpuplan.units import GiB

    # the format's average (4.84 bits, Llama 2 7B's) put 4.54 GB on the step; the tensors say 4.62 GB
    s = InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m")
    fmt = weight_format("gguf-q4_k_m")
    # llama.cpp tools/quantize/README.md (Llama-3.1-8B table): the Q4_K_M file is 4.58 GiB. Its untied token table,
    # 128256 x 4096 in Q4_K (144 bytes per 256 weights), is gathered a row per token, not streamed: 0.275 GiB
    table = 128256 * 4096 * 144 / 256
    assert decode_weight_bytes(catalog.model("Llama-3.1-8B"), fmt, s, 1) == pytest.approx(4.58 * GiB - table,
                                                                                         rel=0.005)


def test_a_gguf_moe_decode_step_leaves_the_unchosen_experts_unread_at_the_bytes_the_file_gives_them(
        catalog: Catalog) -> None:
    from gpuplan.estimate.infer_speed import decode_weight_bytes
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    # gpt-oss-120b's experts have rows of 2880 weights, not whole 256-weight super-blocks, so a Q4_K_M file stores
    # them in the quantizer's fallbacks (Q5_0, Q8_0), about 6 bits, not the format's 4.84: one token chooses 4 of
    # 128 experts per layer (5.1B of 117B parameters active), so a step reads well under a tenth of the file
    s = InferSetup(engine="llamacpp", weight_format="gguf-q4_k_m")
    fmt = weight_format("gguf-q4_k_m")
    m = catalog.model("gpt-oss-120b")
    assert decode_weight_bytes(m, fmt, s, 1) < 0.08 * gguf_weights_bytes(m, fmt, input_table=False)


# ---------------------------------------------------------------- llama.cpp's Metal mat-vec ALU floor


def _with_matvec_floor(flops_per_weight: float) -> Calibration:
    cal = fitted()
    return Calibration({**cal.values, "matvec_flops_per_weight_llamacpp_metal": flops_per_weight}, cal.bands,
                       cal.fitted_on)


def _tok_s(cal: Calibration, model: str, gpu: str, fmt: str, catalog: Catalog) -> float:
    s = InferSetup(engine="llamacpp", weight_format=fmt, prompt_len=1, output_len=512)
    return 1 / latency(catalog.model(model), catalog.gpu(gpu), s, cal).figures.tpot_s


def test_an_m1_max_decodes_q4_k_m_at_its_alus_pace_not_its_bandwidths(catalog: Catalog) -> None:
    # XiongjieDai GPU-Benchmarks-on-LLM-Inference (llama-bench build 2797, Llama-3-8B, tg512) on an M1 Max: Q4_K_M
    # 35.73 tok/s (lcp-0089), F16 18.75 (lcp-0093): a third of the bytes, not even twice the speed. At 31 FLOP per
    # weight, 7.0 G matmul weights take 7.0e9 × 31 / 10.4 TFLOP/s = 21 ms a token on the ALUs, more than the 4.9 GB
    # take at the fitted share of 400 GB/s
    cal = fitted()
    without = Calibration({k: v for k, v in cal.values.items() if k != "matvec_flops_per_weight_llamacpp_metal"},
                          cal.bands, cal.fitted_on)
    floored = _with_matvec_floor(31.0)
    assert _tok_s(without, "Llama-3-8B", "M1-Max", "gguf-q4_k_m", catalog) > 35.73 * 1.25  # bandwidth alone: fast
    assert _tok_s(floored, "Llama-3-8B", "M1-Max", "gguf-q4_k_m", catalog) == pytest.approx(35.73, rel=0.15)
    # F16 weights need no dequantization (half operands are free on the ALUs): unchanged
    assert _tok_s(floored, "Llama-3-8B", "M1-Max", "fp16", catalog) == _tok_s(without, "Llama-3-8B", "M1-Max",
                                                                               "fp16", catalog)


def test_the_alu_floor_is_the_metal_k_quant_kernels_own(catalog: Catalog) -> None:
    floored, without = _with_matvec_floor(31.0), fitted()
    # CUDA's MMVQ multiplies packed weights with int8 activations 4 at a time (dp4a): no floor on an A100, whose
    # FP32 rate per byte (9.6 FLOP/B) is lower still than an M1 Max's (26)
    for gpu, fmt in (("A100-80GB", "gguf-q4_k_m"), ("M2-Max-30C", "gguf-q4_0"), ("M2-Max-30C", "gguf-q8_0")):
        assert _tok_s(floored, "Llama-3-8B", gpu, fmt, catalog) == _tok_s(without, "Llama-3-8B", gpu, fmt, catalog)
    # the floor takes the same FLOP per weight on every chip: an M2 Ultra, two M2 Max dies (UltraFusion) with their
    # FP32 rates and bandwidths summed, decodes Q4_K_M at least as fast as a 30-core M2 Max and at most 2.5× it
    ultra, m2max = (_tok_s(floored, "Llama-3-8B", g, "gguf-q4_k_m", catalog) for g in ("M2-Ultra", "M2-Max-30C"))
    assert m2max < ultra < 2.5 * m2max


# ---------------------------------------------------------------- host time per sequence (TensorRT-LLM PyTorch)

_HOST = 25e-6  # seconds per sequence and step, about what the perf overview's DGX B200 row shows (1 / 39,827 tok/s)


def _host_steps(catalog: Catalog, batch: int, **setup: Any) -> tuple[float, float]:
    """A decode step of Qwen3-30B-A3B NVFP4 on B200 at 128/128 tokens, without and with the host cost."""
    from gpuplan.estimate.infer_speed import decode_step_seconds

    m, g = catalog.model("Qwen3-30B-A3B"), catalog.gpu("B200")
    s = InferSetup(**{"engine": "trtllm", "weight_format": "nvfp4", "prompt_len": 128, "output_len": 128,
                      "launcher": "trtllm-bench", **setup})
    without = Calibration({k: v for k, v in fitted().values.items() if k != "host_seq_s_trtllm_pytorch"})
    return (decode_step_seconds(m, g, s, batch, 192, without)[0],
            decode_step_seconds(m, g, s, batch, 192, without.with_values(host_seq_s_trtllm_pytorch=_HOST))[0])


def test_a_large_batch_of_a_small_active_model_waits_on_the_host(catalog: Catalog) -> None:
    # 2,048 sequences x 25 µs = 51.2 ms of host work per step; the GPU reads 3 B active parameters' weights and the
    # caches in well under that, so the overlapped step lasts the host's 51.2 ms (about 40,000 tokens/s)
    gpu_only, with_host = _host_steps(catalog, 2048)
    assert gpu_only < 0.0512
    assert with_host == pytest.approx(0.0512)
    # 8 sequences: 0.2 ms of host work, hidden behind the GPU's step
    gpu_only, with_host = _host_steps(catalog, 8)
    assert with_host == gpu_only > 8 * _HOST


def test_attention_data_parallel_ranks_share_the_host_work(catalog: Catalog) -> None:
    # under enable_attention_dp each of 8 ranks schedules its own 256 of the 2,048 sequences: 6.4 ms of host work,
    # not 51.2 ms
    _, whole = _host_steps(catalog, 2048, tp=8)
    _, shared = _host_steps(catalog, 2048, tp=8, attention_dp=True)
    assert whole == pytest.approx(0.0512)
    assert shared < 0.0512 / 4


@pytest.mark.parametrize("setup", [
    {"engine_version": "0.17.0"},  # the C++ executor of a built TensorRT engine
    {"engine": "vllm", "launcher": ""},  # vLLM reads its own host time per sequence, not TensorRT-LLM's
])
def test_only_tensorrt_llm_pytorch_steps_read_its_host_time_per_sequence(catalog: Catalog,
                                                                         setup: dict[str, Any]) -> None:
    gpu_only, with_host = _host_steps(catalog, 2048, **setup)
    assert with_host == gpu_only


# ---------------------------------------------------------------- host time per sequence (vLLM, SGLang)

def _engine_steps(catalog: Catalog, batch: int, key: str, per_sequence: float, context: int = 1024,
                  **setup: Any) -> tuple[float, float]:
    """A decode step of Llama-3-8B (bf16) on one H100 at ``context`` tokens, with the engine's host time per
    sequence (``key``) at 0 and at ``per_sequence``."""
    from gpuplan.estimate.infer_speed import decode_step_seconds

    m, g = catalog.model("Llama-3-8B"), catalog.gpu("H100")
    s = InferSetup(**{"prompt_len": 512, "output_len": 1024, **setup})
    base = fitted().with_values(**{key: 0.0})
    return (decode_step_seconds(m, g, s, batch, context, base)[0],
            decode_step_seconds(m, g, s, batch, context, base.with_values(**{key: per_sequence}))[0])


@pytest.mark.parametrize("version, key", [("0.6.2", "host_seq_s_vllm_v0"), ("0.11.0", "host_seq_s_vllm")])
def test_vllm_before_async_scheduling_adds_its_host_time_to_every_step(catalog: Catalog, version: str,
                                                                       key: str) -> None:
    # EngineCore.step schedules, runs and waits for the tokens before the next schedule: 64 sequences x 20 µs =
    # 1.28 ms more per step, however short or long the GPU's part
    gpu_only, with_host = _engine_steps(catalog, 64, key, 20e-6, engine="vllm", engine_version=version)
    assert with_host == pytest.approx(gpu_only + 64 * 20e-6)


@pytest.mark.parametrize("setup", [
    {"engine": "sglang", "engine_version": "0.4.6.post2"},  # overlap scheduler, the default from 0.4
    {"engine": "vllm", "engine_version": "0.16.0"},  # async scheduling, the default from 0.14
    {"engine": "vllm", "engine_version": "0.11.0", "async_scheduling": True},  # started with --async-scheduling
])
def test_an_overlapping_scheduler_makes_the_step_the_longer_of_host_and_gpu(catalog: Catalog,
                                                                            setup: dict[str, Any]) -> None:
    key = "host_seq_s_sglang" if setup["engine"] == "sglang" else "host_seq_s_vllm"
    # 8 sequences x 20 µs = 0.16 ms of host work, hidden behind a step that reads 16 GB of weights (several ms)
    gpu_only, with_host = _engine_steps(catalog, 8, key, 20e-6, **setup)
    assert with_host == gpu_only > 10 * 8 * 20e-6
    # 128 sequences x 200 µs = 25.6 ms of host work, longer than the GPU's step over 16 GB of weights and 128 x 128
    # tokens of cache (2.1 GB), a batch every one of these releases replays as a CUDA graph: the step lasts the host's
    gpu_only, with_host = _engine_steps(catalog, 128, key, 200e-6, context=128, **setup)
    assert gpu_only < 0.0256
    assert with_host == pytest.approx(0.0256)


def test_vllm_under_pipeline_parallelism_schedules_synchronously_again(catalog: Catalog) -> None:
    # vLLM 0.14's async scheduling excludes pipeline parallelism: its host time adds to the step there
    overlapped = _engine_steps(catalog, 8, "host_seq_s_vllm", 20e-6, engine="vllm", engine_version="0.16.0")
    serial = _engine_steps(catalog, 8, "host_seq_s_vllm", 20e-6, engine="vllm", engine_version="0.16.0", pp=2)
    assert overlapped[1] == overlapped[0]
    assert serial[1] > serial[0]


# From the smallest llama.cpp file type to Q8_0 and across MLX's bit widths: each step holds fewer bytes, and on a
# GPU whose batch-1 decode streams the weights each token (an RTX 4090 under llama.cpp's CUDA kernels, which have no
# ALU floor) it decodes faster. On Apple GPUs the 2- and 3-bit types have no measured ALU floor, so no order there.
@pytest.mark.parametrize(("engine_name", "formats"), [
    ("llamacpp", ("gguf-iq1_s", "gguf-iq2_xxs", "gguf-q2_k", "gguf-q3_k_s", "gguf-q3_k_m", "gguf-q3_k_l",
                  "gguf-iq4_xs", "gguf-q4_k_m", "gguf-q6_k", "gguf-q8_0")),
    ("mlx", ("mlx-q2", "mlx-q3", "mlx-mxfp4", "mlx-q4", "mlx-q5", "mlx-q6", "mlx-q8")),
])
def test_a_smaller_format_holds_fewer_bytes_and_decodes_faster(catalog: Catalog, engine_name: str,
                                                                formats: tuple[str, ...]) -> None:
    from gpuplan.estimate.job import estimate_inference, inference_setup
    from gpuplan.types import Job

    m, gpu = catalog.model("Llama-3.1-8B"), catalog.gpu("RTX-4090" if engine_name == "llamacpp" else "M2-Ultra")
    job = Job(task="infer", batch=1, prompt_len=512, output_len=128, requests=1)
    runs = [estimate_inference(m, gpu, job, inference_setup(job, 1, engine_name, f)) for f in formats]
    weights = [e.memory.breakdown.get("weights") for e in runs]
    tpot = [e.speed.tpot_s for e in runs if e.speed]
    assert weights == sorted(weights) and len(set(weights)) == len(weights)
    assert tpot == sorted(tpot) and len(set(tpot)) == len(tpot)


# ---------------------------------------------------------------- llama.cpp's DP4A MMQ on Pascal


@pytest.mark.parametrize("gpu", ["GTX1080Ti", "P40"])
def test_llamacpp_prompts_on_pascal_beat_the_fp32_peak(catalog: Catalog, gpu: str) -> None:
    # llama.cpp's scoreboard (discussion #15013): Llama 2 7B Q4_0 pp512 in 0.45-0.47 s on a GTX 1080 Ti and 0.47-0.51 s
    # on a P40, about 2 x 6.7e9 x 512 = 6.9 TFLOP at 14-15 TFLOP/s: above the 11-12 TFLOP/s FP32 peak, reachable
    # only by MMQ's int8 DP4A path (45-47 TOPS), which reads the quantized weights without a 16-bit copy
    m, g = catalog.model("Llama-2-7B"), catalog.gpu(gpu)
    s = InferSetup(engine="llamacpp", weight_format="gguf-q4_0", prompt_len=512, output_len=1)
    fp32_floor = 2 * matmul_params(m) * 512 / g.fp32_flops_per_s
    assert prefill_seconds(m, g, s, 512, fitted()) < fp32_floor
    assert compute_peak(g, weight_format("gguf-q4_0"), engine("llamacpp"))[1].startswith("int8")
    assert dequant_seconds(m, g, s, 512) == 0.0


def test_dp4a_mmq_is_llamacpp_on_pascal_with_dp4a_only(catalog: Catalog) -> None:
    # GP100 (P100, compute capability 6.0) has no DP4A: llama.cpp keeps cuBLAS there; other engines never run MMQ;
    # 16-bit GGUF weights are not quantized matmuls
    q4 = weight_format("gguf-q4_0")
    assert not compute_peak(catalog.gpu("P100"), q4, engine("llamacpp"))[1].startswith("int8")
    assert not compute_peak(catalog.gpu("P40"), weight_format("fp16"), engine("llamacpp"))[1].startswith("int8")
    assert not compute_peak(catalog.gpu("RTX4090"), q4, engine("llamacpp"))[1].startswith("int8")
