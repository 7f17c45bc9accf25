"""Training and fine-tuning time: FLOPs ÷ (GPUs × peak × utilisation) + communication that is not hidden.

Utilisation is not a constant. It is modelled as

    u = u_framework × f_segment × f_method × (1 − exp(−W / W₀))

where W is the work of one micro-step on one GPU (TFLOP): small models and small micro-batches leave the
GPU idle between kernels. u_framework (optimised stacks: Megatron, torchtitan; eager stacks: HF Trainer,
torchtune, DeepSpeed), f_segment (consumer/workstation cards against their datasheet peak), f_method
(frozen-base methods) and W₀ are fitted by ``bench/fit.py`` on published runs and kept in
``data/fitted/params.json``.

A quantized frozen base (QLoRA, a GPTQ or int4 base) is dequantized to 16-bit for every matmul, once per weight
and pass, whatever the micro-batch (:func:`dequantize_bytes`): its cost is a time per micro-step, not a share of
the step, so it weighs on a batch of one and fades as the tokens per micro-step grow.

Beside the matmuls, every layer runs kernels that are bound by memory bandwidth, not FLOPs: norms, residual
adds, activation functions, rotary embeddings, dropout, the logits' softmax. Their traffic grows with the
width (tokens × hidden) while matmul FLOPs grow with its square, so they weigh most in narrow models and on
parts whose peak is high against their bandwidth (Ivanov et al. 2021, "Data Movement Is All You Need", table
1: in BERT they are 0.2 % of the FLOPs and ~40 % of the runtime). They are counted as a fitted number of
16-bit activation elements per token, layer and hidden unit (``activation_traffic``; Korthikanti et al. 2022
count 34·h bytes of stored activations per token and layer, the tensors these kernels read and write), plus
the logits in FP32, read and written in the loss forward and backward, at the memory bandwidth.

Eager PyTorch launches each layer's kernels from Python; when a micro-step's GPU work is shorter than the host
time to launch it (``layer_launch_s`` per layer, forward and backward), the GPU waits: small micro-batches do
not run faster than their launches (PyTorch CUDA-graphs docs: "the CPU overhead of launching kernels" bounds
small workloads).

Communication (Narayanan et al. 2021 sec. 3; ring all-reduce moves 2·(n−1)/n of the buffer), over NVLink at the
bus bandwidth NCCL reaches for each collective (``links.NVLINK_BUS_SHARE``: 76-82 % of the link's one-way rate):
- data parallel: one gradient all-reduce per optimizer step, overlapped with the last micro-batch's compute
  (and with the interleaved schedule's cool-down: :func:`dp_overlap_window`); ZeRO-3/FSDP: all-gather the
  weights, a frozen base included, in forward and backward + reduce-scatter gradients, every micro-step,
  overlapped with the step; DeepSpeed's pipeline engine (GPT-NeoX) reduces after the backward, not behind it;
- tensor parallel: four all-reduces of the activations per layer per micro-step (six with a full
  recomputation, which reruns the forward's two: Korthikanti et al. 2022, sec. 5), not overlapped;
- pipeline: the 1F1B bubble, (p − 1)/m of the ideal compute time for m micro-batches per step
  (Narayanan et al. 2021, eq. 1); with v model chunks per stage (the interleaved schedule), (p − 1)/(v·m)
  (same paper, sec. 2.2.2); plain 1F1B also waits on the stages' point-to-point sends
  (:func:`pipeline_send_seconds`);
- expert parallel: the all-to-alls of a mixture-of-experts model (:mod:`gpuplan.estimate.moe_train`), not
  overlapped, but under DeepSeek's DualPipe schedule, which runs them and the pipeline sends behind compute
  (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, sec. 3.2.1; :func:`behind_compute`), and under Megatron-Core's
  EP communication overlap, which does so for the micro-batches its combined 1F1B schedule pairs
  (:func:`ep_overlap_exposed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.flops import forward_flops_per_token, train_flops_per_token
from gpuplan.estimate.frameworks import stack
from gpuplan.estimate.links import GPUS_PER_NODE, Collective, Links, links, uncalibrated_note
from gpuplan.estimate.memory import frozen_base_bytes, linear_and_other_params, parameter_terms
from gpuplan.estimate.moe_train import (
    all_to_all_bytes,
    all_to_all_collectives,
    expert_cast_bytes_per_token,
    expert_dp,
    expert_gemm_launches,
    gpu_params,
    link_shares,
    permute_bytes_per_token,
    routed_params,
)
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.result import Assumption, Breakdown, Estimate, TrainRate
from gpuplan.memo import IdentityMemo
from gpuplan.types import Gpu, Method, ModelSpec, Recompute, TrainSetup
from gpuplan.units import GB, TERA, fmt_seconds

HOPPER_AND_NEWER = ("Hopper", "Blackwell", "Blackwell Ultra")  # data/gpus.csv ``architecture``
# the exponential units' rate against Blackwell's: Blackwell Ultra doubles the special-function units' MUFU.EX2
# throughput, which bounds the softmax between the attention kernel's two matmuls (NVIDIA technical blog, "Making
# Softmax More Efficient with NVIDIA Blackwell Ultra", developer.nvidia.com/blog/making-softmax-more-efficient-with-
# nvidia-blackwell-ultra/); GB300/B300 have GB200/B200's tensor peaks (data/gpus.csv)
SFU_SPEEDUP = {"Blackwell Ultra": 2.0}
# of the scores standard attention's GEMMs compute, the causal half that training FLOPs count (flops.py: a token
# attends (s + 1)/2 positions; s/(s + 1) ≈ 1 at the sequence lengths trained)
UNFUSED_SCORE_SHARE = 0.5
MAX_UTILISATION = 0.85  # no training step sustains more of the dense peak (GEMMs alone reach ~80-85 %)


def training_links(gpu: Gpu, s: TrainSetup, cal: Calibration) -> Links:
    """The links a training job of ``s`` communicates over: its GPUs within one node form the group, so two
    GPUs joined by an NVLink bridge (RTX 3090, A5000, A6000, the PCIe A100/H100: a 2-way bridge, data/gpus.csv)
    run their collectives over it, as the inference estimate already does for a TP pair: NCCL's P2P transport
    goes over NVLink wherever it joins the pair (NCCL user guide, docs.nvidia.com/deeplearning/nccl/user-guide/
    docs/env.html, NCCL_P2P_LEVEL: "NVL: Use P2P when GPUs are connected through NVLink"). Three GPUs or more
    fall back to PCIe (a bridge joins only its pair)."""
    return links(gpu, cal, min(s.parallel.n_gpus, GPUS_PER_NODE))


def peak_flops(gpu: Gpu, precision: str) -> float:
    """Dense tensor peak for the training precision (fp32 training runs on TF32 tensor cores where present)."""
    if precision == "fp32":
        return gpu.tf32_flops_per_s or gpu.fp32_flops_per_s or gpu.half_flops_per_s
    if precision.startswith(("fp8", "fp4")):  # the matmuls' low-precision rate: low_precision_rate
        return gpu.half_flops_per_s
    if precision.startswith("fp16"):
        # a part whose FP16 arithmetic is slower than its FP32 (Pascal GP102/GP104 at 1/64) still runs an
        # fp16-mixed job's matmuls at its FP32 rate, not at that one: u39kun/deep-learning-benchmark README
        # @02ef743669e9 (PyTorch 0.3.0, GTX 1080 Ti): vgg16 train 131.9 ms in 32-bit, 117.6 ms in 16-bit
        return max(gpu.fp16_flops_per_s or 0.0, gpu.fp32_flops_per_s or 0.0) or gpu.half_flops_per_s
    return gpu.half_flops_per_s


LOW_PRECISIONS = ("fp8-mixed", "fp4-mixed")  # precisions whose linears' matmuls run below 16 bits


def low_precision_rate(gpu: Gpu, precision: str) -> float | None:
    """Tensor rate of the matmuls a low-precision recipe runs: FP8's datasheet peak, or for NVFP4 training
    (Transformer Engine's ``NVFP4BlockScaling``: fprop, dgrad and wgrad all in FP4) the FP4 peak times
    :func:`~gpuplan.estimate.infer_speed.fp4_gemm_share`, the share of FP8's achieved fraction of peak that
    block-scaled FP4 GEMMs reach on the part (measured GEMMs, not training runs). None where the part lacks it."""
    if precision != "fp4-mixed":
        return gpu.fp8_flops_per_s
    from gpuplan.estimate.infer_speed import fp4_gemm_share

    return gpu.fp4_flops_per_s * fp4_gemm_share(gpu) if gpu.fp4_flops_per_s else None


def utilisation(m: ModelSpec, gpu: Gpu, s: TrainSetup, cal: Calibration, work: StepWork | None = None) -> float:
    """Fraction of the dense peak the step sustains (see module docstring); ``work``: ``step_work(m, s, cal)``
    when the caller has it."""
    w = work or step_work(m, s, cal)
    return _utilisation(w, 1.0 if gpu.segment == "datacenter" else cal.get("f_consumer"))


def _utilisation(w: StepWork, segment: float) -> float:
    """:func:`utilisation` of a step of terms ``w`` on a GPU whose segment's factor is ``segment``."""
    return min(MAX_UTILISATION, w.u_framework * segment * w.f_method * w.ramp)


def attention_efficiency(gpu: Gpu, s: TrainSetup, cal: Calibration) -> float:
    """The attention kernels' rate against the GEMMs' (both at the step's utilisation).

    FlashAttention-2 reaches 50-73 % of an A100's peak forward and backward where GEMMs reach 80 %+ (Dao 2023,
    FlashAttention-2, sec. 4.1): ``f_attention``. FlashAttention 1.x and its Triton port run 1.3-1.5× slower
    forward and ~2× slower backward (same section): ``f_attention_flash1``, a prior from those figures. On Hopper
    and newer, FlashAttention-2 reaches 35 % of the peak against 70 %+ on an A100 (Shah et al. 2024,
    FlashAttention-3, sec. 1): its tiles, like those of the older kernels, do not use Hopper's asynchronous
    tensor-core instructions, while cuBLAS GEMMs do (``f_attention_hopper``); the slower of the two limits holds.
    cuDNN's fused attention and FlashAttention-3 do use them (FlashAttention-3 reaches 75 % of an H100's peak, same
    paper, sec. 1; cuDNN 631 against SDPA's FlashAttention-2 329 TFLOP/s, pytorch/pytorch#142132): a stack that
    runs them (:func:`attention_kernel`: Transformer Engine's attention in Megatron-Core) has its own limit,
    ``f_attention_hopper_cudnn``, which is the FlashAttention-2 one while no fit sets it (bench/fit.py does not:
    docs/estimators.md, Training time).
    On Blackwell the fused attention kernels wait on the softmax's exponentials, which run on the special-function
    units, not the tensor cores; Blackwell Ultra doubles those units' rate (``SFU_SPEEDUP``), so its attention
    runs at twice the ``f_attention_hopper`` limit of a Blackwell part with the same tensor peak.
    Standard (unfused) attention runs QK^T and PV as batched cuBLAS GEMMs, at the GEMMs' rate, over every score,
    masked or not (Megatron-LM's and GPT-NeoX's core attention: ``baddbmm`` into the whole s × s matrix, then the
    masked softmax), twice the (s + 1)/2 positions a causal token attends that training FLOPs count
    (``UNFUSED_SCORE_SHARE``); the traffic of its score matrices is :func:`score_traffic_bytes`."""
    if not s.flash_attention:
        return UNFUSED_SCORE_SHARE
    family = attention_kernel(s)
    kernel = cal.get("f_attention_flash1") if family == "flash1" else 1.0
    if gpu.architecture in HOPPER_AND_NEWER:
        hopper = cal.get("f_attention_hopper")
        if family == "cudnn":
            hopper = cal.values.get("f_attention_hopper_cudnn", hopper)
        kernel = min(kernel, hopper * SFU_SPEEDUP.get(gpu.architecture, 1.0))
    return cal.get("f_attention") * kernel


def attention_kernel(s: TrainSetup) -> str:
    """The attention kernel ``s`` runs: the one it states, else its stack's (data/stacks.csv)."""
    return s.attention_kernel or stack(s.framework).attention_kernel


CollectiveShares = tuple[tuple[Collective, float], ...]  # (collective, share of a part's bytes it moves)
ALL_REDUCE_ONLY: CollectiveShares = ((Collective.ALL_REDUCE, 1.0),)
HALF_GATHER_HALF_SCATTER: CollectiveShares = ((Collective.ALL_GATHER, 0.5), (Collective.REDUCE_SCATTER, 0.5))


@dataclass(frozen=True, slots=True)
class StepWork:
    """What a training step of one setup costs whatever GPU runs it: the terms of :func:`train_time` that do not
    depend on the GPU, so a planner that times one setup on many GPU types works them out once."""

    flops_per_token: float  # train_flops_per_token
    matmul_share: float  # of the FLOPs in weight matmuls
    u_framework: float  # the stack's utilisation, compiled or not
    f_method: float  # frozen and quantized bases
    ramp: float  # 1 − exp(−W / W₀) for a micro-step's work W on one GPU
    optimizer_bytes: float  # optimizer_step_bytes
    traffic_bytes_per_token: float  # activation_traffic_bytes
    dp_bytes: float  # data-parallel bytes per optimizer step × ring factor (_comm_per_step divides by the link)
    tp_bytes: float  # tensor-parallel bytes per micro-step × ring factor (_comm_per_step divides by the link)
    ep_bytes: float = 0.0  # expert-parallel all-to-all bytes one GPU sends per micro-step (moe_train)
    ep_collectives: float = 0.0  # all-to-alls per micro-step, each paying a collective latency
    fp8_excluded_share: float = 0.0  # of the FLOPs, in matmuls an FP8 recipe leaves 16-bit (flops.fp8_excluded_params)
    dequant_bytes: float = 0.0  # dequantize_bytes: a quantized base's weights read and written per micro-step
    dp_collectives: CollectiveShares = ALL_REDUCE_ONLY  # of dp_bytes, by the collective moving them (CommBytes)
    tp_collectives: CollectiveShares = ALL_REDUCE_ONLY  # of tp_bytes, likewise
    score_bytes_per_token: float = 0.0  # score_traffic_bytes: standard attention's score matrices (0 with flash)


def step_work(m: ModelSpec, s: TrainSetup, cal: Calibration, like: StepWork | None = None) -> StepWork:
    """The GPU-independent terms of a training step of ``s`` (see :class:`StepWork`); ``like``: those of a setup
    that differs from ``s`` only in its micro-batch and gradient accumulation, whose terms that read neither are
    taken over (a search times up to four micro-batches of each layout)."""
    if like is not None:
        return _resized_work(m, s, cal, like)
    framework = cal.get(f"u_{s.framework.efficiency_class}")
    if s.compiled:
        framework *= cal.get("f_compiled")
    method = 1.0 if s.method.trains_base else cal.get("f_frozen_base")
    flops, matmul_share, fp8_excluded_share = _flop_terms(m, s)
    work = flops * s.tokens_per_micro_batch / (s.parallel.tp * s.parallel.cp) / TERA
    ramp = 1 - math.exp(-work / cal.get("work_half_tflop"))
    dp_bytes, tp_bytes, dp_collectives, tp_collectives = _comm_bytes(m, s)
    return StepWork(flops, matmul_share, framework, method, ramp, optimizer_step_bytes(m, s),
                    (activation_traffic_bytes(m, s, cal) + ssd_scan_bytes_per_token(m, s) +
                     permute_bytes_per_token(m, s) + expert_cast_bytes_per_token(m, s)), dp_bytes, tp_bytes,
                    all_to_all_bytes(m, s),
                    all_to_all_collectives(m, s), fp8_excluded_share, dequantize_bytes(m, s), dp_collectives,
                    tp_collectives, score_traffic_bytes(m, s))


def _resized_work(m: ModelSpec, s: TrainSetup, cal: Calibration, like: StepWork) -> StepWork:
    """:func:`step_work` of ``s`` with ``like``'s terms that do not read the micro-batch or the accumulation: the
    ramp, the data- and tensor-parallel bytes and the expert all-to-all bytes are worked out again."""
    work = like.flops_per_token * s.tokens_per_micro_batch / (s.parallel.tp * s.parallel.cp) / TERA
    ramp = 1 - math.exp(-work / cal.get("work_half_tflop"))
    dp_bytes, tp_bytes, dp_collectives, tp_collectives = _comm_bytes(m, s)
    return StepWork(like.flops_per_token, like.matmul_share, like.u_framework, like.f_method, ramp,
                    like.optimizer_bytes, like.traffic_bytes_per_token, dp_bytes, tp_bytes, all_to_all_bytes(m, s),
                    like.ep_collectives, like.fp8_excluded_share, like.dequant_bytes, dp_collectives, tp_collectives,
                    like.score_bytes_per_token)


# MatMul4Bit, the autograd Function bitsandbytes' Linear4bit trains through, dequantizes the whole weight to 16-bit
# in forward (F.dequantize_4bit, then linear) and again in backward for the input's gradient; it keeps only the packed
# weight between them (bitsandbytes-foundation/bitsandbytes bitsandbytes/autograd/_functions.py
# @012c660699ccb92bfa97916f1a18bed0980eae00). F.dequantize_4bit reads the packed weight and its block constants and
# writes a new 16-bit tensor of the weight's shape (bitsandbytes/functional.py
# @01327aa0119fa503ea16322dd72f69f202e4502e).
# AutoGPTQ's training path and ChatGLM's int4 kernels do the same: a 16-bit matrix per matmul.
DEQUANT_PASSES = 2  # forward, and backward for the input's gradient; a full recomputation reruns the forward


def dequantize_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes one GPU reads and writes per micro-step to dequantize the quantized frozen base of ``s``: per pass
    (:data:`DEQUANT_PASSES`, one more with full recomputation), each quantized weight on the GPU read in its format
    and written in 16-bit. Every data-parallel rank runs the whole model on its micro-batch, so ZeRO-3/FSDP, which
    gathers the packed weights, does not divide this; TP and PP do. 0 for a 16-bit base."""
    name = s.base_quant or ("bnb-nf4-dq" if s.method.quantizes_base else None)
    if not name or s.method.trains_every_weight:
        return 0.0
    fmt = weight_format(name)
    if fmt.is_16bit:
        return 0.0
    quantized = count_params(m).experts if fmt.scope == "experts" else linear_and_other_params(m)[0]
    if stack(s.framework).quantizes_output_layer:
        quantized += m.vocab * m.hidden
    passes = DEQUANT_PASSES + (1 if s.recompute == Recompute.FULL else 0)
    written = 4.0 if fmt.compute == "fp32" else 2.0
    return passes * quantized / (s.parallel.tp * s.parallel.pp) * (fmt.bytes_per_weight + written)


def dequantize_seconds(gpu: Gpu, w: StepWork, micro_steps: float, cal: Calibration) -> float:
    """Time to dequantize a quantized base in ``micro_steps`` micro-steps: :func:`dequantize_bytes` at
    ``eta_dequant`` of the memory bandwidth (fitted; ``eta_optimizer``, the other streaming kernels' share, until a
    fit has set it)."""
    if not w.dequant_bytes or not gpu.memory_bandwidth_bytes_per_s:
        return 0.0
    eta = cal.values.get("eta_dequant", cal.get("eta_optimizer"))
    return micro_steps * w.dequant_bytes / (gpu.memory_bandwidth_bytes_per_s * eta)


def _flop_terms(m: ModelSpec, s: TrainSetup) -> tuple[float, float, float]:
    """(``train_flops_per_token``, ``_matmul_share``, ``_fp8_excluded_share``) of ``m`` and ``s``, kept per model
    and the setup fields they read: a training search makes the step terms of hundreds of setups that differ only
    in their layout and micro-batch."""
    key = (s.method, s.recompute, s.recompute_modules, s.attention_recomputed, s.seq_len, s.precision, s.lora_rank,
           s.lora_targets, s.train_embeddings, s.prefix_len, s.trainable_layers, s.mtp_layers, s.adapter_prompt_len,
           s.adapter_start_layer)
    found = _flops.get(m, None, None, key)
    if found is None:
        found = _flops.put(m, None, None, key, (train_flops_per_token(m, s), _matmul_share(m, s),
                                                _fp8_excluded_share(m, s)))
    return found


_flops: IdentityMemo[tuple[float, float, float]] = IdentityMemo(1024)


@dataclass(frozen=True, slots=True)
class StepTime:
    """What a training run costs, before it is described: the parts in seconds and the figures behind them
    (:func:`step_time`; :func:`train_time` describes them)."""

    parts: tuple[tuple[str, float], ...]
    peak: float
    utilisation: float
    steps: float
    tokens_per_step: float
    link: Links

    @property
    def seconds(self) -> float:
        return sum([v for _, v in self.parts])  # a list, not a generator: the same sum in the same order, sooner


class StepLead(NamedTuple):
    """The first parts of a training run's time (:func:`step_lead`): compute, the memory-bound kernels and the
    optimizer steps, and the figures behind them. Every later part is ≥ 0, so ``floor`` — these three summed in
    :attr:`StepTime.seconds`' order — is never above the run's seconds: a search that already has a faster setup
    need not finish the estimate (:func:`step_time`)."""

    compute: float
    memory_bound: float
    optimizer: float
    peak: float
    utilisation: float
    steps: float
    tokens_per_step: float
    bandwidth: float

    @property
    def floor(self) -> float:
        return 0 + self.compute + self.memory_bound + self.optimizer  # the prefix of StepTime.seconds' sum

    def bound(self, m: ModelSpec, gpu: Gpu, s: TrainSetup, cal: Calibration, w: StepWork,
              comm: tuple[float, float, float] | None = None) -> float:
        """``floor`` plus the tensor-parallel and pipeline sends and the pipeline bubble of ``s`` on ``gpu``
        (``w``: its :func:`step_work`; ``comm``: :meth:`comm`, when the caller has it), in the order
        :attr:`StepTime.seconds` sums them: each part left out is ≥ 0 and adding one never lowers a rounded sum, so
        this is never above the run's seconds either. The parts that overlap compute (data-parallel) or hang on
        the experts' routing are left out; the rest are a few products, so a search can drop a slower layout
        before :func:`step_time`."""
        _, tp_total, pp_total = comm or self.comm(m, gpu, s, cal, w)
        if s.dualpipe:  # its pipeline sends may run behind compute (behind_compute)
            pp_total = 0.0
        return self.floor + tp_total + pp_total + pipeline_bubble(s, self.compute)

    def comm(self, m: ModelSpec, gpu: Gpu, s: TrainSetup, cal: Calibration, w: StepWork,
             link: Links | None = None) -> tuple[float, float, float]:
        """The communication seconds of the run (data-parallel per optimizer step, tensor-parallel, pipeline
        sends) that :meth:`bound` and :func:`step_time` both read: a search that bounds a setup and then times it
        passes them on rather than working them out twice (``link``: ``training_links(gpu, s, cal)``, when the
        caller has it)."""
        return _comm_seconds(m, s, link or training_links(gpu, s, cal), w, self.steps)


class LeadWork(NamedTuple):
    """What :func:`step_lead` works out of a setup and its run whatever the GPU (:func:`lead_work`)."""

    flops: float  # of the whole run
    n_gpus: int
    tokens_per_step: float
    steps: float
    optimizer_bytes: float  # read by the optimizer steps of the whole run
    memory_bound_bytes: float  # moved by the memory-bound kernels of the whole run, per GPU
    score_bytes: float = 0.0  # moved through standard attention's score matrices in the whole run, per GPU


def lead_work(s: TrainSetup, tokens: float, w: StepWork) -> LeadWork:
    """The GPU-independent terms of ``step_lead(m, gpu, s, tokens, cal, w)``, in its order of operations: a search
    that times one setup on many GPU types makes them once."""
    par = s.parallel
    n = par.n_gpus
    tokens_per_step = s.tokens_per_micro_batch * s.grad_accum * par.dp
    steps = max(1.0, tokens / tokens_per_step)
    return LeadWork(w.flops_per_token * tokens, n, tokens_per_step, steps, steps * w.optimizer_bytes,
                    tokens * w.traffic_bytes_per_token / n, tokens * w.score_bytes_per_token / n)


def step_lead(m: ModelSpec, gpu: Gpu, s: TrainSetup, tokens: float, cal: Calibration, w: StepWork,
              lw: LeadWork | None = None, terms: GpuTerms | None = None) -> StepLead:
    """The first parts of :func:`step_time` (see :class:`StepLead`; ``lw``: ``lead_work(s, tokens, w)``, and
    ``terms``: ``gpu_terms(gpu, s, cal)``, when the caller has them)."""
    flops, n, tokens_per_step, steps, optimizer_bytes, memory_bound_bytes, score_bytes = lw or lead_work(s, tokens, w)
    peak, segment, kernels, bandwidth = terms or gpu_terms(gpu, s, cal)
    u = _utilisation(w, segment)
    # attention over the context runs in flash-attention kernels, at f_attention of the GEMMs' share of the
    # peak (Dao 2023, FlashAttention-2, sec. 4.1: 50-73 % of A100 peak forward and backward, where GEMMs reach
    # 80 %+); it is the larger part of the work at long sequences
    share = w.matmul_share
    attention = (1 - share) / kernels
    compute = flops * (share + attention) / (n * peak * u)
    if s.precision in LOW_PRECISIONS:  # float8 (or NVFP4) linears: matmuls at the low-precision rate;
        # attention, the LM head and the router stay 16-bit (flops.fp8_excluded_params)
        peak = gpu.half_flops_per_s
        fp8 = low_precision_rate(gpu, s.precision) or peak
        low = share - w.fp8_excluded_share
        compute = flops * (low / (fp8 * cal.get("f_fp8")) + (attention + w.fp8_excluded_share) / peak) / (n * u)
    optimizer = optimizer_bytes / bandwidth
    memory_bound = memory_bound_bytes / bandwidth
    if score_bytes:  # standard attention's score matrices, at the share of the bandwidth its kernels reach
        memory_bound += score_bytes / ((gpu.memory_bandwidth_bytes_per_s or math.inf) * UNFUSED_ATTENTION_HBM_SHARE)
    return StepLead(compute, memory_bound, optimizer, peak, u, steps, tokens_per_step, bandwidth)


GpuTerms = tuple[float, float, float, float]  # gpu_terms: peak, segment factor, attention efficiency, bandwidth


def gpu_terms(gpu: Gpu, s: TrainSetup, cal: Calibration) -> GpuTerms:
    """What :func:`step_lead` reads of the GPU: (:func:`peak_flops`, the segment's factor of :func:`utilisation`,
    :func:`attention_efficiency`, the optimizer step's bandwidth), kept per GPU, calibration and the three setup
    fields they read (``s.precision``, :func:`attention_kernel` and ``s.flash_attention``): a training search times
    hundreds of setups on each GPU type."""
    key = (s.precision, attention_kernel(s), s.flash_attention)
    found = _gpu_terms_kept.get(gpu, cal, None, key)
    if found is None:
        segment = 1.0 if gpu.segment == "datacenter" else cal.get("f_consumer")
        bandwidth = (gpu.memory_bandwidth_bytes_per_s or math.inf) * cal.get("eta_optimizer")
        found = _gpu_terms_kept.put(gpu, cal, None, key, (
            peak_flops(gpu, s.precision), segment, attention_efficiency(gpu, s, cal), bandwidth))
    return found


_gpu_terms_kept: IdentityMemo[GpuTerms] = IdentityMemo(1024)


def step_time(m: ModelSpec, gpu: Gpu, s: TrainSetup, tokens: float, cal: Calibration, w: StepWork,
              lead: StepLead | None = None, comm: tuple[float, float, float] | None = None,
              link: Links | None = None) -> StepTime:
    """The parts of a training run's time (``lead``: ``step_lead(m, gpu, s, tokens, cal, w)``, ``comm``: its
    :meth:`StepLead.comm`, and ``link``: ``training_links(gpu, s, cal)``, when the caller has them)."""
    par = s.parallel
    compute, memory_bound, optimizer, peak, u, steps, tokens_per_step, _ = (
        lead or step_lead(m, gpu, s, tokens, cal, w))
    step_compute = compute / steps
    link = link or training_links(gpu, s, cal)
    dp_comm, tp_total, pp_total = comm or _comm_seconds(m, s, link, w, steps)
    exposed_dp = max(0.0, dp_comm - cal.get("dp_overlap") * dp_overlap_window(s, step_compute)) * steps
    micro_steps = steps * s.grad_accum
    ep_total = expert_parallel_seconds(m, s, link, w, cal) * micro_steps  # not overlapped (moe_train) ...
    if s.dualpipe:  # ... but under DualPipe
        ep_total, pp_total = behind_compute(ep_total, pp_total, compute)
    elif s.ep_overlap:  # ... or Megatron-Core's combined 1F1B schedule
        ep_total = ep_overlap_exposed(s, ep_total, compute, moe_layer_shares(m, s))
    # one cuBLAS GEMM per local expert (moe_train.expert_gemm_launches); 0 until a fit has the parameter
    expert_launches = expert_gemm_launches(m, s) * cal.values.get("expert_gemm_launch_s", 0.0) * micro_steps
    bubble = pipeline_bubble(s, compute)
    dequantize = dequantize_seconds(gpu, w, micro_steps, cal)
    stall = 0.0
    if not s.framework.optimised and not s.compiled:
        launch = m.n_layers / par.pp * cal.get("layer_launch_s")  # host seconds per micro-step
        stall = micro_steps * max(0.0, launch - (compute + memory_bound + dequantize) / micro_steps)
    parts = (("compute", compute), ("memory_bound_ops", memory_bound), ("optimizer_step", optimizer),
             ("dequantize", dequantize), ("launch_stall", stall), ("data_parallel_comm", exposed_dp),
             ("tensor_parallel_comm", tp_total), ("expert_parallel_comm", ep_total),
             ("expert_gemm_launches", expert_launches),
             ("pipeline_parallel_comm", pp_total), ("pipeline_bubble", bubble))
    return StepTime(parts, peak, u, steps, tokens_per_step, link)


def behind_compute(ep_total: float, pp_total: float, compute: float) -> tuple[float, float]:
    """The expert-parallel all-to-all and pipeline-send seconds left exposed when DualPipe runs them behind compute.

    DualPipe (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 3.2.1 and fig. 4) pairs a
    forward chunk of one micro-batch with a backward chunk of another and runs each one's dispatch, combine and
    pipeline sends while the other computes, so "both all-to-all and PP communication can be fully hidden" as long
    as there is compute to hide them behind: only what exceeds the run's compute seconds stays on the critical
    path (the all-to-alls first, then the sends)."""
    exposed = max(0.0, ep_total + pp_total - compute)
    ep_left = min(ep_total, exposed)
    return ep_left, exposed - ep_left


def ep_overlap_exposed(s: TrainSetup, ep_total: float, compute: float, shares: tuple[float, float]) -> float:
    """The expert-parallel all-to-all seconds left exposed under Megatron-Core's EP communication overlap.

    ``--overlap-moe-expert-parallel-comm`` (Megatron-Bridge's ``moe_a2a_overlap``) runs its combined 1F1B schedule
    (NVIDIA/Megatron-LM ``megatron/core/pipeline_parallel/combined_1f1b.py`` @cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54,
    the pin of the Megatron-Bridge recipes the calibration cites): each phase runs one micro-batch's forward beside
    another's backward, and "EP A2A in forward step is hidden by the attention/mlp computation in the backward step,
    and vice versa". Only the steady phase pairs them: without a pipeline the first forward and the last backward
    run alone, 1/m of the step's all-to-alls for m micro-batches; with the interleaved schedule a stage runs
    2(p − r − 1) + (v − 1)p + 1 warm-up forward chunks (``get_pp_rank_microbatches``, one more under this overlap)
    and as many cool-down backward chunks alone, out of m·v, p/m of them on average over the stages.

    The paired share is hidden layer by layer, each all-to-all behind one given computation only, in three windows
    that each wait for both streams (``megatron/core/models/common/model_chunk_schedule_plan.py``, same commit,
    ``TransformerLayerSchedulePlan.run``): the backward's combine beside the forward's pre-dispatch computation
    (attention, router, shared experts: ``fine_grained_callables.build_transformer_layer_callables``); the forward's
    and the backward's dispatch beside the routed experts' backward, weight gradients and forward; the forward's
    combine beside the pre-dispatch backward (its weight gradients are run later). Each all-to-all is a quarter of
    the paired seconds, the forward a third of each part's compute; ``shares`` are the pre-dispatch side's and the
    routed experts' shares of the compute (:func:`moe_layer_shares`). What a window's all-to-alls outlast its
    computation stays exposed: where the attention side is short beside the all-to-alls (few attention FLOPs per
    token, slow inter-node links), the combines show although the step as a whole has compute enough to hide them.

    Megatron-Core takes the option only with expert parallelism, without recomputing the MoE layers (full, or "moe"
    in ``recompute_modules``), and, with a pipeline, only with virtual stages (``TransformerConfig.__post_init__``,
    same commit); elsewhere nothing is hidden."""
    par = s.parallel
    if par.ep <= 1 or s.reruns_moe or (par.pp > 1 and par.vp <= 1):
        return ep_total
    paired = max(0.0, 1.0 - par.pp / s.grad_accum)
    attention, experts = shares
    a2a, paired_compute = ep_total * paired / 4, compute * paired
    attention_side = paired_compute * attention / 3  # one pass (the forward, or the backward's data gradients)
    windows = (max(0.0, a2a - attention_side) + max(0.0, 2 * a2a - paired_compute * experts) +
               max(0.0, a2a - attention_side))
    return ep_total * (1.0 - paired) + windows


def moe_layer_shares(m: ModelSpec, s: TrainSetup) -> tuple[float, float]:
    """Of a training step's FLOPs, (the MoE layers' work before the dispatch, the routed experts'): what Megatron-
    Core's combined 1F1B schedule runs beside the other micro-batch's combine and its dispatches
    (:func:`ep_overlap_exposed`). The first is the attention, router and shared experts (every layer's work but the
    routed experts and the dense layers' MLPs), the second a token's k experts; the LM head runs outside both. Shares
    of the forward's FLOPs: the backward and a recomputation keep them about the same."""
    if not m.is_moe:
        return 0.0, 0.0
    p = count_params(m)
    forward = forward_flops_per_token(m, (s.seq_len + 1) / 2)
    experts = 2 * p.active_experts
    attention = forward - experts - 2 * p.mlp - 2 * m.vocab * m.hidden
    return max(0.0, attention) / forward, experts / forward


def train_seconds(m: ModelSpec, gpu: Gpu, s: TrainSetup, tokens: float, cal: Calibration | None = None,
                  work: StepWork | None = None) -> float:
    """The total of :func:`train_time`, without describing it: what a planner compares across layouts. ``work``:
    ``step_work(m, s, cal)``, when the caller times ``s`` on several GPUs."""
    cal = cal or fitted()
    return step_time(m, gpu, s, tokens, cal, work or step_work(m, s, cal)).seconds


def train_time(m: ModelSpec, gpu: Gpu, s: TrainSetup, tokens: float, cal: Calibration | None = None,
               work: StepWork | None = None, parts: StepTime | None = None, describe: bool = True) -> Estimate:
    """Wall time to train on ``tokens`` tokens (samples × tokens per sample × epochs) with setup ``s``
    (``work``: as for :func:`train_seconds`; ``parts``: ``step_time(m, gpu, s, tokens, cal, work)``, when the
    caller has it). ``describe=False`` leaves the assumptions and the derived answers (``extra``) out: the same
    parts otherwise, for a search that only compares times."""
    if tokens <= 0:
        from gpuplan.errors import InputError

        raise InputError("tokens", "the job has no tokens.", "give --samples and --tokens-per-sample, or --tokens.")
    cal = cal or fitted()
    n = s.parallel.n_gpus
    w = work or step_work(m, s, cal)
    t = parts or step_time(m, gpu, s, tokens, cal, w)
    cls = "finetune_time"
    if s.method == Method.FULL and s.framework.optimised:  # MoE pretraining has its own error band
        cls = "pretrain_throughput_moe" if m.is_moe else "pretrain_throughput"
    if not describe:
        return Estimate(Breakdown("seconds", t.parts), cal.band(cls), ())
    peak, u, steps, link, total = t.peak, t.utilisation, t.steps, t.link, t.seconds
    # the method's work, no recomputation
    model_flops = (w.flops_per_token if s.recompute == Recompute.NONE
                   else train_flops_per_token(m, replace(s, recompute=Recompute.NONE)))
    mfu = model_flops * tokens / (n * peak) / max(total, 1e-9)
    traffic_mb, eta_memory = w.traffic_bytes_per_token / 1e6, cal.get("eta_optimizer")
    assumptions: tuple[Assumption, ...] = (
        Assumption("FLOPs per token", f"{w.flops_per_token / 1e9:,.1f} GFLOP ({s.method}, recompute "
                   f"{s.recompute})", "6·N + attention (Kaplan et al. 2020); frozen base: 4·N"),
        Assumption("peak", f"{peak / TERA:,.0f} TFLOP/s per GPU ({s.precision} dense)", gpu.source),
        Assumption("utilisation", f"{u:.1%} of peak ({s.framework}{', compiled' if s.compiled else ''}, "
                   f"{gpu.segment})",
                   "fitted on published runs (bench/fit.py, docs/accuracy.md)" + uncalibrated_note(gpu)),
        Assumption("memory-bound kernels", f"{traffic_mb:,.1f} MB per token (norms, activations, loss) at "
                   f"{eta_memory:.0%} of the memory bandwidth",
                   "activation elements per token, layer and hidden unit fitted on published runs (bench/fit.py); "
                   "Ivanov et al. 2021, Data Movement Is All You Need"),
        Assumption("links", f"intra-node {link.intra_name} {link.intra_node / GB:,.0f} GB/s; "
                   f"inter-node {link.inter_name}",
                   "gpus.csv; NCCL moves 76-82 % of an NVLink's rate, by collective (nccl-tests: "
                   "links.NVLINK_BUS_SHARE); network is an assumption (params.json)" if link.nvlink else
                   "gpus.csv; network is an assumption (params.json)"),
        Assumption("steps", f"{steps:,.0f} optimizer steps of {t.tokens_per_step:,.0f} tokens",
                   "micro-batch × sequence × grad-accum × data-parallel ranks"),
    )
    if w.score_bytes_per_token:
        assumptions += (Assumption(
            "standard attention", f"{w.score_bytes_per_token / 1e6:,.1f} MB of score matrices per token at "
            f"{UNFUSED_ATTENTION_HBM_SHARE:.0%} of the memory bandwidth; its GEMMs compute every score, masked or not",
            "no flash attention: Dao et al. 2022, FlashAttention, sec. 3.1 and fig. 2 (standard attention's HBM "
            "traffic and runtime)"),)
    assumptions += mtp_notes(m, s) + fp4_training_notes(gpu, s) + missing_spec_notes(gpu)
    rate = TrainRate(mfu, u, total * n / 3600, tokens / max(total, 1e-9), steps, fmt_seconds(total))
    return Estimate(Breakdown("seconds", t.parts), cal.band(cls), assumptions, rate)


def fp4_training_notes(gpu: Gpu, s: TrainSetup) -> tuple[Assumption, ...]:
    """What an NVFP4 training estimate takes for its matmuls (:func:`low_precision_rate`), where it trains in FP4."""
    rate = low_precision_rate(gpu, s.precision) if s.precision == "fp4-mixed" else None
    if not rate or not gpu.fp4_flops_per_s:
        return ()
    share = rate / gpu.fp4_flops_per_s
    return (Assumption(
        "NVFP4 training", f"the transformer layers' fprop, dgrad and wgrad GEMMs in FP4 at {rate / TERA:,.0f} "
        f"TFLOP/s ({share:.2f} x the datasheet's {gpu.fp4_flops_per_s / TERA:,.0f}) and the utilisation fitted on "
        "FP8 and 16-bit runs; attention, the LM head and the router in 16-bit; the casts (Hadamard transform, "
        "stochastic rounding) not counted apart, as FP8's are not; no FP4 training run is fitted",
        "Transformer Engine NVFP4BlockScaling (NVIDIA/TransformerEngine transformer_engine/common/recipe/__init__.py "
        "@d0067d0da6cb01811b8072a7d304f0e00344ce2b); GEMM share: vLLM CUTLASS GEMM benchmarks on SM100 "
        "(vllm-project/vllm PRs #19566, #20646)"),)


def mtp_notes(m: ModelSpec, s: TrainSetup) -> tuple[Assumption, ...]:
    """What the multi-token prediction depths of ``s`` add to each token's FLOPs, and what is left out."""
    if not s.mtp_layers:
        return ()
    from gpuplan.estimate.flops import mtp_forward_flops_per_token

    extra = 3 * mtp_forward_flops_per_token(m, s.mtp_layers, (s.seq_len + 1) / 2)
    return (Assumption("multi-token prediction", f"{s.mtp_layers} depth(s): {extra / 1e9:,.1f} GFLOP per token of "
                       "the above; their memory is not counted",
                       "DeepSeek-V3 Technical Report (arXiv:2412.19437) sec. 2.2: per depth one block, a 2h→h "
                       "projection and the shared output head"),)


def missing_spec_notes(gpu: Gpu) -> tuple[Assumption, ...]:
    """What the catalog does not know about ``gpu`` that a time estimate needs, and which way it errs."""
    notes: tuple[Assumption, ...] = ()
    if not gpu.memory_bandwidth_bytes_per_s:
        notes += (Assumption("memory bandwidth", "not in the catalog: the optimizer step is not counted",
                             "gpus.csv (left empty where no source was found); the time is a lower bound"),)
    if not (gpu.bf16_flops_per_s or gpu.fp16_flops_per_s):
        notes += (Assumption("16-bit tensor peak", "not in the catalog: the FP32 rate is used",
                             "gpus.csv (left empty where no source was found); the time is an upper bound"),)
    return notes


def optimizer_step_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes one GPU reads and writes in an optimizer step: parameters, gradients and states read, parameters
    and states written (AdamW; a memory-bound elementwise pass at a fitted share of the memory bandwidth)."""
    _, _, (w, g, master, opt), whole, sharded = parameter_terms(m, s)  # state_bytes(s), gpu_params(...)
    held = sharded if s.parallel.zero >= 1 else whole
    return held * (w + g + 2 * (master + opt) + w)


def activation_traffic_bytes(m: ModelSpec, s: TrainSetup, cal: Calibration) -> float:
    """Bytes the memory-bound kernels of one training token read and write, summed over the GPUs that share it:
    ``activation_traffic`` elements per layer and hidden unit (forward and backward; a full recomputation
    runs the forward's again) and the logits, written in FP32 by the head and read and written by the loss
    in forward and backward (4 passes of 4 bytes)."""
    element = 4.0 if s.precision == "fp32" else 2.0
    passes = 4 / 3 if s.recompute == Recompute.FULL else 1.0  # forward is a third of the forward + backward traffic
    layers = m.n_layers * m.hidden * cal.get("activation_traffic") * element * passes
    if s.compiled:  # TorchInductor fuses chains of pointwise and norm kernels: fewer round trips to memory
        layers /= cal.get("f_fused_traffic")
    return layers + 16.0 * m.vocab


# Passes over the b·a·s² score matrix that standard attention makes per layer, each a read or a write of the whole
# matrix (Dao et al. 2022, FlashAttention, sec. 3.1 and Algorithm 0: S = QK^T written, read by the softmax, P written,
# read by PV; Theorem 2: Θ(Nd + N²) HBM accesses against FlashAttention's Θ(N²d²/M)). Forward: S written by the
# QK^T GEMM, read and P written by the scaled masked softmax (one fused kernel in Megatron-LM and GPT-NeoX:
# ``scaled_upper_triang_masked_softmax``), P read by the PV GEMM. Backward: dP written by the dO·V^T GEMM, P and dP
# read and dS written by the softmax's backward, dS read by the two GEMMs of dQ and dK, P read by that of dV.
# Attention dropout, which reads and writes P once more each way, is left out: large runs train without it (BLOOM:
# bigscience/bloom config.json ``attention_dropout: 0.0``), where it only skips a no-op.
SCORE_PASSES_FORWARD = 4
SCORE_PASSES_BACKWARD = 7
# The share of the HBM bandwidth standard attention's kernels reach, GEMMs and softmax together: Dao et al. 2022,
# FlashAttention, fig. 2 (left), GPT-2 medium attention forward and backward on an A100 (seq. length 1024, head
# dim. 64, 16 heads, batch 64; arXiv:2205.14135v2): standard attention reads and writes 40.3 GB of HBM in 41.7 ms;
# at the A100 40GB's 1,555 GB/s (data/gpus.csv; the paper's "1.5 TB/s") that traffic takes 25.9 ms, 62 % of the
# time (47 % were it the 80GB part's 2,039 GB/s). Its 40.3 GB are 18.8 passes over the 2.15 GB score matrix, this
# count's 11 with the mask and dropout passes of a PyTorch implementation added.
UNFUSED_ATTENTION_HBM_SHARE = 0.62


def score_traffic_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes standard (unfused) attention moves per training token through memory for its score and probability
    matrices, summed over the GPUs that share the token: each token's row of s scores per head and attention
    layer, in 16-bit (FP32 for fp32 training), :data:`SCORE_PASSES_FORWARD` + :data:`SCORE_PASSES_BACKWARD`
    times, and the forward's passes again under a full recomputation. 0 with flash attention, whose tiles stay
    on chip."""
    if s.flash_attention:
        return 0.0
    element = 4.0 if s.precision == "fp32" else 2.0
    passes = SCORE_PASSES_FORWARD * (2 if s.recompute == Recompute.FULL else 1) + SCORE_PASSES_BACKWARD
    return m.n_attention_layers * m.n_heads * s.seq_len * element * passes


SSD_CHUNK = 128  # tokens per chunk of Mamba-2's chunked scan (Megatron-Core MambaMixer and Nemotron-H: chunk_size 128)


def ssd_scan_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes Mamba-2's chunked scan (SSD; Dao & Gu 2024, "Transformers are SSMs", sec. 6) reads and writes in memory
    per training token in all its layers. Unlike flash attention, which keeps its scores on chip, the scan's kernels
    hand their intermediates over through memory (state-spaces/mamba ``mamba_ssm/ops/triton/ssd_combined.py``
    @d757aef189a5215ab3568516825a145e49f7b7ed, ``_mamba_chunk_scan_combined_fwd`` / ``_bwd``): the chunk states
    (d_inner × N / Q per token, FP32, written by the chunk-state kernel, read and rewritten by state passing, read
    by the chunk scan), the chunk's C·Bᵀ (groups × Q per token, FP32) and the 16-bit x, B, C and output. Counted
    kernel by kernel over x and output (d = d_inner), B and C (S = groups × N each), the states (st = d·N/Q) and
    C·Bᵀ (G·Q): forward 6d + 8S + 12st + 8GQ bytes; backward, which recomputes the states and C·Bᵀ and writes the
    gradients of x, B, C, the states and C·Bᵀ, 22d + 30S + 34st + 24GQ (dt and its cumulative sums, one value per
    head, are left out). The convolution and gated norm around the scan are in ``activation_traffic``."""
    if m.linear_kind != "mamba2" or not m.n_linear_layers:
        return 0.0
    d, groups, n = m.linear_value_width, m.linear_k_heads, m.linear_k_dim
    b_or_c, states, cb = groups * n, d * n / SSD_CHUNK, groups * SSD_CHUNK
    forward = 6 * d + 8 * b_or_c + 12 * states + 8 * cb
    backward = 22 * d + 30 * b_or_c + 34 * states + 24 * cb
    forwards = 2 if s.recompute == Recompute.FULL else 1
    return m.n_linear_layers * (forwards * forward + backward)


def _matmul_share(m: ModelSpec, s: TrainSetup) -> float:
    """Share of the step's FLOPs in weight matmuls (the rest is attention over the context), the multi-token
    prediction depths' included."""
    from gpuplan.estimate.flops import attention_flops_per_token, mtp_attention_flops_per_token

    dense, context = 2 * _matmul_params(m, s), (s.seq_len + 1) / 2
    scores = attention_flops_per_token(m, context)
    if s.mtp_layers:
        scores += s.mtp_layers * mtp_attention_flops_per_token(m, context)
    return dense / (dense + scores)


def _matmul_params(m: ModelSpec, s: TrainSetup) -> float:
    """``flops.matmul_params`` and, per multi-token prediction depth, ``flops.mtp_matmul_params``."""
    from gpuplan.estimate.flops import matmul_params, mtp_matmul_params

    return matmul_params(m) + (s.mtp_layers * mtp_matmul_params(m) if s.mtp_layers else 0.0)


def _fp8_excluded_share(m: ModelSpec, s: TrainSetup) -> float:
    """Share of the step's FLOPs in the matmuls an FP8 recipe leaves 16-bit (the LM head, the router; each
    multi-token prediction depth runs the same head again), 0 unless the setup trains in FP8 or NVFP4: the part of
    :func:`_matmul_share` that runs at the 16-bit peak."""
    if s.precision not in LOW_PRECISIONS:
        return 0.0
    from gpuplan.estimate.flops import fp8_excluded_params

    excluded = fp8_excluded_params(m) + s.mtp_layers * m.vocab * m.hidden
    return _matmul_share(m, s) * excluded / _matmul_params(m, s)


class CommBytes(NamedTuple):
    """A step's communication bytes, each weighted by its ring factor (:func:`_comm_per_step` divides them by the
    link's bandwidth), and the NCCL collectives that move them, each with its share: their bus bandwidths over
    NVLink differ (``links.NVLINK_BUS_SHARE``)."""

    dp: float  # data-parallel, per optimizer step
    tp: float  # tensor-parallel, per micro-step
    dp_collectives: CollectiveShares
    tp_collectives: CollectiveShares


def _comm_bytes(m: ModelSpec, s: TrainSetup) -> CommBytes:
    """Bytes of data-parallel communication per optimizer step and tensor-parallel communication per micro-step,
    and the collectives that move them (:class:`CommBytes`). A ring all-reduce's bytes are a reduce-scatter's and an
    all-gather's, half each: DDP all-reduces the gradients; a sharded optimizer (ZeRO-1/2, Megatron's distributed
    optimizer) reduce-scatters them and all-gathers the updated weights; ZeRO-3/FSDP all-gathers the weights in
    forward and backward and reduce-scatters the gradients; tensor parallelism all-reduces the activations, or
    all-gathers and reduce-scatters them under sequence parallelism (Korthikanti et al. 2022, sec. 4.2.2)."""
    par = s.parallel
    # a mixture-of-experts model's routed experts, E/EP per GPU, are reduced over their expert-data-parallel
    # copies (moe_train.expert_dp), the rest over DP: each part with its own group's ring factor
    _, trainable, _, whole, _ = parameter_terms(m, s)  # whole: gpu_params(m, s, trainable)
    # a dense model has no routed experts: gpu_params of none is 0.0, and 0.0 × any ring factor adds nothing
    experts = gpu_params(m, s, min(routed_params(m, s), trainable)) if m.is_moe else 0.0
    dense = whole - experts
    ring, expert_ring = _ring(par.dp), _ring(expert_dp(par)) if m.is_moe else 0.0
    grad_bytes = (dense * ring + experts * expert_ring) * 2.0  # 16-bit gradients, each by its ring factor
    if s.dp_after_backward and par.dp > 1:
        # DeepSpeed's PipelineEngine all-reduces the whole gradient buffer (buffered_allreduce_fallback), and ZeRO-1
        # then all-gathers the updated 16-bit weights ((n − 1)/n of them, half an all-reduce's ring): EleutherAI/
        # DeeperSpeed @eb7f5cff36678625d23db8a8fe78b4a93e5d2c75, deepspeed/runtime/pipe/engine.py _exec_reduce_grads
        # and deepspeed/runtime/zero/stage1.py step (the release GPT-NeoX v1.0 pins). Megatron-LM's distributed
        # optimizer of early 2023 moves as many bytes: an fp32 reduce-scatter of the gradients (bf16 forces fp32
        # reduction: megatron/arguments.py), half a ring of 4-byte elements, and a 16-bit all-gather of the
        # updated weights (bigcode-project/Megatron-LM @4d0af09c7ae948fce2bbdc70a7b321a9069b7620,
        # megatron/optimizer/distrib_optimizer.py reduce_model_grads and gather_model_params)
        dp = grad_bytes * (1.5 if par.zero >= 1 else 1.0)
        # by collective, DeepSpeed's: an all-reduce, then an all-gather of half its bytes (Megatron's distributed
        # optimizer would reduce-scatter the first two thirds)
        dp_collectives = ((Collective.ALL_REDUCE, 2 / 3), (Collective.ALL_GATHER, 1 / 3)) if par.zero >= 1 else \
            ALL_REDUCE_ONLY
    elif par.zero >= 3 and par.dp > 1:
        # per micro-step: all-gather every sharded weight in forward and again in backward — the trainable
        # ones in 16-bit and the frozen base of LoRA/QLoRA/P-tuning/freeze in its stored format — and
        # reduce-scatter the trainable gradients (each half a ring)
        gathered = grad_bytes + frozen_base_bytes(m, s) * ring
        dp = (2 * gathered + grad_bytes) / 2 * s.grad_accum
        all_gathers = gathered / (gathered + grad_bytes / 2) if gathered else 0.5
        dp_collectives = ((Collective.ALL_GATHER, all_gathers), (Collective.REDUCE_SCATTER, 1 - all_gathers))
    else:
        dp = grad_bytes
        dp_collectives = HALF_GATHER_HALF_SCATTER if par.zero >= 1 else ALL_REDUCE_ONLY
    tp = 0.0
    if par.tp > 1:
        act = s.micro_batch * s.seq_len * m.hidden * 2.0 / par.cp
        # two all-reduces forward and two backward per layer (Megatron-LM; with sequence parallelism the same
        # bytes as all-gathers and reduce-scatters), and a full recomputation runs the forward's two again
        # (Korthikanti et al. 2022, sec. 5)
        collectives = 6 if s.recompute == Recompute.FULL else 4
        tp = collectives * m.n_layers / par.pp * act * _ring(par.tp)
    return CommBytes(dp, tp, dp_collectives, HALF_GATHER_HALF_SCATTER if par.sequence_parallel else ALL_REDUCE_ONLY)


def expert_parallel_seconds(m: ModelSpec, s: TrainSetup, link: Links, w: StepWork, cal: Calibration) -> float:
    """Seconds of a micro-step's expert-parallel all-to-alls (:mod:`gpuplan.estimate.moe_train`): the bytes
    bound for other nodes over the network, those for the NVLink domain over NVLink (as the dispatcher of ``s``
    sends them, ``moe_train.link_shares``; NCCL's at its all-to-all bus bandwidth, ``links.NVLINK_BUS_SHARE``), one
    after the other, and a collective latency each; not overlapped with compute."""
    if w.ep_bytes <= 0:
        return 0.0
    network, nvlink = link_shares(m, s, link.domain)
    # NCCL's all-to-all (the alltoall dispatcher) at its bus bandwidth; DeepEP's and HybridEP's own kernels have no
    # measurement here and keep the link's rate
    intra = link.intra_bus(Collective.ALL_TO_ALL) if s.ep_dispatcher == "alltoall" else link.intra_node
    return (w.ep_collectives * cal.get("allreduce_latency_s") + w.ep_bytes * network / link.inter_node +
            w.ep_bytes * nvlink / intra)


def dp_overlap_window(s: TrainSetup, step_compute: float) -> float:
    """Compute seconds of an optimizer step that its data-parallel communication can run behind.

    Sharded weights (ZeRO-3/FSDP) are gathered and their gradients reduced in every micro-step, behind that
    micro-step's compute: the whole step. Otherwise the gradients are reduced once per step, after the last
    micro-batch's backward has produced them: synchronisation is off for the other micro-batches (PyTorch DDP
    ``no_sync``; Megatron-Core ``DistributedDataParallel.no_sync``, used by every schedule in
    ``megatron/core/pipeline_parallel/schedules.py``), and Megatron's distributed optimizer gathers the updated
    weights behind the next step's first forward (``--overlap-param-gather``): one micro-step of compute. With
    v > 1 interleaved model chunks a chunk's gradients are reduced as soon as its last backward is done, behind
    the backward passes still to run in the schedule's cool-down: as many chunk passes as its warm-up,
    2·(p − 1) + (v − 1)·p on the first stage (``get_pp_rank_microbatches``), each 1/v of a micro-step.

    DeepSpeed's PipelineEngine (``s.dp_after_backward``) hides none of it: it turns the engine's backward-hook
    reduction off (``enable_backward_allreduce = False``) and runs ReduceGrads and then OptimizerStep as
    instructions of its schedule after the last backward (EleutherAI/DeeperSpeed
    @eb7f5cff36678625d23db8a8fe78b4a93e5d2c75, ``deepspeed/runtime/pipe/engine.py`` and ``schedule.py``
    ``TrainSchedule``); ZeRO-1's all-gather of the updated weights ends the optimizer step (``zero/stage1.py``).
    Nor does Megatron-LM's distributed optimizer before ``--overlap-grad-reduce`` (added later in 2023): its
    ``train_step`` reduce-scatters the gradients after ``forward_backward_func`` returns and all-gathers the weights
    after ``optimizer.step`` (bigcode-project/Megatron-LM @4d0af09c7ae948fce2bbdc70a7b321a9069b7620, the fork that
    trained StarCoder, ``megatron/training.py``)."""
    par = s.parallel
    if s.dp_after_backward:
        return 0.0
    if par.zero >= 3:
        return step_compute
    micro_steps = 1.0
    if par.pp > 1 and par.vp > 1:
        micro_steps += (2 * (par.pp - 1) + (par.vp - 1) * par.pp) / par.vp
    return step_compute * min(1.0, micro_steps / max(1, s.grad_accum))


def pipeline_bubble(s: TrainSetup, compute: float) -> float:
    """Seconds the pipeline stages of ``s`` stand idle in a run whose ``compute`` seconds are its compute part: the
    1F1B bubble, t_bubble / t_ideal = (p − 1)/m for m micro-batches per step, and (p − 1)/(v·m) when each stage
    holds v interleaved model chunks (Narayanan et al. 2021, eq. 1 and sec. 2.2.2); none without pipelining."""
    par = s.parallel
    if par.pp <= 1:
        return 0.0
    return compute * (par.pp - 1) / (max(1, par.vp) * s.grad_accum)


def pipeline_send_seconds(s: TrainSetup, hidden: int, link: Links) -> float:
    """Seconds a micro-step waits on pipeline point-to-point sends: a stage sends its output activations forward
    and their gradients backward, micro-batch × sequence × hidden 16-bit elements each (÷ TP under sequence
    parallelism, ÷ CP). The plain 1F1B schedule waits on them (Megatron-Core ``schedules.py``
    ``forward_backward_pipelining_without_interleaving``: ``send_forward_recv_backward`` between the steps);
    the interleaved schedule overlaps them with the next chunk's compute (``overlap_p2p_comm``), so they are
    not counted there. Stages are the outermost rank dimension (Megatron-Core's default order tp-cp-ep-dp-pp):
    neighbours are n/PP ranks apart, in another NVLink domain once that reaches the domain's size."""
    par = s.parallel
    if par.pp <= 1 or par.vp > 1:
        return 0.0
    act = s.micro_batch * s.seq_len * hidden * 2.0 / (par.tp * par.cp)
    bw = link.intra_bus(Collective.SEND_RECV) if par.n_gpus // par.pp < link.domain else link.inter_node
    return 2 * act / bw


def _ring(n: int) -> float:
    """A ring all-reduce over ``n`` ranks sends 2·(n − 1)/n of the buffer per rank (none for one rank)."""
    return 2 * (n - 1) / n if n > 1 else 0.0


def _comm_seconds(m: ModelSpec, s: TrainSetup, link: Links, w: StepWork, steps: float
                  ) -> tuple[float, float, float]:
    """(data-parallel seconds per optimizer step, before any overlap; tensor-parallel seconds; pipeline-send
    seconds) of a run of ``steps`` optimizer steps of ``s`` over ``link``."""
    dp_comm, tp_comm = _comm_per_step(s, link, w)
    return dp_comm, tp_comm * steps, pipeline_send_seconds(s, m.hidden, link) * (steps * s.grad_accum)


def _comm_per_step(s: TrainSetup, link: Links, w: StepWork) -> tuple[float, float]:
    """Seconds of (data-parallel, tensor-parallel) communication per optimizer step."""
    par = s.parallel
    tp = 0.0
    if par.tp > 1:
        tp = _transfer_seconds(w.tp_bytes, w.tp_collectives, link, par.tp <= link.domain) * s.grad_accum
    return _transfer_seconds(w.dp_bytes, w.dp_collectives, link, par.n_gpus <= link.domain), tp


def _transfer_seconds(size_bytes: float, shares: CollectiveShares, link: Links, in_domain: bool) -> float:
    """Seconds to move ``size_bytes`` of bus bytes, split among collectives by ``shares``: within the NVLink domain
    each at its own bus bandwidth (``Links.intra_bus``), beyond it at the network's rate."""
    if not in_domain:
        return size_bytes / link.inter_node
    return sum([size_bytes * share / link.intra_bus(c) for c, share in shares])
