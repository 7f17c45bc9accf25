"""One job on one hardware configuration: memory, time (or speed), whether it fits, and why not.

This is the single entry point the ``estimate`` command and the planner share: it validates the combination
(TP that does not divide the heads, a context longer than the model supports, QLoRA where bitsandbytes has
no kernels ...) with errors that say what to change, then calls the estimators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gpuplan.errors import InfeasibleError, InputError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.engines import runs_on, sequence_cap, with_engine_defaults
from gpuplan.estimate.frameworks import check_method, zero_buckets
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.hardware import nvidia_generation, runs_here, training_blocker, where
from gpuplan.estimate.memory import MemoryTerms, inference_memory, memory_reads, training_memory
from gpuplan.estimate.moe_train import check_expert_layout
from gpuplan.estimate.quant import GGUF_OF_NATIVE, weight_format
from gpuplan.estimate.result import Assumption, Band, Estimate
from gpuplan.estimate.runners import context_choices, runner_engine, runner_key, with_runner_defaults
from gpuplan.memo import IdentityMemo
from gpuplan.types import (
    Engine,
    Framework,
    Gpu,
    InferSetup,
    Job,
    Method,
    ModelSpec,
    Parallelism,
    Task,
    TrainSetup,
)
from gpuplan.units import GiB

if TYPE_CHECKING:  # the inference estimators are imported by the functions that use them: a training plan
    from gpuplan.estimate.infer_speed import RunWork, Speed  # never loads them (their tables and dataclasses)

DEFAULT_HEADROOM = 0.05  # the margin where the memory estimate's class has no held-out band


def memory_margin(band: Band, headroom: float | None = None) -> float:
    """The share a memory estimate with ``band`` is raised by before it must fit (see ``JobEstimate.margin``)."""
    high = band.held_high
    base = max(0.0, high - 1.0) if high is not None else DEFAULT_HEADROOM
    return max(base, headroom or 0.0)


def needed_memory(mem: Estimate, headroom: float | None = None) -> tuple[float, float]:
    """(bytes that must fit the GPU, the margin they include): the estimate raised by its held-out band — or,
    where the estimate has a floor (training: the allocator's cache is given back under pressure), the floor
    raised by its own band, at least ``DEFAULT_HEADROOM`` for the cache it cannot give back, whichever is less."""
    floor = mem.floor
    if floor is None:
        return _needed(mem.total, None, *_margins(mem.band, None, headroom))
    return _needed(mem.total, floor.value, *_margins(mem.band, floor.band, headroom))


def training_margins(cal: Calibration, headroom: float | None = None) -> tuple[float, float]:
    """The margins :func:`needed_memory` raises a training-memory estimate and its floor by: the same for every
    setup of a plan, so a search works them out once (:func:`training_needed_bytes`)."""
    return _margins(cal.band("training_memory"), cal.band("training_memory_allocated"), headroom)


def training_needed_bytes(terms: MemoryTerms, margins: tuple[float, float]) -> float:
    """``needed_memory(terms.estimate(cal), headroom)[0]`` (``margins``: ``training_margins(cal, headroom)``): the
    bytes a training setup must fit in, without making its estimate (a search sizes hundreds)."""
    return _needed(terms.total, terms.floor_bytes, *margins)[0]


def _margins(band: Band, floor_band: Band | None, headroom: float | None) -> tuple[float, float]:
    """(the margin of an estimate with ``band``, that of its floor with ``floor_band``; 0 without a floor)."""
    margin = memory_margin(band, headroom)
    if floor_band is None:
        return margin, 0.0
    return margin, max(memory_margin(floor_band, headroom), DEFAULT_HEADROOM)


def _needed(total: float, floor_bytes: float | None, margin: float, floor_margin: float) -> tuple[float, float]:
    """:func:`needed_memory` of an estimate of ``total`` bytes and, unless None, a floor of ``floor_bytes``,
    raised by their margins (:func:`_margins`)."""
    whole = total * (1 + margin)
    if floor_bytes is None:
        return whole, margin
    at_floor = floor_bytes * (1 + floor_margin)
    return (at_floor, floor_margin) if at_floor < whole else (whole, margin)


def fits_gpu(mem: Estimate, gpu: Gpu, headroom: float | None = None) -> bool:
    """Whether ``mem`` fits ``gpu`` (:attr:`JobEstimate.fits`): the bytes it needs with its margin, and the KV cache
    within what the engine leaves for it."""
    return needed_memory(mem, headroom)[0] <= gpu.memory_bytes and kv_shortfall(mem) <= 0


def kv_shortfall(mem: Estimate) -> float:
    """KV cache the batch needs beyond what the engine leaves for it (:attr:`JobEstimate.kv_shortfall_bytes`)."""
    if mem.capacity is None:
        return 0.0
    return max(0.0, mem.breakdown.get("kv_cache") - mem.capacity.kv_budget_bytes)


@dataclass(frozen=True)
class JobEstimate:
    """Everything gpuplan knows about running ``job`` on ``n_gpus`` × ``gpu``."""

    job: Job
    model: ModelSpec
    gpu: Gpu
    n_gpus: int
    setup: TrainSetup | InferSetup
    memory: Estimate
    time: Estimate | None  # training time, or the time of a batch-inference job
    speed: Speed | None
    replicas: int = 1
    headroom: float | None = None  # least margin asked for; None: the held-out band alone decides

    @property
    def capacity_bytes(self) -> float:
        return self.gpu.memory_bytes

    @property
    def margin(self) -> float:
        """Share the memory estimate is raised by before it must fit: the upper end of its held-out band (p90 of
        true ÷ estimated with each source predicted by a fit that never saw it) less 1 — so a "fits" holds for
        nine in ten setups unlike any calibrated — and at least ``headroom`` when one is asked for."""
        return needed_memory(self.memory, self.headroom)[1]

    @property
    def needed_bytes(self) -> float:
        return needed_memory(self.memory, self.headroom)[0]

    @property
    def kv_shortfall_bytes(self) -> float:
        """KV cache the batch needs beyond what the engine leaves for it (a pre-allocating engine reserves
        ``gpu_memory_utilization`` of the GPU; the KV cache gets what weights and buffers leave of that)."""
        return kv_shortfall(self.memory)

    @property
    def fits(self) -> bool:
        return fits_gpu(self.memory, self.gpu, self.headroom)

    @property
    def shortfall_bytes(self) -> float:
        return max(0.0, self.needed_bytes - self.capacity_bytes, self.kv_shortfall_bytes)

    @property
    def seconds(self) -> float:
        return self.time.total if self.time else math.inf

    @property
    def total_gpus(self) -> int:
        return self.n_gpus * self.replicas

    def describe(self) -> str:
        par = self.setup.parallel.describe() if isinstance(self.setup, TrainSetup) else (
            f"TP{self.setup.tp}" if self.setup.tp > 1 else "1 GPU")
        reps = f" × {self.replicas} replicas" if self.replicas > 1 else ""
        layout = "" if par == "1 GPU" else f" ({par})"
        return f"{self.n_gpus}× {self.gpu.name}{layout}{reps}"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "model": self.model.name, "gpu": self.gpu.name, "n_gpus": self.n_gpus, "replicas": self.replicas,
            "config": self.describe(), "fits": self.fits, "memory_needed_bytes": self.needed_bytes,
            "memory_available_bytes": self.capacity_bytes, "headroom": self.margin,
            "memory_shortfall_bytes": self.shortfall_bytes,
            "memory": self.memory.as_dict("total_bytes"), "setup": _setup_dict(self.setup),
        }
        if self.time:
            out["time"] = self.time.as_dict("total_seconds")
        if self.speed:
            sp = self.speed
            out["speed"] = {"ttft_seconds": sp.ttft_s, "tpot_seconds": sp.tpot_s,
                            "batch": sp.batch, "output_tokens_per_second": sp.output_tokens_per_s,
                            "requests_per_second": sp.requests_per_s, "bound": sp.bound}
            if sp.band:  # TTFT and TPOT are times: the band multiplies them directly
                out["speed"].update(
                    ttft_low_seconds=sp.ttft_s * sp.band.low, ttft_high_seconds=sp.ttft_s * sp.band.high,
                    tpot_low_seconds=sp.tpot_s * sp.band.low, tpot_high_seconds=sp.tpot_s * sp.band.high,
                    band=sp.band.as_dict())
        return out


def _setup_dict(setup: TrainSetup | InferSetup) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(setup)


# ---------------------------------------------------------------- validation


def check_training(m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup) -> None:
    """Raise when ``s`` cannot train ``m`` on ``gpu``: the setup's shape against the model, then the hardware, then
    the method against the model (a planner that checks many setups on many GPUs calls the three apart)."""
    check_training_shape(m, s)
    check_training_hardware(gpu, job, s)
    check_training_method(m, job, s)


def check_training_shape(m: ModelSpec, s: TrainSetup) -> None:
    """The sequence length, tensor and pipeline parallelism of ``s`` against ``m``."""
    par = s.parallel
    if s.seq_len > m.max_positions:
        raise InfeasibleError("--seq-len", f"{s.seq_len} tokens is longer than {m.name} supports "
                              f"({m.max_positions} positions).", f"use --seq-len {m.max_positions} or less.")
    _check_tp(m, par.tp, "--tp")
    if par.pp > m.n_layers:
        raise InfeasibleError("--pp", f"{par.pp} pipeline stages for {m.n_layers} layers.",
                              f"use --pp {m.n_layers} or less.")
    check_expert_layout(m, par)


def check_training_hardware(gpu: Gpu, job: Job, s: TrainSetup) -> None:
    """The job's framework and ``s``'s method and precision on ``gpu``: all it reads of the setup."""
    check_runs_on(gpu, job.framework, s.method)
    if s.method.quantizes_base and not (gpu.bf16_flops_per_s
                                                 or (gpu.fp16_flops_per_s or 0) > (gpu.fp32_flops_per_s or 0)):
        raise InfeasibleError("--method", f"{gpu.name} has no fast 16-bit path for QLoRA's compute dtype.",
                              "use a GPU from 2018 on (Turing or newer), or --method lora in fp32.")
    if s.precision.startswith("bf16") and not gpu.supports_bf16 and gpu.vendor == "NVIDIA":
        raise InfeasibleError("--precision", f"{gpu.name} has no BF16 support.", "use --precision fp16-mixed.")
    if s.precision.startswith("fp8") and not gpu.fp8_flops_per_s:
        raise InfeasibleError("--precision", f"{gpu.name} has no FP8 tensor cores.",
                              "use --precision bf16-mixed, or an H100/H200/L40S/Blackwell GPU.")
    if s.precision == "fp4-mixed" and not gpu.fp4_flops_per_s:
        raise InfeasibleError("--precision", f"{gpu.name} has no FP4 tensor cores (no fp4_tflops in the GPU "
                              "catalog).", "use --precision fp8-mixed, or a Blackwell GPU (B200, GB200, B300, GB300).")


def check_training_method(m: ModelSpec, job: Job, s: TrainSetup) -> None:
    """The method against the job's framework (``data/frameworks.csv`` methods) and the model's attention."""
    check_method(job.framework, s.method)
    if job.task == Task.FINETUNE and s.method == Method.PTUNING and m.is_mla:
        raise InfeasibleError("--method", "P-tuning v2 prefixes need per-head keys and values; MLA models cache "
                              "a latent instead.", "use --method lora.")


def check_runs_on(gpu: Gpu, framework: str | None, method: str) -> None:
    """Raise when the job's framework (or, for QLoRA, bitsandbytes) does not run on ``gpu``
    (``data/runs_on.csv``); a job that names no framework may use any listed one."""
    key = get_framework(framework).framework if framework else None
    blocker = training_blocker(gpu.vendor, gpu.architecture, key, method)
    if blocker is None:
        return
    part = f"{gpu.name} ({gpu.vendor} {gpu.architecture})"
    if blocker.kind == "library":
        bnb = where("library", "bitsandbytes")
        raise InfeasibleError("--method", f"QLoRA loads its base through bitsandbytes, which does not run on {part}.",
                              f"use --method lora, or a --gpu bitsandbytes runs on: {bnb}.")
    if not blocker.software:
        raise InfeasibleError("--gpu", f"no listed training framework runs on {part}.",
                              "use another --gpu (see 'gpuplan gpus').")
    fw = get_framework(blocker.software)
    others = ", ".join(runs_here("framework", gpu.vendor, gpu.architecture)) or "none"
    raise InfeasibleError("--framework", f"{fw.name} does not run on {part}.",
                          f"use a --gpu it runs on: {where('framework', fw.framework)}; or a --framework that "
                          f"runs on {gpu.name}: {others}.")


def check_inference(m: ModelSpec, gpu: Gpu, s: InferSetup) -> None:
    if s.context_len > m.max_positions:
        raise InfeasibleError("--prompt/--output", f"{s.prompt_len} + {s.output_len} tokens is longer than "
                              f"{m.name} supports ({m.max_positions} positions).",
                              f"keep prompt + output within {m.max_positions} tokens.")
    _check_tp(m, s.tp, "--tp")
    if not runs_on(s.engine, gpu.vendor, gpu.architecture, gpu.chip):
        raise InfeasibleError("--engine", f"{get_engine(s.engine).name} does not run on {gpu.name} ({gpu.vendor} "
                              f"{gpu.architecture}).", "use another --engine (hf runs wherever PyTorch does) or GPU.")
    fmt = weight_format(s.weight_format)
    if fmt.compute == "fp8" and not gpu.fp8_flops_per_s and not (
            gpu.vendor == "NVIDIA" and nvidia_generation(gpu.architecture) >= nvidia_generation("Ampere")):
        raise InfeasibleError("--quant", f"FP8 weights need FP8 units or an NVIDIA Ampere or newer GPU (which runs "
                              f"them as 8-bit weights with 16-bit math); {gpu.name} has neither.",
                              "use --quant int8-wo or awq-int4, or a newer GPU.")
    if fmt.compute == "fp8" and not gpu.fp8_flops_per_s and s.engine == Engine.TRTLLM:
        raise InfeasibleError("--quant", f"TensorRT-LLM FP8 needs FP8 tensor cores; {gpu.name} has none.",
                              "use --quant int8-wo or awq-int4, or an Ada/Hopper/Blackwell GPU.")
    if fmt.name.startswith("gguf") and not Engine(s.engine).reads_gguf:
        raise InfeasibleError("--quant", f"GGUF ({fmt.name}) runs in llama.cpp, not {s.engine}.",
                              "use --engine llamacpp, or --quant awq-int4 for vLLM/SGLang.")
    if Engine(s.engine).reads_gguf and not fmt.name.startswith("gguf") and fmt.name not in ("bf16", "fp16", "fp32"):
        fix = ("use --quant MXFP4_MOE (gguf-mxfp4_moe: llama.cpp's GGUF of MXFP4 experts, Q8_0 elsewhere), or leave "
               "--quant out." if fmt.name in GGUF_OF_NATIVE else
               "use --quant gguf-q4_k_m (or gguf-q8_0, bf16), or --engine vllm.")
        raise InfeasibleError("--quant", f"llama.cpp loads GGUF files; {fmt.name} is not a GGUF type.", fix)
    mlx = s.engine == Engine.MLX
    if fmt.name.startswith("mlx") != mlx and not (mlx and fmt.name in ("bf16", "fp16")):
        raise InfeasibleError("--quant", f"MLX quantized weights ({fmt.name}) run in mlx-lm only, and mlx-lm loads "
                              f"MLX or 16-bit weights; here {fmt.name} with {s.engine}.",
                              "use --engine mlx with --quant mlx-q4 (or bf16), or another --quant for this engine.")
    if fmt.name.startswith("bnb") and not Engine(s.engine).loads_bnb:
        raise InfeasibleError("--quant", f"bitsandbytes formats run in transformers, vLLM and SGLang, not "
                              f"{get_engine(s.engine).name}.", "use --quant awq-int4 or int8-wo, or --engine vllm.")
    if s.kv_dtype == "fp8" and s.engine == Engine.HF:
        raise InfeasibleError("--kv-dtype", "transformers keeps its KV cache in the model's dtype.",
                              "use --kv-dtype bf16, or --engine vllm/sglang/trtllm for an FP8 KV cache.")
    if s.pp > m.n_layers:
        raise InfeasibleError("--pp", f"{s.pp} pipeline stages for {m.n_layers} layers.",
                              f"use --pp {m.n_layers} or less.")
    if s.engine == Engine.MLX and (s.tp > 1 or s.pp > 1):
        raise InfeasibleError("--tp", "mlx-lm runs a model on one Mac's GPU.", "use --tp 1 --pp 1 with --engine mlx.")
    if not Engine(s.engine).tensor_parallel and s.tp > 1:
        raise InfeasibleError("--tp", "llama.cpp splits layers across GPUs; it has no tensor parallelism.",
                              "use --tp 1 (llama.cpp) or --engine vllm.")
    if s.kv_dtype == "fp8" and not gpu.fp8_flops_per_s and s.engine == Engine.TRTLLM:
        raise InfeasibleError("--kv-dtype", f"FP8 KV cache in TensorRT-LLM needs FP8 support on {gpu.name}.",
                              "use --kv-dtype bf16.")


def _check_tp(m: ModelSpec, tp: int, field: str) -> None:
    if tp < 1:
        raise InputError(field, f"{tp} is not a tensor-parallel size.", "use 1, 2, 4 or 8.")
    if m.n_heads % tp:
        raise InfeasibleError(field, f"TP {tp} does not divide {m.name}'s {m.n_heads} attention heads.",
                              f"use a TP size that divides {m.n_heads} "
                              f"({', '.join(str(t) for t in (1, 2, 4, 8, 16) if m.n_heads % t == 0)}).")
    if not m.is_mla and m.n_kv_heads % tp and tp % m.n_kv_heads:
        raise InfeasibleError(field, f"TP {tp} neither divides nor is a multiple of {m.name}'s {m.n_kv_heads} KV "
                              "heads.", "use a TP size that divides the KV heads or is a multiple of them.")


# ---------------------------------------------------------------- estimates


def estimate_training(m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration | None = None,
                      headroom: float | None = None) -> JobEstimate:
    from gpuplan.estimate.train_time import train_time  # imported here: an inference plan never loads it

    check_training(m, gpu, job, s)
    cal = cal or fitted()
    mem = training_memory(m, s, cal)
    if job.framework:
        fw = get_framework(job.framework)
        quantized = bool(s.base_quant) or s.method.quantizes_base
        described = fw.describe(quantized)
        mem = replace(mem, assumptions=(*mem.assumptions, Assumption("framework", described, fw.source)))
    tokens = job.train_tokens
    time = train_time(m, gpu, s, tokens, cal) if tokens > 0 else None
    return JobEstimate(job, m, gpu, s.parallel.n_gpus, s, mem, time, None, 1, headroom)


def estimate_inference(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration | None = None,
                       headroom: float | None = None, describe: bool = True) -> JobEstimate:
    """Batch inference (``infer``) or steady serving (``serve``) on ``s.tp × s.pp`` GPUs per replica.
    ``describe=False`` leaves the assumptions and the longest context out (as :func:`inference_memory` does): the
    same numbers otherwise, for a planner that describes only the estimates it shows."""
    from gpuplan.estimate.infer_speed import batched, speed, speed_assumptions

    check_inference(m, gpu, s)
    cal = cal or fitted()
    s = with_engine_defaults(s, gpu)
    if s.launcher:  # a local runner's defaults (gpuplan.estimate.runners)
        s = _runner_setup(m, gpu, s, cal, headroom)
    if s.batch <= 0:  # not given: continuous batching keeps as many sequences in flight as the engine holds
        s = batched(s, auto_batch(m, gpu, job, s, cal, headroom))
    if not gpu.memory_bandwidth_bytes_per_s:
        return JobEstimate(job, m, gpu, s.n_gpus, s, inference_memory(m, gpu, s, cal, describe), None, None, 1,
                           headroom)
    if job.task == Task.SERVE:
        return _serving(m, gpu, job, s, cal, headroom, describe)
    mem = inference_memory(m, gpu, s, cal, describe)
    sp = speed(m, gpu, s, s.batch, cal)
    time = None
    if job.requests:
        waves = math.ceil(job.requests / s.batch)
        from gpuplan.estimate.result import Breakdown, Waves

        parts = (("prefill", waves * sp.ttft_s), ("decode", waves * s.output_len * sp.tpot_s))
        time = Estimate(Breakdown("seconds", parts), cal.band("inference_throughput"),
                        speed_assumptions(gpu, s, sp, cal, largest_batch=job.batch <= 0) if describe else (),
                        Waves(waves))
    return JobEstimate(job, m, gpu, s.n_gpus, s, mem, time, sp, 1, headroom)


def _runner_setup(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration, headroom: float | None) -> InferSetup:
    """``s`` with its runner's defaults: the KV cache for the first context the runner tries that fits (older Ollama
    releases try several sequences of num_ctx, then one; newer ones lower num_ctx by tiers), else for the last."""
    *more, one = [with_runner_defaults(m, s, gpu, choice) for choice in context_choices(s, gpu)]
    return next((t for t in more if fits_gpu(inference_memory(m, gpu, t, cal, False), gpu, headroom)), one)


def auto_batch(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration,
               headroom: float | None = None) -> int:
    """The batch of a batch-inference job run with continuous batching: the most sequences the engine holds at
    once (its ``max_num_seqs`` and the KV cache), at most the job's requests; 1 without requests.

    The KV capacity is first read at batch 1; a larger batch also needs larger prefill activations and
    logits (all of them at once in transformers), so the batch is then lowered until that batch itself fits."""
    if job.task != Task.INFER or not job.requests:
        return 1
    from gpuplan.estimate.infer_speed import batched, max_batch

    top = max(1, min(max_batch(m, gpu, batched(s, 1), cal), math.ceil(job.requests)))
    return max(1, largest_batch(m, gpu, job, s, cal, headroom, top))  # 1 when none holds: the estimate says so


def least_run_seconds(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration,
                      work: RunWork | None = None) -> float:
    """A lower bound on the seconds :func:`estimate_inference` gives a batch-inference job (0 where it gives none,
    or for serving), made before that estimate and without its memory search: :func:`run_floor_seconds` of
    :func:`least_run_work` (``work``, which does not depend on the GPU, when the caller made it)."""
    if job.task != Task.INFER or not job.requests or not gpu.memory_bandwidth_bytes_per_s:
        return 0.0
    from gpuplan.estimate.infer_speed import run_floor_seconds

    s = with_engine_defaults(s, gpu)  # the caps estimate_inference runs under on this GPU
    try:
        floor = run_floor_seconds(m, gpu, s, work or least_run_work(m, job, s), cal)
    except InfeasibleError:
        return 0.0
    return floor * (1 - 1e-9)  # less a billionth, for rounding


def least_run_work(m: ModelSpec, job: Job, s: InferSetup) -> RunWork:
    """:func:`run_work` of the job in waves of at most the batch :func:`auto_batch` may choose (the engine's cap on
    sequences, at most the requests) or the setup's own."""
    most = s.batch if s.batch > 0 else math.ceil(job.requests or 1)
    cap = sequence_cap(s)  # max_batch's cap, when the engine has one
    if s.batch <= 0 and cap:
        most = max(1, min(cap, most))
    from gpuplan.estimate.infer_speed import run_work

    return run_work(m, s, job.requests or 0.0, most)


def least_replicas(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration,
                   work: tuple[RunWork, int] | None = None) -> int:
    """A lower bound on the replicas :func:`estimate_inference` gives a serving job (1 where it knows none), made
    before that estimate and without its memory search. A replica at concurrency b serves b requests per wave of
    its prefill of b prompts and ``output_len`` decode steps (:func:`speed`), and b is at most the engine's cap on
    sequences (or the job's batch): so a request takes at least :func:`run_floor_seconds` of the work of one wave of
    that many, shared by them (:func:`least_serving_work`, ``work`` when the caller made it), and a replica serves
    at most the inverse of that."""
    if job.task != Task.SERVE or not job.rps or not gpu.memory_bandwidth_bytes_per_s:
        return 1
    s = with_engine_defaults(s, gpu)  # the caps estimate_inference runs under on this GPU
    found = work or least_serving_work(m, job, s)
    if found is None:
        return 1
    from gpuplan.estimate.infer_speed import run_floor_seconds

    try:
        floor = run_floor_seconds(m, gpu, s, found[0], cal)
    except InfeasibleError:
        return 1
    return max(1, math.ceil(job.rps * floor / found[1] * (1 - 1e-9)))  # less a billionth, for rounding


def least_serving_work(m: ModelSpec, job: Job, s: InferSetup) -> tuple[RunWork, int] | None:
    """(:func:`run_work` of one wave of the most sequences a serving replica runs at once, that count): the job's
    batch, else the engine's cap (:func:`max_batch`'s); None for an engine with no cap."""
    most = job.batch if job.batch > 0 else sequence_cap(s)
    if not most:
        return None
    from gpuplan.estimate.infer_speed import run_work

    return run_work(m, s, float(most), most), most


def largest_batch(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration, headroom: float | None,
                  top: int) -> int:
    """The largest batch in 1..``top`` whose own memory (KV cache, prefill activations, logits) fits with the
    headroom; 0 when not even one sequence does. Memory grows with the batch, so a search of the bounds finds it.

    Kept per model, calibration, setup, headroom and ``top``, and of the GPU only what the memory estimate reads
    of it (:func:`memory_reads`): GPU types of the same memory share the search."""
    values = (s, headroom, top, *memory_reads(gpu))
    hit = _largest.get(m, cal, None, values)
    if hit is None:
        hit = _largest.put(m, cal, None, values, _largest_batch(m, gpu, s, cal, headroom, top))
    return hit


_largest: IdentityMemo[int] = IdentityMemo()


def _largest_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration, headroom: float | None, top: int
                   ) -> int:
    """:func:`largest_batch` made afresh."""
    from gpuplan.estimate.infer_speed import batched

    def room(b: int) -> float:
        """Bytes to spare at batch ``b`` (negative: short by that much): it holds when the room is at least 0."""
        mem = inference_memory(m, gpu, batched(s, b), cal, describe=False)
        room = gpu.memory_bytes - needed_memory(mem, headroom)[0]
        if mem.capacity is None:
            return room
        return min(room, mem.capacity.kv_budget_bytes - mem.breakdown.get("kv_cache"))  # kv_shortfall's terms

    if top < 1 or (first := room(1)) < 0:
        return 0
    if (last := room(top)) >= 0:  # the engine's cap usually fits on a GPU with room: no bisection then
        return top
    # room(lo) >= 0 > room(short): the answer is lo once short is lo + 1. Memory is close to linear in the batch, so
    # the next batch tried is where the line through the last two tried runs out of room (a secant step, kept
    # strictly inside the bounds), which usually ends the search in two or three steps; after three such steps
    # the bisection halves the bounds, so a search never takes more than a few steps beyond the bisection's
    lo, short = 1, top
    before, latest = (1, first), (top, last)
    steps = 0
    while short - lo > 1:
        (b0, r0), (b1, r1) = before, latest
        if steps < 3 and r1 != r0:
            b = min(short - 1, max(lo + 1, math.floor(b1 - r1 * (b1 - b0) / (r1 - r0))))
        else:
            b = (lo + short) // 2
        steps += 1
        r = room(b)
        if r >= 0:
            lo = b
        else:
            short = b
        before, latest = latest, (b, r)
    return lo


def _serving(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration, headroom: float | None,
             describe: bool) -> JobEstimate:
    """Replicas needed to carry ``job.rps`` within the TTFT/TPOT targets: each replica runs the largest
    concurrency whose decode step meets the TPOT target and whose prefill meets the TTFT target."""
    from gpuplan.estimate.infer_speed import batched, speed

    cap, best = _served_batch(m, gpu, job, s, cal, headroom)
    if best is None or cap < 1:  # nothing meets the targets, or nothing fits: show the asked-for batch, else 1
        b = job.batch or 1
        shown = s.with_batch(b)
        return JobEstimate(job, m, gpu, s.n_gpus, shown, inference_memory(m, gpu, shown, cal, describe), None,
                           speed(m, gpu, s, b, cal), 0, headroom)
    setup = batched(s, best.batch)
    mem = inference_memory(m, gpu, setup, cal, describe)
    replicas = max(1, math.ceil(job.rps / best.requests_per_s)) if job.rps else 1
    return JobEstimate(job, m, gpu, s.n_gpus, setup, mem, None, best, replicas, headroom)


def _served_batch(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration, headroom: float | None
                  ) -> tuple[int, Speed | None]:
    """(the most sequences the engine holds, the speed at the largest concurrency that meets the job's targets or
    None), kept per model, GPU, setup, calibration, headroom and the job's batch and targets, all they read: a
    plan, and the plans of its changes, ask for each configuration again."""
    values = (s, headroom, job.batch, job.ttft_s, job.tpot_s)
    hit = _searched.get(m, gpu, cal, values)
    if hit is not None:
        return hit
    return _searched.put(m, gpu, cal, values, _search_batch(m, gpu, job, s, cal, headroom))


_searched: IdentityMemo[tuple[int, Speed | None]] = IdentityMemo()


def _search_batch(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup, cal: Calibration, headroom: float | None
                  ) -> tuple[int, Speed | None]:
    """:func:`_served_batch` made afresh."""
    from gpuplan.estimate.infer_speed import max_batch, prefill_seconds, speed

    # what the engine holds: its cap and the KV cache at batch 1, then lowered until that batch itself fits
    cap = largest_batch(m, gpu, job, s, cal, headroom, max_batch(m, gpu, s, cal))
    # concurrency: the one asked for (job.batch), else doubling up to what the engine holds
    sizes = [job.batch] if job.batch > 0 else [1 << k for k in range(max(cap, 1).bit_length())]
    alone = prefill_seconds(m, gpu, s, s.prompt_len, cal)  # a prompt's own prefill (speed()'s TTFT at batch 1),
    # then it waits for at most one step

    def within(b: int) -> Speed | None:
        """The speed at concurrency ``b`` when it meets the targets."""
        sp = speed(m, gpu, s, b, cal)
        ttft = alone + sp.tpot_s
        if (job.tpot_s and sp.tpot_s > job.tpot_s) or (job.ttft_s and ttft > job.ttft_s):
            return None
        return sp.with_ttft(ttft)

    # a larger concurrency makes a longer decode step, so TPOT and TTFT only grow with it: the largest size that
    # meets the targets is found by bisection (the top one at once when it does, as without targets)
    best = within(sizes[-1])
    if best is None and len(sizes) > 1:
        lo, hi = 0, len(sizes) - 2  # the answer's index lies in lo..hi, or nothing meets them
        while lo <= hi:
            mid = (lo + hi) // 2
            found = within(sizes[mid])
            if found is None:
                hi = mid - 1
            else:
                best, lo = found, mid + 1
    return cap, best


def training_setup(job: Job, parallel: Parallelism, micro_batch: int = 1, recompute: str | None = None,
                   gpu: Gpu | None = None, **overrides: Any) -> TrainSetup:
    """A TrainSetup for ``job`` with gradient accumulation chosen to reach the job's global batch; on a
    ``gpu`` without BF16 (Volta, Turing) the 16-bit format is FP16. With ``job.framework`` its defaults apply
    (stack, recomputation, optimizer, chunked loss, compilation, LoRA dropout, a full fine-tune's precision) unless
    ``recompute``/``overrides`` say otherwise; ``recompute`` None means the framework's default (none without a
    framework)."""
    accum = _accumulation(job, parallel, micro_batch)
    fields = setup_fields(job, recompute, half_format(gpu))
    if overrides:
        return TrainSetup(**{**fields, "parallel": parallel, "micro_batch": micro_batch, "grad_accum": accum,
                             **overrides})
    return TrainSetup(**fields, parallel=parallel, micro_batch=micro_batch, grad_accum=accum)


def setup_with(like: TrainSetup, job: Job, parallel: Parallelism, micro_batch: int) -> TrainSetup:
    """``training_setup(job, parallel, micro_batch, recompute, gpu=gpu)`` where ``like`` is ``TrainSetup(
    **setup_fields(job, recompute, half_format(gpu)))``: a search makes the setups of many layouts and micro-batches
    from the same (:meth:`TrainSetup.resized`)."""
    return like.resized(parallel, micro_batch, _accumulation(job, parallel, micro_batch))


def _accumulation(job: Job, parallel: Parallelism, micro_batch: int) -> int:
    """The micro-batches per optimizer step that reach the job's global batch, or why none does."""
    global_batch = default_global_batch(job)
    if parallel.dp * micro_batch > global_batch:  # more sequences per step than the optimizer step holds
        raise InfeasibleError("--global-batch", f"{parallel.dp} data-parallel ranks × micro-batch {micro_batch} "
                              f"exceed the global batch of {global_batch} sequences.",
                              "use fewer GPUs or a smaller micro-batch, or raise --global-batch.")
    return max(1, round(global_batch / (parallel.dp * micro_batch)))


def setup_fields(job: Job, recompute: str | None, half: str) -> dict[str, Any]:
    """The fields :func:`training_setup` gives a setup of ``job`` whatever its layout and micro-batch (all but
    ``parallel``, ``micro_batch`` and ``grad_accum``), in the 16-bit format ``half`` (:func:`half_format`)."""
    method = Method.FULL if job.task == Task.PRETRAIN else Method(job.method)
    # pretraining at scale runs on Megatron-LM/torchtitan-class stacks; fine-tuning on HF Trainer-class ones
    framework = Framework.MEGATRON if job.task == Task.PRETRAIN else Framework.HF
    values: dict[str, Any] = dict(method=method, seq_len=job.seq_len, recompute=recompute or "none",
                                  lora_rank=job.lora_rank, lora_targets=job.lora_targets, base_quant=job.base_quant,
                                  train_embeddings=job.train_embeddings, framework=framework)
    if job.framework:
        fw = get_framework(job.framework)
        values.update(framework=fw.stack, optimizer=fw.optimizer,
                      recompute=recompute or fw.recompute_for(bool(job.base_quant) or method.quantizes_base),
                      chunked_loss=fw.chunked_loss, compiled=fw.compiled, lora_dropout=fw.lora_dropout or 0.0,
                      lengths_vary=fw.lengths_vary and job.task != Task.PRETRAIN)
        values.update(zero_buckets(fw))
        values["fp32_base"] = bool(fw.adapter_base_fp32) and method.new_weights and not method.quantizes_base
    elif job.task == Task.PRETRAIN:  # pretraining concatenates documents into full-length sequences
        values["lengths_vary"] = False
    if values.get("fp32_base"):  # fp32 weights under autocast: the adapters' weights and states are fp32 too
        values["precision"] = "bf16-mixed" if half == "bf16" else "fp16-mixed"
    elif method.new_weights:
        values["precision"] = "bf16" if half == "bf16" else "fp16-mixed"
    elif half == "fp16":
        values["precision"] = "fp16-mixed"
    elif job.framework:
        values["precision"] = get_framework(job.framework).full_precision
    return values


def half_format(gpu: Gpu | None) -> str:
    """The 16-bit format training computes in on ``gpu``: BF16, or FP16 on NVIDIA parts without BF16 (Volta,
    Turing). It is all :func:`training_setup` reads of the GPU."""
    return "bf16" if gpu is None or gpu.supports_bf16 or gpu.vendor != "NVIDIA" else "fp16"


PRETRAIN_BATCH_TOKENS = 4 * 1024 * 1024  # LLaMA and Llama 2 trained with 4M-token batches (Touvron et al. 2023)
FINETUNE_BATCH_SEQUENCES = 32


def default_global_batch(job: Job) -> int:
    """Sequences per optimizer step: the job's, else 32 for fine-tuning and 4M tokens for pretraining."""
    if job.global_batch:
        return job.global_batch
    if job.task == Task.PRETRAIN:
        return max(1, PRETRAIN_BATCH_TOKENS // job.seq_len)
    return FINETUNE_BATCH_SEQUENCES


def inference_setup(job: Job, tp: int, engine: str, weight_format: str, **overrides: Any) -> InferSetup:
    """The setup of ``job`` on ``engine``; a local runner's name ("ollama") is the engine it runs this format on,
    started by that runner (``InferSetup.launcher``: gpuplan.estimate.runners)."""
    runner = runner_key(engine)
    if runner is not None:
        engine = runner_engine(runner, weight_format)
        overrides.setdefault("launcher", runner)
    eng = get_engine(engine)
    kv = overrides.pop("kv_dtype", "fp8" if weight_format == "fp8" and engine == Engine.TRTLLM else "bf16")
    return InferSetup(engine=Engine(eng.engine), weight_format=weight_format, kv_dtype=kv, batch=job.batch,
                      prompt_len=job.prompt_len, output_len=job.output_len, tp=tp, **overrides)


__all__ = ["GiB", "JobEstimate", "estimate_inference", "estimate_training", "inference_setup", "training_setup"]
