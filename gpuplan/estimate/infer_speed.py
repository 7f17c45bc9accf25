"""Inference speed: time to first token (prefill), time per output token (decode) and throughput.

A roofline per step (Williams et al. 2009; applied to LLM decoding in e.g. Pope et al. 2022, "Efficiently
Scaling Transformer Inference", sec. 2):
- prefill of T tokens is compute-bound: FLOPs(T) / (TP × peak × η_compute);
- a decode step of B sequences reads the weights once and each sequence's KV cache:
  max(bytes / (bandwidth × η_memory), FLOPs / (peak × η_compute)) — for a MoE once for the dense GEMMs and once
  for the grouped expert GEMMs, summed (separate kernels, each bound on its own);
- tensor parallelism adds two all-reduces of the hidden states per layer (latency α + bytes / link);
- each step pays an engine overhead per layer (kernel launches, Python; small with CUDA graphs), in proportion
  to the kernels the layer launches (:func:`layer_launches`: MoE routing, MLA and shared experts add some);
- an engine that replays CUDA graphs only for some decode batches (:func:`graph_batches`: TensorRT-LLM's PyTorch
  backend under trtllm-serve, 1–32, 64 and 128 sequences; vLLM V1 and SGLang, every batch up to their largest
  captured one, 512 or less by release, GPU and TP) launches every other step op by op from Python, a host
  time per layer (:func:`_eager_layer_overhead`); its overlap scheduler prepares step n + 1 while the GPU runs
  step n (tensorrt_llm/_torch/pyexecutor/py_executor.py ``_executor_loop_overlap``), so such a step lasts
  max(GPU time, host time): a fast GPU waits on the host, a slow one hides it; a server started with CUDA graphs
  off (SGLang ``--disable-cuda-graph``, vLLM ``--enforce-eager``) runs every decode step so, SGLang's overlap
  scheduler likewise preparing the next batch while the GPU runs (``event_loop_overlap``, the default since v0.4);
- TensorRT-LLM's PyTorch backend also prepares every step's inputs in Python, a host time per running sequence
  (:func:`host_step_seconds`, fitted as ``host_seq_s_trtllm_pytorch``) that its overlap scheduler hides behind
  the GPU's step until the batch is large and the model's step short: such a step lasts the host time; SGLang's
  overlap scheduler likewise (``host_seq_s_sglang``), and vLLM from 0.14 (async scheduling); an earlier vLLM
  schedules and prepares each step after the last one's tokens are back, so its host time per sequence
  (``host_seq_s_vllm_v0`` before 0.8, ``host_seq_s_vllm`` for V1) adds to the step (engines.host_overlaps_step);
- with LoRA adapters (multi-LoRA serving), every token adds its adapter's FLOPs and a decode step reads each
  distinct adapter of the batch once (batched gather kernels: Punica, Chen et al. 2023; S-LoRA, Sheng et al. 2023).
η_memory, η_compute and the step overhead are fitted per engine by ``bench/fit.py`` on published
measurements (docs/accuracy.md). Offline throughput runs as many sequences as the KV cache and the
engine's sequence cap allow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan import types
from gpuplan.errors import InfeasibleError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import (
    Engine,
    efficiency_key,
    efficiency_keys,
    graph_batches,
    host_overlaps_step,
    host_sequence_key,
    metal_tensor_attention,
    metal_tensor_gemm,
    prefills_mla_in_latent,
    prompt_steps_eager,
    sequence_cap,
    step_overhead_keys,
    token_budget,
    triton_block_fp8_moe_cap,
)
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.flops import (
    attention_flops_per_token,
    fp8_excluded_params,
    latent_attention_flops_per_token,
    matmul_params,
)
from gpuplan.estimate.links import Collective, links, uncalibrated_note
from gpuplan.estimate.mamf import REFERENCE_GPU, mamf_shares, matmul_share
from gpuplan.estimate.memory import (
    BYTES_16,
    GGUF_MIX,
    gguf_expert_bytes,
    gguf_weights_bytes,
    inference_memory,
    input_embedding_bytes,
    kv_bytes_per_token,
    kv_layout,
    kv_read_bytes,
    linear_state_bytes,
    lora_params,
    memory_reads,
    rank_sequences,
    served_adapter_bytes,
    weights_bytes,
)
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import WeightFormat, weight_format
from gpuplan.estimate.result import Assumption, Band, Breakdown, Estimate, SpeedFigures
from gpuplan.memo import IdentityMemo
from gpuplan.types import Gpu, InferSetup, ModelSpec
from gpuplan.units import GB, TERA, MiB


@dataclass(frozen=True, slots=True)
class Speed:
    """Speed of one configuration at one concurrency."""

    ttft_s: float
    tpot_s: float
    batch: int
    output_tokens_per_s: float  # all sequences together
    requests_per_s: float
    bound: str  # memory | compute
    band: Band | None = None  # of TTFT and TPOT (inference_latency, true/estimated)

    def with_ttft(self, ttft_s: float) -> Speed:
        """``dataclasses.replace(self, ttft_s=ttft_s)``, made directly: a serving estimate makes one per concurrency
        it tries."""
        return Speed(ttft_s, self.tpot_s, self.batch, self.output_tokens_per_s, self.requests_per_s, self.bound,
                     self.band)


# Block-scaled NVFP4 GEMMs on datacenter Blackwell (SM100: B200, GB200) reach a smaller share of their dense FP4
# peak than FP8 GEMMs reach of theirs on the same part, while the engines' compute efficiencies are fitted on FP8 and
# 16-bit rows. vLLM's CUTLASS kernels on SM100 at M = 16,384, N = 6,144, K = 4,096 (Llama-3.1-8B's fused QKV), GEMM
# alone ("noquant": activations quantized beforehand): FP8 2,545 TFLOP/s of the B200's 4,500 (0.566;
# vllm-project/vllm PR #19566, benchmarks/kernels/bench_fp8_gemm.py on B200, fp8-tensor-w-tensor-a-noquant), NVFP4
# 3,904 of 9,000 (0.434; PR #20646, bench_nvfp4_gemm.py, nvfp4-noquant; the part is SM100: its BF16 column reads
# 1,360 TFLOP/s and vLLM's NVFP4 CUTLASS GEMM was SM100-only then). 0.434 / 0.566 = 0.77. At M = 1,024 the gap is
# wider (NVFP4 2,895, FP8 2,585: 0.56), so the large-M figure is the smaller correction. Consumer and workstation
# Blackwell (SM120, mma.sync with block scales) is not covered: CUTLASS's SM120 NVFP4 example reaches ~1,629 of an
# RTX PRO 6000's 2,015 (NVIDIA/cutlass PR #3272), a share FP8's fit already holds; Blackwell Ultra (B300, GB300,
# FP4 at 3x FP8) has no measurement here.
SM100_FP4_GEMM_SHARE = 0.434 / 0.566


def fp4_gemm_share(gpu: Gpu) -> float:
    """Share of FP8's achieved fraction of peak that the part's block-scaled FP4 GEMMs reach
    (:data:`SM100_FP4_GEMM_SHARE` on datacenter Blackwell, else 1)."""
    return SM100_FP4_GEMM_SHARE if gpu.segment == "datacenter" and gpu.architecture == "Blackwell" else 1.0


# llama.cpp's CUDA backend multiplies GGUF-quantized weights by a batch of tokens in its own MMQ kernels, not with
# cuBLAS on a 16-bit copy, where ggml_cuda_should_use_mmq says so (ggml-org/llama.cpp ggml/src/ggml-cuda/mmq.cu):
# on parts with DP4A (compute capability 6.1 and up, GGML_CUDA_CC_DP4A) but no FP16 tensor cores, every batch size
# takes MMQ, which quantizes the activations to 8 bits and multiplies them with the weights four at a time in
# __dp4a, at the part's INT8 rate. Those parts are the Pascal chips other than GP100 (6.0, which lacks DP4A and
# keeps cuBLAS): the GTX 10 series, P40, P4. Turing and later run MMQ on int8 tensor cores from mid-2024 (PR #7676)
# at rates the fitted η_compute of their cuBLAS-era rows does not describe, so they keep the 16-bit path here.
_DP4A_ONLY_ARCHITECTURE, _NO_DP4A_CHIPS = "Pascal", frozenset({"GP100"})


def dp4a_mmq(gpu: Gpu, fmt: WeightFormat, eng: Engine) -> bool:
    """Whether the engine runs the format's batched matmuls on ``gpu`` as llama.cpp's DP4A MMQ kernels: GGUF
    quantized weights on an NVIDIA Pascal part with DP4A and an INT8 rate in the catalog."""
    return (eng.engine == types.Engine.LLAMACPP and gpu.vendor == "NVIDIA"
            and gpu.architecture == _DP4A_ONLY_ARCHITECTURE and gpu.chip not in _NO_DP4A_CHIPS
            and fmt.name.startswith("gguf-") and fmt.bits_per_weight < 16
            and bool(gpu.int8_ops_per_s))


def compute_peak(gpu: Gpu, fmt: WeightFormat, eng: Engine | None = None, matrix_units: bool = False
                 ) -> tuple[float, str]:
    """Tensor rate for the format's matmuls: the datasheet peak times :func:`~gpuplan.estimate.mamf.matmul_share`,
    an FP4 one also times :func:`fp4_gemm_share`; falls
    back to 16-bit where the part lacks the path. An engine
    whose 16-bit GEMMs accumulate in FP16 (llama.cpp) gets that rate, twice the FP32-accumulate one on GeForce
    parts (:attr:`Gpu.fp16_acc16_flops_per_s`). ``matrix_units``: the kernels reach the part's matrix units that
    only some engines use (the Apple M5's, :func:`metal_tensor_gemm`), where it has them."""
    rate, dtype = _datasheet_peak(gpu, fmt, eng, matrix_units)
    return rate * matmul_share(gpu), dtype  # a part whose best matmul reaches less of its datasheet (mamf.py)


def _datasheet_peak(gpu: Gpu, fmt: WeightFormat, eng: Engine | None, matrix_units: bool) -> tuple[float, str]:
    if eng is not None and dp4a_mmq(gpu, fmt, eng):
        return gpu.int8_ops_per_s or 0.0, "int8 (DP4A, llama.cpp MMQ)"
    rate = gpu.peak_flops_per_s(fmt.compute) if fmt.compute in ("fp8", "int8", "fp4") else None
    if rate:
        return rate * (fp4_gemm_share(gpu) if fmt.compute == "fp4" else 1.0), fmt.compute
    if matrix_units and gpu.matrix_fp16_flops_per_s:
        return max(gpu.matrix_fp16_flops_per_s, gpu.half_flops_per_s), "fp16 (matrix units)"
    if eng is not None and eng.half_accumulate and gpu.fp16_flops_per_s:
        return gpu.fp16_acc16_flops_per_s, "fp16 (fp16 accumulate)"
    return gpu.half_flops_per_s, "bf16" if gpu.supports_bf16 else "fp16"


def attention_peak(gpu: Gpu, s: InferSetup, eng: Engine | None = None) -> tuple[float, str]:
    """Tensor peak of the prefill attention (QK^T and AV): its inputs are the KV cache's dtype, not the weights',
    so FP8 weights with a 16-bit cache (vLLM's and SGLang's ``--kv-cache-dtype auto``) run attention at the
    16-bit rate; only an FP8 cache feeds FP8 attention kernels (FlashAttention-3, Shah et al. 2024, sec. 3.3:
    FP8 attention on Hopper at about twice its BF16 rate; TensorRT-LLM's FP8 context FMHA)."""
    return compute_peak(gpu, weight_format("fp8" if s.kv_dtype == "fp8" else "bf16"), eng, metal_tensor_attention(s))


def _eff(cal: Calibration, eng: Engine, name: str, gpu: Gpu | None = None) -> float:
    """A fitted efficiency of the engine (on ``gpu``'s backend: llama.cpp's Metal kernels and vLLM's Ascend plugin
    are fitted apart); a backend without fitted values of its own takes its prior's (``EFFICIENCY_PRIORS``)."""
    keys = efficiency_keys(name, eng.engine, gpu)
    return cal.get(next((k for k in keys if k in cal.values), keys[0]))


def _layer_overhead(cal: Calibration, eng: Engine, s: InferSetup, gpu: Gpu | None = None) -> float:
    """The engine's fitted per-layer step overhead for the release the setup runs (:func:`step_overhead_keys`)."""
    own = efficiency_keys("layer_overhead_s", eng.engine, gpu)
    return cal.get(next((k for k in step_overhead_keys(s, own) if k in cal.values), own[0]))


def _eager_layer_overhead(cal: Calibration, eng: Engine, gpu: Gpu | None = None) -> float:
    """Host seconds per layer (in dense-layer equivalents of kernels, :func:`layer_launches`) of a step the engine
    launches op by op from Python instead of replaying a CUDA graph (:func:`graph_batches`):
    ``layer_overhead_s_<engine>_eager``, fitted on the rows that ran such steps (TensorRT-LLM under trtllm-serve;
    a server started with CUDA graphs off, such as SGLang with ``--disable-cuda-graph``).
    Until a fit holds it, transformers' fitted per-layer overhead stands in: its generate() is the same kind of
    step, eager PyTorch modules launching one kernel per op from Python."""
    keys = (f"{efficiency_key('layer_overhead_s', eng.engine, gpu)}_eager", "layer_overhead_s_hf")
    return cal.get(next((k for k in keys if k in cal.values), keys[0]))


def host_seconds_per_sequence(cal: Calibration, s: InferSetup) -> float:
    """The engine's fitted host seconds per running sequence of a decode step (:func:`host_sequence_key`); 0 for an
    engine without such a parameter or a fit that holds none."""
    key = host_sequence_key(s)
    return cal.values.get(key, 0.0) if key else 0.0


def host_step_seconds(s: InferSetup, batch: float, per_sequence: float) -> float:
    """Host seconds a decode step of ``batch`` sequences spends preparing its inputs: ``per_sequence`` for each
    sequence the busiest rank schedules. Under attention data parallelism (``s.attention_dp``) every rank runs its
    own executor loop on its share of the sequences, balanced over the ranks (TensorRT-LLM's PyExecutor
    ``_balance_adp_requests``, tensorrt_llm/_torch/pyexecutor/py_executor.py; SGLang's ``--enable-dp-attention``
    starts one scheduler per rank, python/sglang/srt/managers/data_parallel_controller.py); otherwise every rank
    prepares the whole batch. TensorRT-LLM's overlap scheduler (on by default, ``disable_overlap_scheduler`` False)
    prepares step n + 1 while the GPU runs step n, so a step takes the longer of the two (SGLang's and vLLM's from
    0.14 likewise; an earlier vLLM adds it: engines.host_overlaps_step): a small-active model at a large batch
    on a fast GPU waits on its host (TensorRT-LLM perf overview v1.0: Qwen3-30B-A3B NVFP4 at 128/128 tokens, 39,827
    output tokens/s on a DGX B200 and 24,107 on a GB200, whose Grace host is slower, 25 and 41 µs per sequence and
    step, where the GPU's own step takes about 5)."""
    return math.ceil(batch / s.tp) * per_sequence if s.attention_dp else batch * per_sequence


# Bytes of weights one SM loads per clock cycle in an engine whose batch-1 mat-vec kernels cap the rate per SM below
# what the DRAM delivers. llama.cpp's CUDA MMVQ kernel (ggml-cuda/mmvq.cu @915be46f ``mul_mat_vec_q_cuda``) gives
# each weight row one block of 4 warps (``nwarps = 4, rows_per_cuda_block = 1`` for one token,
# ``__launch_bounds__(128, 1)``), each thread reading a few 4-byte words per loop step (``vdr``), so the bytes in
# flight per SM, not the HBM, set the rate on parts whose bandwidth per SM is high. Seen in XiongjieDai
# GPU-Benchmarks-on-LLM-Inference (llama-bench build 2824): the A100 (SXM and PCIe) and H100-PCIe batch-1 rows,
# which reach 0.34-0.67 of their datasheet bandwidth where GDDR parts reach 0.7-0.9, sit at a median 7.1 bytes per
# SM cycle over their 30 rows (5.2-10.2; weight bytes / (time - KV read - per-layer overhead) / (SMs x boost clock)).
# The rate is fitted (bench/fit.py, ``sm_load_bytes_llamacpp`` with llama.cpp's other efficiencies on its CUDA
# batch-1 rows); a calibration without the key caps nothing.


def sm_load_bytes_per_cycle(cal: Calibration, eng: Engine, gpu: Gpu) -> float | None:
    """Weight bytes per SM per cycle the engine's batch-1 mat-vec kernels load on ``gpu``'s backend, fitted as
    ``sm_load_bytes_<backend>``: None where the calibration holds no such key — the engine's kernels have no such
    cap (Metal; vLLM's and the other engines' GEMV kernels keep enough loads in flight to reach 70-90 % of HBM
    bandwidth) or no row identified it."""
    return cal.values.get(efficiency_key("sm_load_bytes", eng.engine, gpu))


def weight_bandwidth(gpu: Gpu, eng: Engine, cal: Calibration) -> float:
    """Bytes/s a decode step streams the weights at: the datasheet bandwidth times the engine's fitted η_memory,
    but never more than the SMs can load, SMs × boost clock × :func:`sm_load_bytes_per_cycle`, where the engine's
    kernels cap the load rate per SM and the catalog knows the part's SMs and clock (else no cap)."""
    stream = _bandwidth(gpu) * _eff(cal, eng, "eta_memory", gpu)
    per_cycle, cycles = sm_load_bytes_per_cycle(cal, eng, gpu), gpu.sm_cycles_per_s
    return min(stream, per_cycle * cycles) if per_cycle and cycles else stream


# FP32 FLOP-equivalents of ALU work per K-quant weight in an engine whose batch-1 mat-vec kernels dequantize each
# weight with scalar ALU instructions. llama.cpp's Metal kernels (ggml-metal.metal @000a1174 ``kernel_mul_mv_q4_K_
# f32_impl``, ``_q5_K_``, ``_q6_K_``) turn every 4-6-bit weight into a float one at a time: a mask (plus, for Q5_K and
# Q6_K, shifts, ORs and a select for the high bits), an integer-to-float conversion and an FMA with the activation,
# then per 32 weights unpack the 6-bit sub-block scale and min and convert them too. On Apple 7/8 GPUs a conversion
# issues at a quarter of the FFMA32 rate (philipturner/metal-benchmarks README @dc2adc64, "Instruction Throughputs":
# CONVERT(I->F) 4 cycles, BITWISE32 1, FFMA32 1; LSHIFT32 4), so the Q4_K inner loop alone costs about 6 FFMA
# cycles per weight and Q4_K_M's mix (Q5_K/Q6_K tensors) 9-10, some 19 FLOP-equivalents at the FP32 rate (an FMA
# counts 2): on chips with little FP32 rate per byte of bandwidth (M1/M2 Max: 26 FLOP per byte) the ALUs, not the
# memory, set the pace. Seen in XiongjieDai GPU-Benchmarks-on-LLM-Inference (llama-bench build 2797, tg512): an M1
# Max decodes Llama-3-8B F16 at 18.75 tok/s, 75 % of its 400 GB/s, but Q4_K_M at 35.73 tok/s, 44 %. The legacy
# formats' kernel (``block_q_n_dot_y``: one scale per 32 weights, no sub-block unpacking) and Q8_0's stay
# memory-bound in the calibration rows, and CUDA's MMVQ kernels multiply packed 4-bit weights with 8-bit
# activations 4 at a time in integer units (ggml-cuda/vecdotq.cuh @cf1d533a ``vec_dot_q4_K_q8_1_impl_vmmq``,
# ``ggml_cuda_dp4a``), so neither has the floor.
# The figure is fitted (bench/fit.py, ``matvec_flops_per_weight_llamacpp_metal``, on llama.cpp's Apple batch-1
# rows, with the backend's other efficiencies; a calibration without the key has no floor): it also absorbs the
# kernels' ALU utilisation, which a mat-vec's short dependency chains keep well below 1.
KQUANT_FORMATS = frozenset(name for name in GGUF_MIX if "_k" in name)


def matvec_seconds_per_weight(cal: Calibration, eng: Engine, fmt: WeightFormat, gpu: Gpu) -> float:
    """Seconds the engine's batch-1 mat-vec kernels spend dequantizing one weight on ``gpu``'s ALUs:
    ``matvec_flops_per_weight_<backend>`` FLOP-equivalents at the part's FP32 rate, for K-quant GGUF weights; 0
    where the calibration holds no such key, the format has no such kernel or the catalog lacks the FP32 rate."""
    per_weight = cal.values.get(efficiency_key("matvec_flops_per_weight", eng.engine, gpu))
    if not per_weight or fmt.name not in KQUANT_FORMATS or not gpu.fp32_flops_per_s:
        return 0.0
    return per_weight / gpu.fp32_flops_per_s


def gemm_flops_per_token(m: ModelSpec, eng: Engine, cal: Calibration) -> float:
    """Matmul FLOPs one token costs, with the routed experts' share weighted by 1/f_moe: a MoE layer runs many
    small grouped GEMMs (each expert sees only the tokens routed to it) at a lower share of the peak than one
    dense GEMM (Gale et al. 2023, MegaBlocks, sec. 3). Dense models: 2 × matmul parameters."""
    dense, experts = gemm_flops_split(m, eng, cal)
    return dense + experts


def gemm_flops_split(m: ModelSpec, eng: Engine, cal: Calibration, gpu: Gpu | None = None) -> tuple[float, float]:
    """(dense, routed-expert) matmul FLOPs per token of :func:`gemm_flops_per_token`, the experts' already
    weighted by 1/f_moe: the two run as different kernels, each on its own side of the roofline. On ``gpu``'s
    backend: vllm-ascend's grouped-matmul operators are not vLLM's fused-MoE Triton kernels (a Metal backend,
    fitted without an f_moe of its own, takes its engine's)."""
    dense, experts = _gemm_flops(m)
    return dense, experts / _eff(cal, eng, "f_moe", gpu)


def _gemm_flops(m: ModelSpec) -> tuple[float, float]:
    """(dense, routed-expert) matmul FLOPs per token, the experts' before 1/f_moe: they do not read the GPU or the
    calibration."""
    experts = 2.0 * count_params(m).active_experts if m.is_moe else 0.0
    return 2 * matmul_params(m) - experts, experts


# Kernels one decoder layer launches per forward pass, counted in vLLM's model code (vllm/model_executor/models/
# llama.py, deepseek_v2.py, layers/fused_moe/fused_moe.py ``grouped_topk`` and ``fused_experts``, @v0.7.3). Each is
# a node of the captured CUDA graph with its own launch gap and ramp, so the fitted per-layer overhead of a dense
# layer scales with a layer's count (Sec. "Serving" in docs/estimators.md).
DENSE_LAYER_KERNELS = 12  # 2 norms, QKV, rotary, KV-cache write, attention, output, all-reduce, gate-up, act, down, AR
MLA_KERNELS = 7  # MLA: q_a, q_a norm, q_b, kv_a, kv_a norm, rotary, W_UK bmm, cache write, 2-stage decode attention,
#                 W_UV bmm, output: 12 in place of GQA's 5 (2 fewer without a q low-rank projection)
MOE_KERNELS = 4  # router GEMM, top-k, moe_align_block_size, combine sum around the two grouped GEMMs and act
GROUPED_TOPK_KERNELS = 13  # grouped_topk in PyTorch ops (scores, correction-bias add, group scores, group top-k,
#                            mask scatter/expand/masked_fill, top-k, gather, renormalize): about 14 kernels where
#                            fused_topk's topk_softmax is 1
SHARED_EXPERT_KERNELS = 4  # the shared expert's gate-up, act and down, and the add to the routed output
# architectures whose router picks expert groups first (``use_grouped_topk=True`` in vLLM's deepseek_v2.py, which
# serves DeepSeek-V2/V3/R1 and Kimi-K2, and glm4_moe.py)
GROUPED_ROUTING = frozenset({"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm4_moe"})


def layer_launches(m: ModelSpec) -> float:
    """The model's layers in dense-layer equivalents of launched kernels (:data:`DENSE_LAYER_KERNELS` each): the
    engine's fitted per-layer overhead times this is the step's launch overhead. A dense GQA model gives its layer
    count; a DeepSeek-V3 layer (MLA, grouped routing, a shared expert) launches about three times a dense one."""
    per_layer = DENSE_LAYER_KERNELS
    if m.is_mla:
        per_layer += MLA_KERNELS - (0 if m.q_lora_rank else 2)
    moe = 0
    if m.is_moe:
        moe = MOE_KERNELS + (GROUPED_TOPK_KERNELS if m.model_type in GROUPED_ROUTING else 0) + (
            SHARED_EXPERT_KERNELS if m.n_shared_experts or m.shared_ffn_hidden else 0)
    return (m.n_layers * per_layer + m.n_moe_layers * moe) / DENSE_LAYER_KERNELS


def lora_flops_per_token(m: ModelSpec, s: InferSetup) -> float:
    """FLOPs the token's LoRA adapter adds: x·A then (x·A)·B on every adapted linear, 2·r·(in + out) each."""
    if s.lora_adapters <= 0:
        return 0.0
    return 2.0 * lora_params(m, s.lora_rank, "all-linear")


def lora_step_bytes(m: ModelSpec, s: InferSetup, batch: float) -> float:
    """Adapter bytes one decode step reads on the busiest GPU: each distinct adapter of the batch once, as the
    batched kernels gather them (Punica's SGMV, Chen et al. 2023; S-LoRA's MBGMV, Sheng et al. 2023). With
    requests spread evenly over N resident adapters, ``batch`` sequences use N·(1 − (1 − 1/N)^batch) distinct
    ones on average."""
    n = s.lora_adapters
    if n <= 0:
        return 0.0
    distinct = n * (1.0 - (1.0 - 1.0 / n) ** max(batch, 1.0))
    return distinct * served_adapter_bytes(m, 1, s.lora_rank, s.tp, 1)


# Engines whose prefill runs the LM head on every prompt position: none verified. MindIE's source is not checked
# here, so its prefill keeps counting the head for every prompt token, as before.
_ALL_POSITION_LOGITS = frozenset({types.Engine.MINDIE})


def prefill_logit_rows(s: InferSetup, tokens: float) -> float:
    """Positions of a prefill pass of ``tokens`` prompt tokens that go through the LM head: one per sequence in the
    pass, as the engines gather the last scheduled position of each request before ``compute_logits`` (vLLM
    ``gpu_model_runner.py`` ``_prepare_inputs``: ``logits_indices = query_start_loc[1:] - 1``, also for a partial
    prompt's chunk, @000fc94b754f66aeb60ef5acf1ea2e94cdc65164; SGLang ``layers/logits_processor.py`` extend without
    input logprobs, @009db01a7c0d5460611d543516401eb497641918; TensorRT-LLM ``_torch/modules/logits_processor.py``
    without ``return_context_logits``, @89fd9b74ab7ae753b4c6b3db25a400dca7ea54a0; llama.cpp ``llama-batch.cpp``: a
    batch without logits flags outputs its last token only, @21e9bbe200715706b8788579f2248b4c0a9a84ab; mlx-lm
    ``generate_step`` evaluates only the KV cache of the prompt chunks and the last token's logits,
    @861bbd052dbafe6ea6fb14d781f6be79266a826b). Every position where ``s.full_logits`` (transformers' generate
    before 4.45, huggingface/transformers PR #31292 ``num_logits_to_keep``)."""
    if s.full_logits or s.engine in _ALL_POSITION_LOGITS:
        return tokens
    return min(tokens, max(1.0, tokens / max(s.prompt_len, 1)))


def prompt_attention_flops_per_token(m: ModelSpec, s: InferSetup) -> float:
    """Attention FLOPs per prompt token of ``s.prompt_len``-token prompts (each attends to half its length on
    average), in the form the engine computes them: against the cached latent where it prefills an MLA model that way
    (:func:`gpuplan.estimate.engines.prefills_mla_in_latent`), else with per-head keys and values."""
    context = (s.prompt_len + 1) / 2
    if prefills_mla_in_latent(m, s):
        return latent_attention_flops_per_token(m, context)
    return attention_flops_per_token(m, context)


def _skipped_head_flops(m: ModelSpec, s: InferSetup, tokens: float) -> float:
    """The LM head's FLOPs (2 × vocabulary × hidden per position, in :func:`matmul_params`) that a prefill pass of
    ``tokens`` prompt tokens does not spend: those of the positions :func:`prefill_logit_rows` leaves out."""
    return (tokens - prefill_logit_rows(s, tokens)) * 2.0 * m.vocab * m.hidden


def prefill_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, tokens: float, cal: Calibration) -> float:
    """Seconds to prefill ``tokens`` prompt tokens (sequences of ``s.prompt_len``).

    The matmuls run at the weight format's rate, the attention at its KV cache dtype's (:func:`attention_peak`).
    The engine runs them in forward passes of at most its ``max_batched_tokens`` (chunked prefill; llama.cpp's
    physical batch). Each pass is a roofline like a decode step: its FLOPs at the compute rate, but never faster
    than streaming the weights its tokens reach once (for MoE the experts they route to,
    :func:`decode_weight_bytes`), and it pays the engine's per-layer cost of launching the pass's kernels. A short
    prompt on a large MoE is thus bound by reading nearly every expert, not by its few FLOPs. The LM head runs on
    the positions the engine samples from (:func:`prefill_logit_rows`), not on every prompt token. Where the
    attention-DP ranks prefill one after another (:func:`prompts_rank_by_rank`), a pass carries one rank's prompts,
    up to one rank's budget, and the prompt phase lasts as many passes as all the ranks' prompts need."""
    t = _step_terms(m, gpu, s, cal)
    alone = prompts_rank_by_rank(s)
    # rank by rank, a pass carries one rank's share of the budget (the whole model's: one per rank)
    budget = t.max_batched_tokens / s.tp if alone and t.max_batched_tokens else t.max_batched_tokens
    passes = max(1, math.ceil(tokens / budget)) if budget else 1
    per_pass = tokens / passes
    attention = per_pass * t.attention_flops / t.attention_peak
    gemm = per_pass * t.gemm_flops - _skipped_head_flops(m, s, per_pass)
    dense = gemm / t.prefill_rate + attention / t.attention_rate
    if s.attention_dp and s.tp > 1:  # the busiest rank runs its own prompts' attention, projections whole, alone
        own = per_pass if alone else rank_prompt_tokens(s, per_pass)
        projections = 2.0 * count_params(m).attention
        dense += own * (projections * s.tp - projections * per_pass / own) / t.prefill_rate
        dense += (own * s.tp - per_pass) * t.attention_flops / t.attention_peak / t.attention_rate
    experts = per_pass * t.expert_flops / t.prefill_rate
    expert_bytes = _touched_expert_bytes(m, per_pass, t.weights[1]) if m.is_moe else 0.0
    stream = _streamed_bytes(m, t.fmt, s, per_pass, t.weights) - expert_bytes
    comm = _allreduce_seconds(m, gpu, s, per_pass, cal) + _stage_handoff_seconds(m, gpu, s, per_pass, cal)
    gemms = max(dense, stream / t.bandwidth) + max(experts, expert_bytes / t.bandwidth)
    dequant = t.dequant and _streamed_bytes(m, t.fmt, s, per_pass, t.weights) * t.dequant / _bandwidth(gpu)
    # where the engine launches a pass that carries prompt tokens op by op (prompt_steps_eager), its overlap
    # scheduler prepares it while the GPU runs the previous one, so the pass lasts the longer of the two
    one = max(gemms + dequant + t.overhead + comm, t.eager if t.prompt_eager else 0.0)
    if passes > 1 and tokens > s.prompt_len and pipeline_batches(s, float(passes)) > 1:
        # passes of different prompts overlap across the stages: after the first, one ends each time the busiest
        # stage is done with it (the chunks of a single prompt wait for each other: the engines schedule a request
        # once per step)
        return one * (1 + (passes - 1) * last_stage_share(m, s))
    return passes * one


def prompts_rank_by_rank(s: InferSetup) -> bool:
    """Whether the setup's prefill passes each carry one attention-DP rank's prompts while the other ranks wait
    (``Engine.prompts_rank_by_rank_with_attention_dp``): then the prompt work is not spread over the ranks in time,
    and a pass's attention and attention projections run on one GPU whatever the number of ranks. Not where the
    engine balances the ranks' contexts (``InferSetup.attention_dp_balance``: TensorRT-LLM's
    ``attention_dp_config.enable_balance`` waits until every rank holds a context and schedules them in one
    iteration, NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md @9320afe9870c)."""
    return s.attention_dp and s.tp > 1 and not s.attention_dp_balance \
        and types.Engine(s.engine).prompts_rank_by_rank_with_attention_dp


def rank_prompt_tokens(s: InferSetup, tokens: float) -> float:
    """Prompt tokens of a prefill pass of ``tokens`` that the busiest rank attends to under attention data
    parallelism: each rank prefills the prompts it was given, whole (a chunk of one prompt stays on its rank), so
    with prompts of ``s.prompt_len`` the busiest holds ⌈prompts / tp⌉ of them (SGLang's DP controller hands each
    request to one data-parallel worker, sgl-project/sglang managers/data_parallel_controller.py; TensorRT-LLM
    balances requests over the attention-DP ranks, _balance_adp_requests)."""
    prompts = tokens / max(s.prompt_len, 1)
    if prompts <= 1.0:
        return tokens
    return min(tokens, math.ceil(prompts / s.tp) * s.prompt_len)


def dequant_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, tokens: float) -> float:
    """Seconds a prefill pass spends converting quantized weights to the 16-bit copy its GEMMs read, in engines
    that do so (``prefill_dequant_fp16``: llama.cpp's CUDA/HIP ``ggml_cuda_op_mul_mat_cublas``): a memory-bound
    kernel that reads the quantized weights the pass reaches and writes them at 2 bytes per weight, before the
    GEMM starts, taken at the datasheet bandwidth (an elementwise stream; no fitted efficiency, so the decode rows
    that fit η_memory stay apart from it). None for 16-bit weights, nor on Apple parts (Metal dequantizes tiles
    on chip)."""
    fmt = weight_format(s.weight_format)
    factor = _dequant_factor(get_engine(s.engine), fmt, gpu)
    return factor and decode_weight_bytes(m, fmt, s, tokens) * factor / _bandwidth(gpu)


def _dequant_factor(eng: Engine, fmt: WeightFormat, gpu: Gpu) -> float:
    """Bytes a prefill's dequantization moves per quantized weight byte it reads (it writes each weight at 2 bytes):
    0 where :func:`dequant_seconds` counts none."""
    if not eng.prefill_dequant_fp16 or fmt.bits_per_weight >= 16 or gpu.vendor == "Apple":
        return 0.0
    if dp4a_mmq(gpu, fmt, eng):  # MMQ reads the quantized weights as they are
        return 0.0
    return 1 + BYTES_16 / fmt.bytes_per_weight


def expert_fraction_touched(m: ModelSpec, batch: float) -> float:
    """Share of a MoE layer's routed experts that ``batch`` tokens reach, each choosing top-k of E:
    1 − (1 − k/E)^batch, the expected coverage of uniform routing (1 for dense models). A group-limited router
    (``ModelSpec.is_group_limited``) gives the same: each expert keeps chance k/E per token and tokens choose
    independently; only a token's own k are confined to its groups."""
    if not m.is_moe or m.n_experts <= 0:
        return 1.0
    return 1.0 - (1.0 - m.n_active_experts / m.n_experts) ** max(batch, 1.0)


def decode_weight_bytes(m: ModelSpec, fmt: WeightFormat, s: InferSetup, batch: float) -> float:
    """Weight bytes one decode step streams on the busiest GPU: every stage's weights (a token passes through
    all of them), less the routed experts no token of the batch chose and less an untied embedding table, of
    which a step gathers only ``batch`` rows."""
    return _streamed_bytes(m, fmt, s, batch, _weight_terms(m, fmt, s))


@dataclass(frozen=True, slots=True)
class RunWork:
    """What :func:`run_floor_seconds` reads of the model, setup and run, the same on every GPU type."""

    prefill_flops: float  # every prompt token's dense GEMM FLOPs, adapters included, the LM head's where it runs
    expert_flops: float  # every prompt token's routed-expert FLOPs (before 1/f_moe)
    kv_bytes: float  # each sequence's KV cache at the mean context, read by each of its decode steps (0: sparse)
    weight_bytes: float  # the weights one-sequence steps stream, in the fewest waves


def run_work(m: ModelSpec, s: InferSetup, requests: float, most_batch: float) -> RunWork:
    """:class:`RunWork` of ``requests`` sequences of the setup in waves of at most ``most_batch``."""
    fmt = weight_format(s.weight_format)
    dense, experts = _gemm_flops(m)
    tokens = requests * s.prompt_len
    ctx = s.prompt_len + s.output_len / 2  # as speed()
    kv = 0.0
    if not m.is_sparse_attention or ctx <= m.index_topk:  # dense attention reads every cached token
        latent = get_engine(s.engine).mla_latent_cache
        kv = requests * s.output_len * ctx * kv_bytes_per_token(m, s.kv_dtype, s.tp, latent)
    steps = math.ceil(requests / most_batch) * s.output_len
    prefill = tokens * (dense + lora_flops_per_token(m, s)) - _skipped_head_flops(m, s, tokens)
    return RunWork(prefill, tokens * experts, kv,
                   steps * _streamed_bytes(m, fmt, s, 1.0, _weight_terms(m, fmt, s)))


def run_floor_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, work: RunWork, cal: Calibration) -> float:
    """A lower bound on the seconds the run of ``work`` takes on ``gpu`` (whatever the batch, each wave its
    :func:`speed`'s prefill and ``output_len`` decode steps), from a few of the terms :func:`prefill_seconds` and
    :func:`decode_step_seconds` add, without the memory estimate or the step terms the estimate makes; 0 under
    pipeline parallelism.

    A prefill's dense and expert GEMMs take at least its tokens' FLOPs at the prefill rate, so the waves' prefills
    take at least every prompt token's. A decode step's GEMMs take at least the weights a one-sequence step streams
    at the weights' bandwidth (a larger batch reaches at least as many experts), in each of the fewest waves, and
    its attention at least each sequence's KV cache at the mean context read at the KV bandwidth (dense
    attention). The other terms (collectives, launches, dequantization, linear-attention state, the roofline's
    other side) only add."""
    if s.pp > 1:
        return 0.0
    eng = get_engine(s.engine)
    eta_compute, f_moe, kv_bandwidth, weights_bandwidth = _rates(gpu, eng, cal)
    gpu_rate = compute_peak(gpu, weight_format(s.weight_format), eng, metal_tensor_gemm(s))[0] * eta_compute
    prefill_rate = gpu_rate * s.tp
    flops = work.prefill_flops + (work.expert_flops and work.expert_flops / _expert_share(m, gpu, s, f_moe, gpu_rate))
    kv = work.kv_bytes and work.kv_bytes / kv_bandwidth
    return flops / prefill_rate + work.weight_bytes / weights_bandwidth + kv


def _rates(gpu: Gpu, eng: Engine, cal: Calibration) -> tuple[float, float, float, float]:
    """(η_compute, f_moe, the KV cache's bandwidth, the weights' bandwidth :func:`weight_bandwidth`) of the engine
    on ``gpu`` under ``cal``: the fitted efficiencies :func:`_step_terms` and :func:`run_floor_seconds` read, kept
    per GPU, engine and calibration (a plan asks for each on every setup and count of the GPU type)."""
    hit = _engine_rates.get(gpu, eng, cal, ())
    if hit is None:
        hit = _engine_rates.put(gpu, eng, cal, (), (
            _eff(cal, eng, "eta_compute", gpu), _eff(cal, eng, "f_moe", gpu),
            _bandwidth(gpu) * _eff(cal, eng, "eta_kv", gpu), weight_bandwidth(gpu, eng, cal)))
    return hit


_engine_rates: IdentityMemo[tuple[float, float, float, float]] = IdentityMemo()


def _expert_share(m: ModelSpec, gpu: Gpu, s: InferSetup, f_moe: float, gemm_rate: float) -> float:
    """The routed experts' GEMM rate as a share of the dense GEMMs' ``gemm_rate`` (FLOP/s per GPU): the fitted
    ``f_moe``, lowered where the release runs the experts through a kernel of a known lower rate
    (:func:`triton_block_fp8_moe_cap`: the Triton fused-MoE kernel on block-FP8 weights)."""
    cap = triton_block_fp8_moe_cap(m, s, gpu)
    return f_moe if cap is None or gemm_rate <= 0 else min(f_moe, cap / gemm_rate)


def routed_expert_bytes(m: ModelSpec, fmt: WeightFormat, s: InferSetup, batch: float) -> float:
    """The routed experts' part of :func:`decode_weight_bytes`: those the batch reaches, on the busiest GPU."""
    return _touched_expert_bytes(m, batch, _weight_terms(m, fmt, s)[1]) if m.is_moe else 0.0


def _touched_expert_bytes(m: ModelSpec, batch: float, experts: float) -> float:
    """The bytes of the routed experts (``experts``: all of them, :func:`_weight_terms`) that ``batch`` tokens
    reach."""
    return experts * expert_fraction_touched(m, batch)


def _weight_terms(m: ModelSpec, fmt: WeightFormat, s: InferSetup) -> tuple[float, float, float]:
    """(every stage's weight bytes, routed expert bytes, untied embedding bytes, all per GPU) of
    :func:`decode_weight_bytes`: what does not depend on the batch.

    A GGUF file is read tensor by tensor as llama.cpp's quantizer typed it (:func:`gguf_weights_bytes`: the output
    matrix in Q6_K, attn_v and ffn_down of the K-quant mixes' ``use_more_bits`` layers at more bits), not at the
    format's average bits per weight, which is Llama 2 7B's: Qwen3-0.6B's tied table is a quarter of its weights
    and every token reads it as the output head in Q6_K; the experts no token chose are left unread at the bytes
    the file gives them (:func:`gguf_expert_bytes`). Its untied token table is gathered, never streamed."""
    if fmt.name in GGUF_MIX:
        return (gguf_weights_bytes(m, fmt, s.tp, s.pp, input_table=False) * s.pp, gguf_expert_bytes(m, fmt, s.tp),
                0.0)
    whole_dense = types.Engine(s.engine).dense_mlp_with_attention_dp
    total = weights_bytes(m, fmt, s.tp, s.pp, s.attention_dp, whole_dense) * s.pp
    return total, count_params(m).experts * fmt.bytes_per_weight / s.tp, input_embedding_bytes(m, fmt, s.tp)


def _streamed_bytes(m: ModelSpec, fmt: WeightFormat, s: InferSetup, batch: float,
                    terms: tuple[float, float, float]) -> float:
    total, experts, embeddings = terms
    idle_experts = experts * (1.0 - expert_fraction_touched(m, batch))
    return max(0.0, total - idle_experts - embeddings)


@dataclass(frozen=True, slots=True)
class _StepTerms:
    """The terms of :func:`decode_step_seconds` and :func:`prefill_seconds` that depend on the model, GPU, setup
    and calibration alone, not on the batch or the context: the load model and a serving plan's batch search ask
    for dozens of steps and prefills of one configuration."""

    fmt: WeightFormat
    weights: tuple[float, float, float]  # _weight_terms
    bandwidth: float  # for the weights (bytes/s)
    gemm_flops: float  # dense matmul FLOPs per token, adapters included
    expert_flops: float  # routed experts' FLOPs per token, weighted by 1/f_moe
    compute_rate: float  # FLOP/s the GEMMs reach
    kv_per_token: float  # KV-cache bytes per token of a sequence the GPU caches (whole under attention DP)
    kv_bandwidth: float  # for the KV cache (bytes/s)
    overhead: float  # seconds per step of kernel launches and framework code
    # prefill (:func:`prefill_seconds`): the pass size, the GEMMs' rate on all TP ranks, the attention's FLOPs per
    # prompt token, its peak and share of it on all ranks, and :func:`_dequant_factor`
    max_batched_tokens: int | None
    prefill_rate: float
    attention_flops: float
    attention_peak: float
    attention_rate: float
    dequant: float
    state_per_seq: float  # linear-attention state bytes per sequence per GPU, read and written every step
    kv_dense_up_to: float  # contexts up to this read every cached token (beyond: sparse attention's top-k)
    graphs: frozenset[int] | None  # decode batches replayed as CUDA graphs (None: every step; graph_batches)
    eager: float  # host seconds of a step launched op by op (0 where every step replays a graph)
    prompt_eager: bool  # a step carrying prompt tokens pays ``eager`` (prompt_steps_eager)
    host_per_seq: float  # host seconds per running sequence of a step (host_step_seconds)
    matvec_per_weight: float  # seconds the mat-vec kernels' ALUs spend on one weight (matvec_seconds_per_weight)
    matvec_dense: float  # that, for a decode step's dense weights on the busiest GPU
    sixteen_bit_extra: float  # decode FLOPs per token to add for the matmuls left 16-bit (sixteen_bit_extra_flops)


def _step_terms(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration) -> _StepTerms:
    hit = _terms.get(m, gpu, cal, (s,))
    if hit is not None:
        return hit
    eng = get_engine(s.engine)
    fmt, weights, dense_flops, expert_flops, kv_per_token, budget, attention_flops, state, dense_up_to, \
        launches = _setup_step_terms(m, s)
    graphs = graph_batches(s, gpu)
    peak, _ = compute_peak(gpu, fmt, eng, metal_tensor_gemm(s))
    eta_compute, f_moe, kv_bandwidth, weights_bandwidth = _rates(gpu, eng, cal)
    expert_flops = expert_flops / _expert_share(m, gpu, s, f_moe, peak * eta_compute)  # as gemm_flops_split
    per_weight = matvec_seconds_per_weight(cal, eng, fmt, gpu)
    found = _StepTerms(fmt, weights, weights_bandwidth, dense_flops, expert_flops, peak * eta_compute,
                       kv_per_token, kv_bandwidth,
                       launches * _layer_overhead(cal, eng, s, gpu),  # kernel launches, framework code
                       budget, peak * s.tp * eta_compute, attention_flops, attention_peak(gpu, s, eng)[0],
                       s.tp * eta_compute, _dequant_factor(eng, fmt, gpu), state, dense_up_to, graphs,
                       launches * _eager_layer_overhead(cal, eng, gpu)
                       if graphs is not None or prompt_steps_eager(s) else 0.0,
                       prompt_eager=prompt_steps_eager(s),
                       host_per_seq=host_seconds_per_sequence(cal, s),
                       matvec_per_weight=per_weight,
                       matvec_dense=per_weight and _gemm_flops(m)[0] / 2 / s.tp * per_weight,
                       sixteen_bit_extra=sixteen_bit_extra_flops(m, gpu, fmt, eng))
    return _terms.put(m, gpu, cal, (s,), found)


def sixteen_bit_extra_flops(m: ModelSpec, gpu: Gpu, fmt: WeightFormat, eng: Engine | None = None) -> float:
    """FLOPs per decoded token to add to the format's matmul FLOPs so that the LM head and the MoE router, which a
    linear-only low-precision checkpoint keeps 16-bit, run at the 16-bit rate: their FLOPs × (format peak / 16-bit
    peak − 1). 0 where every matmul runs at one rate (16-bit formats, GGUF, a part without the low-precision path).

    NVIDIA's ModelOpt recipes (FP8, INT8 SmoothQuant, NVFP4: the nvidia/*-FP8 and *-FP4 checkpoints TensorRT-LLM's
    perf overview runs) leave ``*lm_head*``, ``*router*`` and ``*mlp.gate.*`` unquantized (NVIDIA/TensorRT-Model-
    Optimizer ``modelopt/torch/quantization/config.py`` @103b1bb137caefcff0724e9b74f99896b700c48c,
    ``_default_disabled_quantizer_cfg``); :func:`weights_bytes` already reads those weights at 16 bits (scope
    ``linear``). On B200 the 16-bit peak is a third of NVFP4's GEMM rate (:func:`compute_peak`), so Qwen3-30B-A3B's
    head and routers (0.32 B of its 3.04 B active matmul weights) add a fifth to its decode GEMM time. Every decoded
    token goes through the head; a prefill needs logits for the last prompt position only, so only decode steps add
    this."""
    if fmt.scope != "linear":
        return 0.0
    peak, dtype = compute_peak(gpu, fmt, eng)
    if dtype != fmt.compute:
        return 0.0
    half = compute_peak(gpu, weight_format("bf16"), eng)[0]
    return 2.0 * fp8_excluded_params(m) * (peak / half - 1.0) if half else 0.0


_SetupStepTerms = tuple[WeightFormat, tuple[float, float, float], float, float, float, int | None, float, float,
                        float, float]


def _setup_step_terms(m: ModelSpec, s: InferSetup) -> _SetupStepTerms:
    """The terms of :class:`_StepTerms` that read neither the GPU nor the calibration (the routed experts' FLOPs
    before 1/f_moe), kept per model and setup: a plan times each setup on every GPU type."""
    hit = _setup_terms.get(m, None, None, (s,))
    if hit is not None:
        return hit
    eng = get_engine(s.engine)
    fmt = weight_format(s.weight_format)
    dense, experts = _gemm_flops(m)
    found = (fmt, _weight_terms(m, fmt, s), dense + lora_flops_per_token(m, s), experts,
             kv_bytes_per_token(m, s.kv_dtype, kv_layout(s)[0], eng.mla_latent_cache), token_budget(m, s),
             prompt_attention_flops_per_token(m, s), linear_state_bytes(m, kv_layout(s)[0]),
             float(m.index_topk) if m.is_sparse_attention else math.inf, layer_launches(m))
    return _setup_terms.put(m, None, None, (s,), found)


_setup_terms: IdentityMemo[_SetupStepTerms] = IdentityMemo()
_terms: IdentityMemo[_StepTerms] = IdentityMemo()


def pipeline_batches(s: InferSetup, batch: float) -> float:
    """Batches in flight at once under pipeline parallelism: one per stage in engines that interleave them
    (``data/engines.csv`` ``pp_microbatches``), never more than there are sequences; 1 without PP."""
    if s.pp <= 1 or not get_engine(s.engine).pp_microbatches:
        return 1.0
    return float(max(1.0, min(float(s.pp), batch)))


def _stage_handoff_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, tokens: float, cal: Calibration) -> float:
    """Sending ``tokens`` hidden states (16-bit) from each pipeline stage to the next: pp − 1 point-to-point
    messages on the path of a pass, each one message latency (the fitted collective latency stands in) plus its
    bytes over the link between the stages (NVLink/PCIe within a node, the network beyond 8 GPUs)."""
    if s.pp <= 1:
        return 0.0
    link = links(gpu, cal, min(s.tp * s.pp, 8))
    bw = link.intra_bus(Collective.SEND_RECV) if s.tp * s.pp <= 8 else link.inter_node
    return (s.pp - 1) * (cal.get("allreduce_latency_s") + tokens * m.hidden * 2.0 / s.tp / bw)


def decode_step_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, context: float,
                        cal: Calibration) -> tuple[float, str]:
    """Seconds between two tokens of a sequence when ``batch`` sequences at mean ``context`` decode, and what
    bounds the GEMMs.

    GEMMs take max(weight bytes read / bandwidth, FLOPs / peak) — for MoE only the experts the batch reaches
    (:func:`decode_weight_bytes`); attention then reads every sequence's KV cache (memory-bound, a separate
    kernel, so its time adds). Under pipeline parallelism a token passes every stage in turn, so a step is one
    pass over all of them (every stage's weights at one GPU's bandwidth). An engine that keeps one batch per
    stage in flight (:func:`pipeline_batches`, the schedule of Narayanan et al. 2021 applied to iterations)
    splits the running sequences over k = min(pp, batch) batches whose passes overlap: each sequence still
    waits one whole pass per token, but a pass carries batch / k sequences, plus the pp − 1 stage hand-offs."""
    groups = pipeline_batches(s, batch)
    step, bound = _pass_seconds(m, gpu, s, batch / groups, context, cal)
    step += _stage_handoff_seconds(m, gpu, s, batch / groups, cal)
    # k batches go through the busiest stage one after another, so a sequence waits at least k of its turns there
    return step * max(1.0, groups * last_stage_share(m, s)) if groups > 1 else step, bound


def last_stage_share(m: ModelSpec, s: InferSetup) -> float:
    """Share of a pass the busiest pipeline stage takes: the last one, with its even share of the layers plus the
    output layer (vocabulary × hidden; vLLM's ``get_pp_indices`` splits the layers evenly and puts the LM head on
    the last rank), by the weights a token uses. 1 without PP."""
    if s.pp <= 1:
        return 1.0
    p = count_params(m)
    layers = p.total - p.embeddings - p.head - p.experts + p.active_experts
    head = m.vocab * m.hidden
    return (layers / s.pp + head) / (layers + head)


def _pass_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, context: float,
                  cal: Calibration) -> tuple[float, str]:
    t = _step_terms(m, gpu, s, cal)
    expert_bytes = _touched_expert_bytes(m, batch, t.weights[1]) if m.is_moe else 0.0
    dense_bytes = _streamed_bytes(m, t.fmt, s, batch, t.weights) - expert_bytes + lora_step_bytes(m, s, batch)
    dense_compute = batch * (t.gemm_flops + t.sixteen_bit_extra) / s.tp / t.compute_rate
    expert_compute = batch * t.expert_flops / s.tp / t.compute_rate
    # a dequantizing mat-vec kernel's ALU work: once per weight the step streams, whatever the batch
    dense_alu = t.matvec_dense
    expert_alu = expert_bytes / t.fmt.bytes_per_weight * t.matvec_per_weight
    gemm_memory = (dense_bytes + expert_bytes) / t.bandwidth
    gemm_compute = max(dense_compute, dense_alu) + max(expert_compute, expert_alu)
    attention = _attention_read_seconds(m, s, t, batch, context)
    comm = _allreduce_seconds(m, gpu, s, batch, cal)
    # dense and expert GEMMs are separate kernels, each bound by its own resource (roofline per kernel)
    gemms = (max(dense_bytes / t.bandwidth, dense_compute, dense_alu)
             + max(expert_bytes / t.bandwidth, expert_compute, expert_alu))
    step = gemms + attention + comm + t.overhead
    per_sequence = host_step_seconds(s, batch, t.host_per_seq)
    serial = 0.0 if host_overlaps_step(s) else per_sequence  # vLLM before 0.14: after the last step (module docstring)
    host = per_sequence - serial
    # under attention data parallelism each rank replays the graph of its own share of the batch (SGLang
    # cuda_graph_runner.py ``can_run``: the largest of the ranks' token counts against the captured sizes)
    graphed = math.ceil(batch / s.tp) if s.attention_dp else round(batch)
    if t.graphs is not None and graphed not in t.graphs:
        host += t.eager  # launched op by op
    step = max(step, host) + serial  # the host prepares step n + 1 while the GPU runs step n (module docstring)
    return step, "memory" if gemm_memory + attention >= gemm_compute else "compute"


def _attention_read_seconds(m: ModelSpec, s: InferSetup, t: _StepTerms, batch: float, context: float) -> float:
    """Seconds the decode attention of ``batch`` sequences at mean ``context`` takes on the busiest GPU, a kernel of
    its own: a roofline of reading their KV cache (and a linear layer's state, read then written; sparse attention
    reads its top-k tokens and every indexer key) and its QK^T and AV FLOPs (:func:`decode_attention_flops`) at the
    attention's rate. A grouped-query head group does 2 × group FLOPs per 16-bit byte it reads, far below any GPU's
    FLOPs per byte, so the read bounds it; an MLA model's heads all share one latent, so under attention data
    parallelism (128 heads a rank for DeepSeek-V3) its absorbed attention does about 480 FLOPs per FP8 byte, above an
    H200's 206: there the FLOPs bound it (DeepSeek's FlashMLA, deepseek-ai/FlashMLA README: "up to 660 TFlops in
    compute-bound configuration" on an H800, "3000 GB/s in memory-bound configuration")."""
    latent = get_engine(s.engine).mla_latent_cache
    per_seq = (context * t.kv_per_token if context <= t.kv_dense_up_to
               else kv_read_bytes(m, context, s.kv_dtype, kv_layout(s)[0], latent))
    per_seq *= latent_passes(m, s) if latent else 1
    sequences = rank_sequences(s, batch)  # the busiest GPU's own sequences
    reads = sequences * (per_seq + 2 * t.state_per_seq) / t.kv_bandwidth
    flops = sequences * decode_attention_flops(m, s, context)
    # one GPU's rate: the peak × η (``attention_rate`` holds tp × η, a prefill pass's share over all the ranks)
    return max(reads, flops / (t.attention_peak * t.attention_rate / s.tp))


def decode_attention_flops(m: ModelSpec, s: InferSetup, context: float) -> float:
    """QK^T and AV FLOPs of one decoding sequence at ``context`` on one GPU: against the cached latent where the
    engine keeps an MLA model's cache latent (:func:`~gpuplan.estimate.flops.latent_attention_flops_per_token`,
    the absorbed form), else per head; the heads split over the tensor-parallel ranks, except under attention data
    parallelism, where a rank attends with all of them for its own sequences."""
    latent = get_engine(s.engine).mla_latent_cache and m.is_mla
    flops = latent_attention_flops_per_token(m, context) if latent else attention_flops_per_token(m, context)
    return flops if s.attention_dp and s.tp > 1 else flops / s.tp


def decode_attention_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, context: float,
                             cal: Calibration) -> float:
    """The attention part of a decode step (:func:`decode_step_seconds`): ``batch`` sequences at mean ``context``
    read their KV cache. What running decodes add to a pass beyond their GEMM rows when they ride in it."""
    return _attention_read_seconds(m, s, _step_terms(m, gpu, s, cal), batch, context)


# Query heads one program of an engine's MLA decode kernel attends with, each program streaming its sequence's
# cached latent for itself: SGLang's Triton decode attention, the backend it runs MLA models with unless told
# otherwise (model_runner.py: "MLA optimization is turned on. Use triton backend."), launches a grid of
# (batch, ⌈heads / min(BLOCK_H, kv_group_num)⌉, kv splits) with BLOCK_H = 16 (sgl-project/sglang
# python/sglang/srt/layers/attention/triton_ops/decode_attention.py ``_decode_grouped_att_m_fwd``, v0.4.x), and MLA
# has one latent "KV head" for all query heads. An engine not listed reads the latent once per step.
MLA_DECODE_HEAD_BLOCK: dict[str, int] = {types.Engine.SGLANG: 16}


def latent_passes(m: ModelSpec, s: InferSetup) -> int:
    """Times a decode step streams each cached MLA latent on one GPU: once per block of query heads the engine's
    kernel attends together (:data:`MLA_DECODE_HEAD_BLOCK`). TP 8 leaves DeepSeek-V3 16 heads a GPU, one pass;
    under attention data parallelism a rank attends with all 128 of its own sequences, eight passes, so the
    bytes its attention reads stay those of tensor parallelism although it caches only an eighth of the
    sequences."""
    block = MLA_DECODE_HEAD_BLOCK.get(s.engine)
    if not m.is_mla or block is None:
        return 1
    return math.ceil(math.ceil(m.n_heads / kv_layout(s)[0]) / block)


def _bandwidth(gpu: Gpu) -> float:
    if not gpu.memory_bandwidth_bytes_per_s:
        raise InfeasibleError("--gpu", f"the memory bandwidth of {gpu.name} is not in the catalog, so its decode "
                              "speed cannot be estimated.", "add memory_bandwidth_gb_s for it in a --catalog folder.")
    return gpu.memory_bandwidth_bytes_per_s


# NCCL's ring all-reduce sends 2(p − 1)/p of the message over each GPU's link, and over NVLink at 0.81 of the link's
# rate (links.NVLINK_BUS_SHARE, with its nccl-tests source): a fixed ~30 µs (the fitted allreduce_latency_s) plus
# the bytes at 366 GB/s on 4× H100 describes every measured size from 16 MiB up within 7 %
# (waynehacking8/nccl-collectives-bench results/all_reduce.csv @f9883f88eb4337d3a2c515089b04a587cf104c83). At 6 GPUs
# and more NCCL may pick NVLink SHARP for large messages (443 GB/s of bus bandwidth there,
# results/scaling_attributed/report.md @ec97f06204de7297d1b682a4c60f0924602c677d), not measured at a decode step's
# megabytes.


def allreduce_seconds(gpu: Gpu, group: int, size_bytes: float, cal: Calibration) -> float:
    """Seconds of one all-reduce of ``size_bytes`` over ``group`` GPUs (one node's link up to 8 GPUs, the network
    beyond): the fitted latency plus a ring's 2(p − 1)/p of the bytes at the link's all-reduce bus bandwidth
    (``links.NVLINK_BUS_SHARE`` of an NVLink's rate)."""
    if group <= 1:
        return 0.0
    link = links(gpu, cal, group)
    bw = link.intra_bus(Collective.ALL_REDUCE) if group <= 8 else link.inter_node
    return cal.get("allreduce_latency_s") + size_bytes * 2 * (group - 1) / group / bw


# Under TensorRT-LLM's attention data parallelism nothing but the routed experts is split (Engine.dense_mlp_with_
# attention_dp), so the attention and a dense layer's MLP need no all-reduce; its fused MoE all-gathers the ranks'
# tokens before the experts and reduce-scatters their output after (CutlassFusedMoE.forward_chunk's allgather under
# use_dp, then reducescatter_or_allreduce in forward_impl: NVIDIA/TensorRT-LLM
# tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py @7b437aaa73bf). A ring all-gather and reduce-scatter
# each send (p − 1)/p of the tensor per GPU, together one all-reduce's bytes; counted at 16 bits although FP8 and
# NVFP4 runs gather their quantized activations, so a bound from above.


@dataclass(frozen=True, slots=True)
class CustomAllreduce:
    """An engine's own all-reduce kernel for small tensor-parallel messages: the latency one call costs in place of
    NCCL's, the largest message it takes (its registered buffer; the engine sends ``max_bytes`` and more to NCCL),
    and the GPU vendors whose builds of the engine run it."""

    latency_s: float
    max_bytes: float
    vendors: frozenset[str]
    pcie_pair: bool = True  # two GPUs without NVLink take the kernel too (vLLM's and SGLang's should_custom_ar)


# SGLang and vLLM all-reduce tensor-parallel activations with their own kernels instead of NCCL where the group is 2,
# 4, 6 or 8 GPUs, two of them or all joined by NVLink, and the message is under the kernel's registered buffer, 8 MiB
# by default (``CustomAllreduce._SUPPORTED_WORLD_SIZES``, ``should_custom_ar``: ``inp_size < max_size``, and
# ``max_size=8192 * 1024`` in sgl-project/sglang python/sglang/srt/distributed/device_communicators/
# custom_all_reduce.py and in vllm-project/vllm vllm/distributed/device_communicators/custom_all_reduce.py, which
# SGLang's adapts from vLLM v0.6.4; on unless ``--disable-custom-all-reduce``, whose default is off in both). One
# kernel reads the peers' buffers over NVLink, so a decode step's small all-reduce costs a few µs, not NCCL's fixed
# ~30 µs. On H100 at the sizes 512 to 32,768 of sgl-project/sglang PR #2904's unit-test latency table (TP 2, 4, 8),
# SGLang's kernel took 3.7-7.8 µs (median of the nine figures 4.8 µs) and vLLM's 8.5-11.8 µs (median 9.2 µs; timed
# outside a CUDA graph, so with the copy into the registered buffer that a graphed decode step skips: a bound from
# above). vLLM's own benchmark agrees at its smallest size, 0.5 MB: 7 µs on 2 H100s and 10 µs on 4 for the one-stage
# kernel (vllm-project/vllm PR #24111, isolated-primitives table). The kernels are CUDA and ROCm builds
# (sgl_kernel; vLLM's ``Platform.use_custom_allreduce``): Ascend, Intel and CPU builds reduce with their own
# libraries, and vLLM runs its kernel on AMD GPUs only from later releases and only on MI300-class parts (v0.6's
# ``ParallelConfig`` turns it off there: "not supported on AMD GPUs"), unmeasured, so gpuplan leaves AMD to RCCL.
# The bytes keep the ring's term at the link's all-reduce rate; larger messages (prefill passes) keep NCCL's whole
# model, the kernel's time growing towards NCCL's there (34 µs at the table's largest size on 8 GPUs).
#
# TensorRT-LLM has had such kernels longest (vLLM's were written after them): its engines are built with
# ``use_custom_all_reduce`` on by default and its all-reduce runs AllReduceStrategy.AUTO, which takes the one-shot or
# two-shot kernel for a message within the IPC workspace (``CustomAllReduceHelper.max_workspace_size_auto``: 16 MB at
# 2 GPUs, 8 MB beyond) where the GPUs have NVLink, and NCCL otherwise (NVIDIA/TensorRT-LLM
# tensorrt_llm/plugin/plugin.py @035b99e0d09d4f2dfdb949810cf7245112aa4165; the PyTorch backend's
# ``allreduce_strategy`` defaults to AUTO as well). NVIDIA's aiconfigurator times that op under CUDA graphs on
# H100 SXM, TensorRT-LLM 1.2.0rc1: 3.0-3.6 µs on 2 GPUs and 3.2-3.8 µs on 4 for messages of 128 to 16,384 fp16
# values, median of the sixteen figures 3.4 µs (ai-dynamo/aiconfigurator
# src/aiconfigurator/systems/data/h100_sxm/trtllm/1.2.0rc1/custom_allreduce_perf.txt.bak
# @302edbc44bd37dfc9c3c360772a1553f12877a3e). gpuplan takes the 8 MB limit at every group size.
CUSTOM_ALLREDUCE: dict[str, CustomAllreduce] = {
    types.Engine.SGLANG: CustomAllreduce(4.8e-6, 8 * MiB, frozenset({"NVIDIA", "AMD"})),
    types.Engine.VLLM: CustomAllreduce(9.2e-6, 8 * MiB, frozenset({"NVIDIA"})),
    types.Engine.TRTLLM: CustomAllreduce(3.4e-6, 8e6, frozenset({"NVIDIA"}), pcie_pair=False),
}
_CUSTOM_ALLREDUCE_GROUPS = (2, 4, 6, 8)


def engine_allreduce_seconds(gpu: Gpu, s: InferSetup, size_bytes: float, cal: Calibration) -> float:
    """One all-reduce of ``size_bytes`` over the setup's TP group as its engine runs it: :data:`CUSTOM_ALLREDUCE`'s
    latency in place of NCCL's where the engine has such a kernel and its conditions hold, else
    :func:`allreduce_seconds`."""
    nccl = allreduce_seconds(gpu, s.tp, size_bytes, cal)
    custom = CUSTOM_ALLREDUCE.get(s.engine)
    if custom is None or not _takes_custom_allreduce(custom, gpu, s.tp, size_bytes, cal):
        return nccl
    return nccl - cal.get("allreduce_latency_s") + custom.latency_s


def _takes_custom_allreduce(custom: CustomAllreduce, gpu: Gpu, tp: int, size_bytes: float,
                            cal: Calibration) -> bool:
    if gpu.vendor not in custom.vendors or tp not in _CUSTOM_ALLREDUCE_GROUPS or size_bytes >= custom.max_bytes:
        return False
    return (tp == 2 and custom.pcie_pair) or links(gpu, cal, tp).nvlink  # more than two GPUs over PCIe: NCCL


def _allreduce_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, tokens: float, cal: Calibration) -> float:
    """The tensor-parallel collectives of a pass over ``tokens`` tokens: two all-reduces per layer of their 16-bit
    hidden states, or under TensorRT-LLM's attention data parallelism one all-reduce's worth per MoE layer."""
    size_bytes = tokens * m.hidden * 2.0
    if s.attention_dp and types.Engine(s.engine).dense_mlp_with_attention_dp:
        return m.n_moe_layers * allreduce_seconds(gpu, s.tp, size_bytes, cal)
    return 2 * m.n_layers * engine_allreduce_seconds(gpu, s, size_bytes, cal)


def batched(s: InferSetup, batch: int) -> InferSetup:
    """``s.with_batch(batch)``, one object per setup object and batch: the memos that a batch search reads with it
    then find the same object rather than an equal one, whose fields a lookup would compare."""
    if batch == s.batch:
        return s
    hit = _batched.get(s, None, None, (batch,))
    if hit is None:
        hit = _batched.put(s, None, None, (batch,), s.with_batch(batch))
    return hit


_batched: IdentityMemo[InferSetup] = IdentityMemo()


def max_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration) -> int:
    """Most sequences of ``s.context_len`` tokens the engine can run at once on this configuration; kept per model,
    calibration, setup, and of the GPU what the memory estimate reads (:func:`memory_reads`)."""
    values = (s, *memory_reads(gpu))
    hit = _most.get(m, cal, None, values)
    if hit is not None:
        return hit
    mem = inference_memory(m, gpu, batched(s, 1), cal, describe=False)
    fits = mem.capacity.max_concurrent_seqs if mem.capacity is not None else 0
    cap = sequence_cap(s) or fits
    return _most.put(m, cal, None, values, max(0, min(fits, cap)))


_most: IdentityMemo[int] = IdentityMemo()


def speed(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: int | None = None, cal: Calibration | None = None) -> Speed:
    """TTFT, TPOT and throughput at ``batch`` concurrent sequences (default: the setup's batch)."""
    cal = cal or fitted()
    b = batch or s.batch
    ttft = prefill_seconds(m, gpu, s, b * s.prompt_len, cal)
    ctx = s.prompt_len + s.output_len / 2
    tpot, bound = decode_step_seconds(m, gpu, s, b, ctx, cal)
    per_wave = ttft + s.output_len * tpot
    out_rate = b * s.output_len / per_wave if per_wave > 0 else 0.0
    return Speed(ttft, tpot, b, out_rate, b / per_wave if per_wave > 0 else 0.0, bound,
                 cal.band("inference_latency"))


def throughput(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration | None = None) -> Estimate:
    """Offline (all requests queued) output tokens/s at the largest batch that fits, with TTFT/TPOT."""
    cal = cal or fitted()
    sp = speed(m, gpu, s, require_batch(m, gpu, s, cal), cal)
    return _as_estimate(m, gpu, s, sp, cal, "throughput")


def require_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration) -> int:
    """:func:`max_batch`, at least one sequence, or an InfeasibleError saying what to change."""
    b = max_batch(m, gpu, s, cal)
    if b < 1:
        raise InfeasibleError("--gpu", f"{m.name} does not fit on {s.tp * s.pp}× {gpu.name} with "
                              f"{s.weight_format} weights and {s.context_len} tokens of context.",
                              "use more GPUs (--tp), a smaller --quant, or a shorter context.")
    return b


def latency(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration | None = None) -> Estimate:
    """Speed at the setup's own batch (default 1): TTFT, TPOT and the resulting output rate."""
    cal = cal or fitted()
    return _as_estimate(m, gpu, s, speed(m, gpu, s, s.batch, cal), cal, "latency")


def _as_estimate(m: ModelSpec, gpu: Gpu, s: InferSetup, sp: Speed, cal: Calibration, kind: str) -> Estimate:
    parts = (("prefill", sp.ttft_s), ("decode", s.output_len * sp.tpot_s))
    figures = SpeedFigures(sp.ttft_s, sp.tpot_s, sp.batch, sp.output_tokens_per_s, sp.requests_per_s, sp.bound,
                           1 / sp.tpot_s if sp.tpot_s else math.inf)
    return Estimate(Breakdown("seconds", parts), cal.band(f"inference_{kind}"),
                    speed_assumptions(gpu, s, sp, cal, kind == "throughput"), figures)


def _matmul_share_assumption(gpu: Gpu) -> tuple[Assumption, ...]:
    """The measured matmul ceiling the peak above carries, where it is not 1 (:mod:`gpuplan.estimate.mamf`)."""
    share = matmul_share(gpu)
    if share == 1.0:
        return ()
    return (Assumption("matmul ceiling", f"{share:.2f} x the datasheet peak: its best measured BF16 matmul "
                       f"reaches {mamf_shares()[gpu.name]:.1%} of the datasheet, {REFERENCE_GPU}'s "
                       f"{mamf_shares()[REFERENCE_GPU]:.1%}, which the fitted efficiencies hold",
                       "stas00/ml-engineering Maximum Achievable Matmul FLOPS table (data/matmul_efficiency.csv)"),)


def _fp4_share_assumption(gpu: Gpu, dtype: str) -> tuple[Assumption, ...]:
    """The FP4 GEMM share the matmul rate carries, where it is not 1."""
    share = fp4_gemm_share(gpu)
    if dtype != "fp4" or share == 1.0:
        return ()
    return (Assumption("fp4 gemm share", f"{share:.2f} of FP8's fraction of peak (the FP4 rate above is "
                       f"{share:.2f} x the datasheet's {gpu.fp4_flops_per_s / TERA:,.0f} TFLOP/s)"
                       if gpu.fp4_flops_per_s else f"{share:.2f} of FP8's fraction of peak",
                       "vLLM CUTLASS GEMM benchmarks on SM100 (vllm-project/vllm PRs #19566, #20646)"),)


def speed_assumptions(gpu: Gpu, s: InferSetup, sp: Speed, cal: Calibration, largest_batch: bool
                      ) -> tuple[Assumption, ...]:
    """What a speed estimate rests on: the engine's fitted efficiencies, the part's peaks, the batch and
    what bounds the decode step."""
    eng = get_engine(s.engine)
    peak, dtype = compute_peak(gpu, weight_format(s.weight_format), eng, metal_tensor_gemm(s))
    return (
        Assumption("engine efficiency", f"{eng.name}: memory {_eff(cal, eng, 'eta_memory', gpu):.0%} of bandwidth, "
                   f"compute {_eff(cal, eng, 'eta_compute', gpu):.0%} of peak, "
                   f"{_layer_overhead(cal, eng, s, gpu) * 1e6:.0f} µs per layer per step",
                   "fitted (bench/fit.py)" + uncalibrated_note(gpu, eng.engine)),
        Assumption("peak", f"{peak / TERA:,.0f} TFLOP/s {dtype}, {_bandwidth(gpu) / GB:,.0f} GB/s",
                   gpu.source),
        *_fp4_share_assumption(gpu, dtype),
        *_matmul_share_assumption(gpu),
        Assumption("batch", f"{sp.batch} concurrent sequences of {s.prompt_len}+{s.output_len} tokens",
                   "largest that fits the KV cache and the engine cap" if largest_batch else "as requested"),
        Assumption("decode", f"{sp.bound}-bound",
                   "roofline: max(weight bytes/bandwidth, FLOPs/peak) + KV bytes/bandwidth"),
        *_graph_assumptions(s, eng, cal, gpu),
        *_host_sequence_assumption(s, cal),
        *_load_cap_assumption(gpu, eng, cal),
        *_matvec_floor_assumption(gpu, eng, cal, weight_format(s.weight_format)),
    )


def _graph_assumptions(s: InferSetup, eng: Engine, cal: Calibration, gpu: Gpu) -> tuple[Assumption, ...]:
    """Where the engine replays CUDA graphs for some steps only (:func:`graph_batches`, :func:`prompt_steps_eager`),
    what its other steps cost on the host."""
    graphs = graph_batches(s, gpu)
    if graphs is None:
        if not prompt_steps_eager(s):
            return ()
        return (Assumption("CUDA graphs", f"every decode batch replays a captured graph; a step that carries prompt "
                           f"tokens launches op by op at {_eager_layer_overhead(cal, eng, gpu) * 1e6:.0f} µs per "
                           "layer, overlapped with the GPU",
                           "TensorRT-LLM CudaGraphConfig: graphs hold decode-only batches "
                           "(tensorrt_llm/llmapi/llm_args.py); fitted (bench/fit.py)"),)
    if not graphs:
        return (Assumption("CUDA graphs", f"off: every step launches op by op at "
                           f"{_eager_layer_overhead(cal, eng, gpu) * 1e6:.0f} µs per layer, overlapped with the GPU",
                           "the server's flag (SGLang --disable-cuda-graph, vLLM --enforce-eager); fitted "
                           "(bench/fit.py)"),)
    if len(graphs) == max(graphs):  # every size up to the largest: the engine pads a batch to a captured one
        return (Assumption("CUDA graphs", f"every decode batch up to {max(graphs)} replays a captured graph (padded "
                           f"to the next captured size); larger ones launch op by op at "
                           f"{_eager_layer_overhead(cal, eng, gpu) * 1e6:.0f} µs per layer, overlapped with the GPU",
                           f"{eng.name} capture sizes by release (gpuplan/estimate/engines.py graph_batches); "
                           "fitted (bench/fit.py)"),)
    return (Assumption("CUDA graphs", f"decode batches up to {max(graphs)} replay a captured graph (not every size); "
                       f"other steps launch op by op at {_eager_layer_overhead(cal, eng, gpu) * 1e6:.0f} µs per "
                       "layer, overlapped with the GPU",
                       f"{eng.name} server defaults (gpuplan/data/engines.csv); fitted (bench/fit.py)"),)


def _host_sequence_assumption(s: InferSetup, cal: Calibration) -> tuple[Assumption, ...]:
    """The host time per running sequence of a decode step (:func:`host_step_seconds`), where the fit holds one
    for the setup's engine and release, and whether it adds to the GPU's step or overlaps it."""
    per = host_seconds_per_sequence(cal, s)
    if not per:
        return ()
    source = ("the engine's scheduling, input preparation and sampling per sequence (docs/estimators.md, Inference "
              "speed); fitted (bench/fit.py)")
    if host_overlaps_step(s):
        return (Assumption("host time per sequence", f"{per * 1e6:.0f} µs per running sequence and step, overlapped "
                           "with the GPU's step", source),)
    return (Assumption("host time per sequence", f"{per * 1e6:.0f} µs per running sequence and step, added to the "
                       "GPU's step", source),)


def _load_cap_assumption(gpu: Gpu, eng: Engine, cal: Calibration) -> tuple[Assumption, ...]:
    """The per-SM load cap of :func:`weight_bandwidth`, where it binds (else nothing)."""
    per_cycle, cycles = sm_load_bytes_per_cycle(cal, eng, gpu), gpu.sm_cycles_per_s
    if not (per_cycle and cycles) or weight_bandwidth(gpu, eng, cal) >= _bandwidth(gpu) * _eff(
            cal, eng, "eta_memory", gpu):
        return ()
    clock_ghz = cycles / (gpu.sm_count or 1) / 1e9
    return (Assumption("weight load rate", f"{eng.name}: {per_cycle:.1f} bytes per SM cycle × {gpu.sm_count} SMs × "
                       f"{clock_ghz:.2f} GHz = {per_cycle * cycles / GB:,.0f} GB/s, below its share of "
                       "the memory bandwidth", "per-SM load cap of its mat-vec kernels (docs/estimators.md)"),)


def _matvec_floor_assumption(gpu: Gpu, eng: Engine, cal: Calibration, fmt: WeightFormat) -> tuple[Assumption, ...]:
    """The ALU floor of :func:`matvec_seconds_per_weight`, where the engine's kernels have one for the format."""
    per_weight = matvec_seconds_per_weight(cal, eng, fmt, gpu)
    if not per_weight:
        return ()
    flops = per_weight * (gpu.fp32_flops_per_s or 0.0)
    return (Assumption("mat-vec ALU floor", f"{eng.name}: {flops:.0f} FLOP per {fmt.name} weight at "
                       f"{(gpu.fp32_flops_per_s or 0.0) / TERA:,.1f} TFLOP/s FP32 = "
                       f"{1 / per_weight / 1e9:,.0f} G weights/s at most in a decode step",
                       "dequantizing mat-vec kernels (docs/estimators.md); fitted (bench/fit.py)"),)
