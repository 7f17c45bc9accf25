"""Fit gpuplan's free parameters on the published measurements and write ``gpuplan/data/fitted/params.json``.

    python bench/fit.py            # fit, print a summary, write params.json
    python bench/fit.py --check    # fit and fail if params.json differs (CI keeps the file honest)

Each group of parameters is fitted on the calibration classes it drives: speed by robust least squares on
log(predicted / measured) (scipy.optimize.least_squares, soft-L1 loss); memory as the 90th percentile of
measured/predicted (pinball loss), because a plan that says "fits" must fit. Parameters without data keep
their stated prior and are marked as such. Error bands are the p10/p90 of measured/predicted per class, on
the rows the fit saw (``bands``) and with each source group left out of the fit (``held_out_bands``).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares, minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calib import BAND_OF, SPEED_CLASSES, Case, all_cases

from gpuplan.estimate.calibration import FITTED_PATH, Calibration
from gpuplan.estimate.engines import (
    HOST_SEQUENCE_KEY,
    HOST_SEQUENCE_KEY_SGLANG,
    HOST_SEQUENCE_KEY_VLLM,
    HOST_SEQUENCE_KEY_VLLM_V0,
    METAL_BACKEND_ENGINES,
    efficiency_key,
    host_sequence_key,
    request_overhead_keys,
    vllm_v0,
)
from gpuplan.estimate.load import at_rate
from gpuplan.units import GiB

# Values that are assumptions, not fits: each with its reason (printed in docs/estimators.md).
PRIORS: dict[str, tuple[float, str]] = {
    "network_bytes_per_s_per_gpu": (50e9, "400 Gb/s InfiniBand/RoCE per GPU, as in DGX/HGX H100 and A100 clusters "
                                          "(one 400G NIC per GPU); no calibration row isolates it"),
    "layer_launch_s": (1e-3, "host time to launch one decoder layer's forward and backward kernels from eager "
                             "PyTorch: ~100 kernels at ~10 µs of Python and CUDA launch each (PyTorch blog "
                             "'Accelerating PyTorch with CUDA Graphs', 2021); no calibration row is launch-bound"),
    # FlashAttention 1.x / its Triton port against FlashAttention-2: Dao 2023 (FlashAttention-2, sec. 4.1) measures
    # FlashAttention-2 1.3-1.5× faster forward and ~2× faster backward on an A100; with the backward 2.5× the
    # forward's FLOPs (same section) the attention step takes (1.4 + 2.5 × 2) / (1 + 2.5) = 1.83× as long
    "f_attention_flash1": (3.5 / 6.4, "rate of FlashAttention 1.x and its Triton port against FlashAttention-2: "
                                      "1.3-1.5× slower forward, ~2× slower backward on an A100 (Dao 2023, "
                                      "FlashAttention-2, sec. 4.1), 1.83× over a step whose backward has 2.5× the "
                                      "forward's FLOPs; the only rows on such kernels are one source's"),
    "dp_overlap": (0.8, "DDP/FSDP overlap gradient buckets with the backward pass (Li et al. 2020, PyTorch "
                        "Distributed, sec. 3.2.3); backward is about 2/3 of the step, the last bucket is exposed"),
}

ENGINES = ("hf", "vllm", "sglang", "trtllm", "llamacpp")
# engine keys of the efficiency parameters: each engine, and the engines whose Apple-silicon kernels are their own
# (gpuplan.estimate.engines.METAL_BACKEND_ENGINES: llama.cpp's ggml-metal), fitted apart as "<engine>_metal"
BACKENDS = (*ENGINES, *(f"{e}_metal" for e in METAL_BACKEND_ENGINES))
# Memory is fitted as the 90th percentile (pinball loss, tau = 0.9): at most ~10 % of runs need more than
# the estimate, because an under-predicted memory says "fits" when it does not. Speed is fitted to the middle.
MEMORY_QUANTILE = 0.9


@dataclass
class Group:
    name: str
    params: list[str]
    bounds: list[tuple[float, float]]
    classes: tuple[str, ...]
    quantile: float | None = None  # fit this quantile of measured/predicted (pinball loss); None: robust LSQ
    scale: dict[str, float] | None = None  # parameter units for the optimiser
    pooled: dict[str, float] | None = None  # parameter -> the value it is pooled towards (partial pooling)


def groups() -> list[Group]:
    return [
        Group("training memory", ["activation_scale_hf", "activation_scale_native", "activation_scale_pytorch",
                                  "activation_compiled_factor", "train_overhead_bytes", "allocator_slack",
                                  "selective_recompute_keep", "allocator_slack_persistent"],
              [(0.3, 3.0), (0.3, 3.0), (0.3, 3.0), (0.3, 1.2), (0.0, 4 * GiB), (0.0, 0.5), (0.1, 1.0), (0.0, 0.5)],
              ("finetune_memory", "pretrain_memory"),
              MEMORY_QUANTILE, {"train_overhead_bytes": GiB}),
        Group("inference memory", ["infer_overhead_bytes", "infer_workspace_bytes", "infer_overhead_unified_bytes"],
              [(0.0, 4 * GiB), (0.0, 2 * GiB), (0.0, 4 * GiB)], ("inference_memory",), MEMORY_QUANTILE,
              {"infer_overhead_bytes": GiB, "infer_workspace_bytes": GiB, "infer_overhead_unified_bytes": GiB}),
        Group("training time", ["u_megatron", "u_torchtitan", "u_eager", "f_compiled", "f_consumer",
                                "f_frozen_base", "eta_dequant", "work_half_tflop", "f_fp8", "eta_optimizer",
                                "f_attention", "activation_traffic", "f_fused_traffic", "f_attention_hopper"],
              # utilisation at most 0.75 of dense peak (the best published LLM training MFUs are ~0.55-0.6),
              # eager PyTorch at most 0.6; a quantized base's dequantization kernels stream at most 0.95 of the
              # memory bandwidth (eta_dequant: gpuplan.estimate.train_time.dequantize_seconds);
              # the memory-bound kernels move 5-100 activation elements per token, layer and hidden unit
              # (Korthikanti et al. 2022 count 34 bytes of stored activations, each written once and read at
              # least once in forward and backward); torch.compile's fusion divides that traffic by at most 4
              [(0.05, 0.75), (0.05, 0.75), (0.05, 0.6), (0.8, 1.5), (0.3, 1.0), (0.3, 1.5), (0.05, 0.95),
               (0.01, 500), (0.3, 1.0), (0.05, 1.0), (0.3, 1.0), (5.0, 100.0), (1.0, 4.0), (0.2, 1.0)],
              ("pretrain_throughput", "pretrain_gpu_hours", "finetune_time"),
              scale={"activation_traffic": 10.0}),
        # the fixed cost of one per-expert GEMM launch of Transformer Engine's grouped linear
        # (moe_train.expert_gemm_launches), fitted on the mixture-of-experts runs alone, the only rows it moves, after
        # the training-time group: at least 0, at most 50 µs (a kernel launch is a few µs; a small GEMM's last
        # wave and set-up add a few more)
        Group("moe training time", ["expert_gemm_launch_s"], [(0.0, 5e-5)], ("pretrain_throughput_moe",),
              scale={"expert_gemm_launch_s": 1e-5}),
    ]


# which engine parameters each kind of inference row can identify
_IDENTIFIES = {"decode": ("eta_memory", "layer_overhead_s"), "prefill": ("eta_compute", "f_moe"),
               "generate": ("eta_compute",), "throughput": ("eta_compute", "eta_kv", "f_moe")}
# physical limits: no kernel sustains the datasheet peak (measured GEMMs reach ~80-85 % of dense peak,
# streaming kernels ~90-95 % of memory bandwidth)
_BOUNDS = {"eta_memory": (0.1, 0.95), "eta_compute": (0.05, 0.85), "eta_kv": (0.05, 0.95),
           "layer_overhead_s": (0.0, 5e-3), "f_moe": (0.25, 1.0)}
# f_moe at least 0.25: grouped expert GEMMs reach a large share of a dense GEMM's rate once each expert sees a
# few hundred tokens (Gale et al. 2023, MegaBlocks, fig. 7); left free, SGLang's value followed its one MoE
# throughput row down to 0.09
REFERENCE_ENGINE = "trtllm"
# vLLM's V0 engine (releases before 0.8.0): only its per-layer step overhead is its own; a fold without V0 rows
# has no such key and V0 setups read V1's (gpuplan.estimate.engines.step_overhead_keys)
V0_KEY = "vllm_v0"
LONG_PROMPT = 8192
# backends whose batch-1 mat-vec kernels load at most sm_load_bytes_<backend> bytes of weights per SM per clock
# cycle (gpuplan.estimate.infer_speed.weight_bandwidth: llama.cpp's CUDA MMVQ kernel, one 4-warp block per weight
# row); fitted with the backend's other efficiencies on its batch-1 decode rows. It starts at the geometric middle
# of its bounds, 8 bytes per cycle, which caps the parts with the most bandwidth per SM cycle (A100: 13.4, H100-PCIe:
# 10.0) but none whose rows alone cannot tell the cap from the bandwidth share (an RTX 3090 reads 6.7 bytes per SM
# cycle at full bandwidth, a V100 7.4): a start that caps every part (4) let a fold without the A100 rows settle at
# a cap on the GDDR cards that no row asked for
SM_CAPPED = ("llamacpp",)
_SM_LOAD_BOUNDS = (2.0, 32.0)
SM_LOAD_START = math.sqrt(_SM_LOAD_BOUNDS[0] * _SM_LOAD_BOUNDS[1])
# backends whose batch-1 mat-vec kernels dequantize K-quant weights one at a time on the ALUs, at a floor of
# matvec_flops_per_weight_<backend> FLOP-equivalents per weight at the FP32 rate
# (gpuplan.estimate.infer_speed.matvec_seconds_per_weight: llama.cpp's Metal kernels); fitted with the backend's
# other efficiencies on its batch-1 decode rows, one value for every Apple chip. Bounds: at least the Q4_K inner
# loop's own ALU work at full utilisation (mask, integer-to-float conversion at a quarter rate, FMA: 6 FFMA cycles,
# 12 FLOP-equivalents), at most 80 (below it, no F16 row of the same chips would be slower per weight); it starts at
# the geometric middle, about 31, near the median of what the Apple Q4_K_M rows imply (30.9 over 62 rows without
# the M5's)
MATVEC_FLOORED = ("llamacpp_metal",)
_MATVEC_BOUNDS = (12.0, 80.0)
MATVEC_START = math.sqrt(_MATVEC_BOUNDS[0] * _MATVEC_BOUNDS[1])
_KERNEL_BOUNDS = {"sm_load_bytes": _SM_LOAD_BOUNDS, "matvec_flops_per_weight": _MATVEC_BOUNDS}
# Partial pooling (Gelman & Hill 2007, "Data Analysis Using Regression and Multilevel/Hierarchical Models",
# ch. 12): each other engine's bandwidth efficiency is drawn towards TensorRT-LLM's, by one residual per parameter,
# log(value / TensorRT-LLM's) / POOL_SIGMA. Every engine streams its weights through the same HBM with GEMV/GEMM
# kernels that reach similar shares of it (GPUStack's Qwen3-8B on one H100, 4 clients: TPOT 7.38 ms vLLM, 7.19 ms
# SGLang, 7.67 ms TensorRT-LLM), so an efficiency the engine's few rows pin only loosely stays near the pooled one
# instead of absorbing what those rows do not model; many rows move it as far as they demand. A weak prior: a
# factor of 4 costs as much as one class whose rows are all off by a factor of e. Apple backends run other
# kernels on other memory and are not pooled; the per-step overhead stands for each engine's host-side design
# (eager PyTorch, ggml graphs, schedulers) and is not pooled either.
POOLED = ("eta_memory",)
POOL_SIGMA = math.log(4.0)


def fit_inference(cases: list[Case], cal: Calibration) -> tuple[Calibration, dict[str, str]]:
    """TensorRT-LLM (the engine with the most rows) first, with the link parameters; then each other engine
    on the parameters its rows identify. A parameter no row identifies takes TensorRT-LLM's value."""
    notes: dict[str, str] = {}
    # rows measured under load test the queueing model (gpuplan.estimate.load), which has no parameter of its own:
    # they are predicted with the efficiencies the other rows identify, never fitted on
    speed = _unloaded_speed_rows(cases)
    by_engine: dict[str, list[Case]] = {}
    for c in speed:
        # the key of its efficiencies, e.g. eta_memory_llamacpp_metal for llama.cpp on Apple silicon; a batch-1
        # row of vLLM's V0 engine, decode or a whole generation (whose time is mostly its decode steps), identifies
        # V0's own step overhead and nothing else (its kernels are vLLM's: engines.step_overhead_keys). Fitted with
        # V1's rows, a generation read V1's key, which V0's key has not yet replaced, and the Qwen speed benchmark's
        # vLLM 0.4.2/0.6.3 generations (66 rows) pulled V1's step overhead from 6.2e-5 to 1.1e-4 s a layer. A V0
        # generation after a prompt of LONG_PROMPT tokens or more joins vLLM's own rows: most of its time is the
        # prompt's prefill and every step's read of that prompt's keys and values, the kernels' rates (eta_compute,
        # eta_kv) that V0 and V1 share, while it still reads V0's step overhead. Without them only large-batch rows
        # identified eta_kv_vllm, which fell to 0.26 and made the Qwen2.5 speed benchmark's 30k-129k-token
        # generations 25-47 % slower than measured
        long_prompt = c.meta["kind"] == "generate" and c.meta["setup"].prompt_len >= LONG_PROMPT
        key = (V0_KEY if c.meta["kind"] in ("decode", "generate") and vllm_v0(c.meta["setup"]) and not long_prompt
               else efficiency_key("", c.meta["engine"], c.meta.get("gpu"))[1:])
        by_engine.setdefault(key, []).append(c)
    order = [REFERENCE_ENGINE, *sorted(e for e in by_engine if e != REFERENCE_ENGINE)]
    for eng in order:
        rows = by_engine.get(eng, [])
        kinds = {c.meta["kind"] for c in rows}
        names = sorted({p for k in kinds for p in _IDENTIFIES[k]})
        if eng.endswith("_metal"):  # the expert GEMMs' share of a dense GEMM's rate (f_moe) stays the engine's
            names = [n for n in names if n != "f_moe"]
        if eng == REFERENCE_ENGINE:
            names = ["eta_memory", "eta_compute", "eta_kv", "layer_overhead_s", "f_moe"]
        if eng in SM_CAPPED and "decode" in kinds:  # the per-SM load cap of its mat-vec kernels
            names = [*names, "sm_load_bytes"]
        if eng in MATVEC_FLOORED and "decode" in kinds:  # the ALU floor of its dequantizing mat-vec kernels
            names = [*names, "matvec_flops_per_weight"]
        if eng == V0_KEY:  # starts from V1's fitted value; the other efficiencies stay vLLM's
            names = ["layer_overhead_s"]
            cal = cal.with_values(layer_overhead_s_vllm_v0=cal.values["layer_overhead_s_vllm"])
        params = [f"{n}_{eng}" for n in names]
        bounds = [_BOUNDS.get(n) or _KERNEL_BOUNDS[n] for n in names]
        if eng == REFERENCE_ENGINE:
            params += ["allreduce_latency_s", "eta_pcie"]
            # NCCL small-message all-reduce within a node takes ~10-25 µs; above 30 µs the latency would stand in
            # for other per-step costs and make decode slower with more TP (docs/estimators.md)
            bounds += [(1e-6, 3e-5), (0.05, 1.0)]
        inherited = [n for n in _BOUNDS if n not in names and not (n == "f_moe" and eng.endswith("_metal"))
                     and eng != V0_KEY]
        cal = cal.with_values(**{f"{n}_{eng}": cal.values[f"{n}_{REFERENCE_ENGINE}"] for n in inherited})
        # an engine or backend without a start value of its own (MindIE, MLX, vLLM on Ascend) starts its fit from
        # the reference engine's fitted values
        cal = cal.with_values(**{p: cal.values[f"{n}_{REFERENCE_ENGINE}"] for n, p in zip(names, params, strict=False)
                                 if p not in cal.values})
        if rows and params:
            pooled = {} if eng == REFERENCE_ENGINE or eng.endswith("_metal") else {
                f"{n}_{eng}": cal.values[f"{n}_{REFERENCE_ENGINE}"] for n in names if n in POOLED}
            group = Group(f"inference {eng}", params, bounds, SPEED_CLASSES,
                          scale={"allreduce_latency_s": 1e-5, f"layer_overhead_s_{eng}": 1e-5}, pooled=pooled)
            cal = fit_group(group, rows, cal)
        notes[eng] = (f"fitted {', '.join(names)} on {len(rows)} rows" if rows else "no rows") + (
            f"; {', '.join(inherited)} from {REFERENCE_ENGINE}" if inherited else "")
    for eng in BACKENDS:
        if eng not in order:
            cal = cal.with_values(**{f"{n}_{eng}": cal.values[f"{n}_{REFERENCE_ENGINE}"] for n in _BOUNDS
                                     if not (n == "f_moe" and eng.endswith("_metal"))})
            notes[eng] = f"no rows: all efficiencies from {REFERENCE_ENGINE}"
    return cal, notes


def log_residual(case: Case, cal: Calibration) -> float:
    """log(pred/measured); bound rows count only when violated."""
    try:
        pred = case.predict(cal)
    except Exception:
        return 3.0
    if not pred or not math.isfinite(pred) or pred <= 0:
        return 3.0
    r = math.log(pred / case.measured)
    if case.bound == "upper":  # measured is an upper bound on the truth: fine if pred <= measured
        return max(r, 0.0)
    if case.bound == "lower":
        return min(r, 0.0)
    return r


def identified(group: Group, rows: list[Case], cal: Calibration) -> list[str]:
    """The group's parameters that move at least one row's prediction (a 5 % step within the bounds); the
    others stay at their start value instead of drifting to a bound on no evidence."""
    base = [log_residual(c, cal) for c in rows]
    out = []
    for p, (lo, hi) in zip(group.params, group.bounds, strict=True):
        v = cal.values[p]
        step = v * 0.05 if v else (hi - lo) * 0.01
        moved = min(hi, v + step) if v + step <= hi else max(lo, v - step)
        trial = cal.with_values(**{p: moved})
        if any(abs(log_residual(c, trial) - b) > 1e-9 for c, b in zip(rows, base, strict=True)):
            out.append(p)
    return out


def fit_group(group: Group, cases: list[Case], cal: Calibration) -> Calibration:
    rows = [c for c in cases if c.cls in group.classes]
    if not rows:
        return cal
    free = identified(group, rows, cal)
    if not free:
        return cal
    if len(free) < len(group.params):
        keep = [i for i, p in enumerate(group.params) if p in free]
        group = Group(group.name, free, [group.bounds[i] for i in keep], group.classes, group.quantile,
                      group.scale, group.pooled)
    scale = np.array([(group.scale or {}).get(p, 1.0) for p in group.params])
    x0 = np.array([cal.values[p] for p in group.params]) / scale
    lo = np.array([b[0] for b in group.bounds]) / scale
    hi = np.array([b[1] for b in group.bounds]) / scale
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    weights = _class_weights(rows)

    def trial(x: np.ndarray) -> Calibration:
        return cal.with_values(**dict(zip(group.params, (x * scale).tolist(), strict=True)))

    pooled = [(i, (group.pooled or {})[p]) for i, p in enumerate(group.params) if p in (group.pooled or {})]

    def residuals(x: np.ndarray) -> np.ndarray:
        t = trial(x)
        data = [weights[c.cls] * log_residual(c, t) for c in rows]
        # partial pooling: one more residual per pooled parameter, its log distance from the pooled value in
        # units of POOL_SIGMA
        return np.array(data + [math.log(x[i] * scale[i] / centre) / POOL_SIGMA for i, centre in pooled])

    if group.quantile is not None:
        tau = group.quantile

        def pinball(x: np.ndarray) -> float:
            r = -residuals(x)  # log(measured / predicted): positive where gpuplan under-predicts
            return float(np.sum(np.maximum(tau * r, (tau - 1) * r)))

        x = least_squares(residuals, x0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1, max_nfev=400).x
        sol = minimize(pinball, np.clip(x, lo, hi), method="Powell", bounds=list(zip(lo, hi, strict=True)),
                       options={"maxfev": 4000, "xtol": 1e-4, "ftol": 1e-6})
        return trial(sol.x)
    sol = least_squares(residuals, x0, bounds=(lo, hi), loss="soft_l1", f_scale=0.1, max_nfev=400)
    return trial(sol.x)


def _class_weights(rows: list[Case]) -> dict[str, float]:
    """Each class counts equally whatever its number of rows (265 TensorRT-LLM rows must not drown 12 others)."""
    counts: dict[str, int] = {}
    for c in rows:
        counts[c.cls] = counts.get(c.cls, 0) + 1
    return {k: 1 / math.sqrt(v) for k, v in counts.items()}


# One source group counts at most this many rows per class in a fit: a benchmark that publishes thousands of
# rows (every metric at every concurrency) must not outweigh thirty sources of ten rows, and the fit stays fast.
# The accuracy report still predicts every row.
FIT_ROWS_PER_SOURCE = 40


def fit_rows(cases: list[Case]) -> list[Case]:
    """The rows a fit uses: those whose conditions are stated (``Case.fit``) and that are not kept for the bands
    only (``meta["fit_on"]`` False), at most FIT_ROWS_PER_SOURCE of each (source group, class), a fixed spread
    over the group's rows."""
    by: dict[tuple[str, str], list[Case]] = {}
    for c in cases:
        if c.fit and c.meta.get("fit_on", True):
            by.setdefault((c.group, c.cls), []).append(c)
    out: list[Case] = []
    for rows in by.values():
        rows = sorted(rows, key=lambda c: zlib.crc32(c.id.encode()))
        out += rows[:FIT_ROWS_PER_SOURCE]
    return out


def fit_all(cases: list[Case], start: Calibration) -> Calibration:
    cases = fit_rows(cases)
    cal = start.with_values(**{k: v for k, (v, _) in PRIORS.items()})
    for group in groups():
        cal = fit_group(group, cases, cal)
    cal, _ = fit_inference(cases, cal)
    cal = fit_eager_overhead(cases, cal)
    cal = fit_host_per_sequence(cases, cal)
    return fit_request_overhead(cases, cal)


# the engines whose op-by-op step (gpuplan.estimate.engines.graph_batches: decode batches above the largest captured
# CUDA graph, or a server started without graphs) has a host time per layer of its own, fitted after the engines'
# efficiencies. vLLM V1's such step runs its torch.compile'd model without a graph, SGLang's its PyTorch modules
# op by op: neither is transformers' generate(), whose per-layer time stands in until a fit holds the key. The rows
# that move it: GPUStack's offline "max batch" runs (1,000 requests at once) of vLLM 0.11.0 (decode batches above 512)
# and SGLang 0.5.3 (above 256 below TP 4, 512 from TP 4), and rows run with --disable-cuda-graph or --enforce-eager.
# TensorRT-LLM's PyTorch backend graphs only batches made of decoding requests (CudaGraphConfig,
# tensorrt_llm/llmapi/llm_args.py), so every pass that carries prompt tokens launches its modules from Python: its
# perf-overview v1.0 rows (trtllm-bench) and GPUStack's trtllm-serve rows move its key.
EAGER_FITTED = ("vllm", "sglang", "trtllm")


def fit_eager_overhead(cases: list[Case], cal: Calibration) -> Calibration:
    """``layer_overhead_s_<engine>_eager`` for each engine of ``EAGER_FITTED`` on its speed rows, starting from the
    stand-in (``layer_overhead_s_hf``, fitted first); an engine whose rows no value moves (none runs such a step)
    holds no key and keeps the stand-in."""
    for eng in EAGER_FITTED:
        rows = [c for c in _unloaded_speed_rows(cases)
                if efficiency_key("", c.meta["engine"], c.meta.get("gpu"))[1:] == eng]
        cal = _fit_step_key(f"eager steps {eng}", f"layer_overhead_s_{eng}_eager", cal.values["layer_overhead_s_hf"],
                            _BOUNDS["layer_overhead_s"], rows, cal)
    return cal


def _unloaded_speed_rows(cases: list[Case]) -> list[Case]:
    """The speed rows of runs without an arrival process (offline and batch runs): the load rows inform no
    efficiency or step term."""
    return [c for c in cases if c.cls in SPEED_CLASSES and c.meta.get("kind") != "load"]


def _fit_step_key(name: str, key: str, start: float, bounds: tuple[float, float], rows: list[Case],
                  cal: Calibration) -> Calibration:
    """``cal`` with the one step-time parameter ``key`` fitted on ``rows`` from ``start`` within ``bounds``, where
    some value moves them; else ``cal`` unchanged (no key held)."""
    trial = cal.with_values(**{key: start})
    group = Group(name, [key], [bounds], SPEED_CLASSES, scale={key: 1e-5})
    return fit_group(group, rows, trial) if rows and identified(group, rows, trial) else cal


# the host seconds per running sequence of a decode step (gpuplan.estimate.engines.host_sequence_key,
# gpuplan.estimate.infer_speed.host_step_seconds): at most 100 µs, which would hold one GPU's decode below 10,000
# tokens/s whatever the model (TensorRT-LLM's perf overview has Llama-3.1-8B FP8 on one H100 at 28,312 at 128/128
# tokens). TensorRT-LLM's PyTorch backend starts at 20 µs, a step of 2,048 sequences then taking 41 ms of host time,
# longer than the GPU step of the small-active models the parameter is seen on, so the rows that can identify it
# move at the start. vLLM V1's comes from the GPUStack performance lab's async-scheduling pairs (the same offline
# ShareGPT run with and without --async-scheduling, vLLM 0.10.2 and 0.11.0, one GPU): 1 / (output tokens/s) falls by
# 17.6 µs (gpt-oss-20b, H100: 7,817 → 9,064), 23.4 µs (gpt-oss-20b, A100: 4,620 → 5,180), 17.7 µs (gpt-oss-120b,
# A100) and 4.9 µs (gpt-oss-120b, H100), the host time per sequence and step that overlapping hides: it starts at
# their median and stays under 25 µs, the largest rounded up (without that bound the fit on the committed
# efficiencies runs to 100 µs, pulled by two DeepSeek prompt-heavy max-batch rows over-predicted by 110-350 %). V0
# and SGLang start at TensorRT-LLM's 20 µs; SGLang's overlapped host time stays under the GPU step of every row up to
# 80 µs, so no row identifies it and no key is held.
_HOST_SEQUENCE_BOUNDS = (0.0, 1e-4)
_VLLM_HOST_SEQUENCE_BOUNDS = (0.0, 2.5e-5)
HOST_SEQUENCE_START = 2e-5
HOST_SEQUENCE_STARTS = {HOST_SEQUENCE_KEY: HOST_SEQUENCE_START, HOST_SEQUENCE_KEY_VLLM_V0: 2e-5,
                        HOST_SEQUENCE_KEY_VLLM: 1.76e-5, HOST_SEQUENCE_KEY_SGLANG: 2e-5}


def fit_host_per_sequence(cases: list[Case], cal: Calibration) -> Calibration:
    """Each engine's host seconds per running sequence (``HOST_SEQUENCE_STARTS``) on its speed rows, after the
    engines' efficiencies (they stay); the load rows (every TPOT row) inform none, as they inform no efficiency. A
    key whose rows no value moves (no row's step feels its host time) is not held, and such steps pay none
    (gpuplan.estimate.infer_speed.host_seconds_per_sequence)."""
    for key, start in HOST_SEQUENCE_STARTS.items():
        rows = [c for c in _unloaded_speed_rows(cases) if host_sequence_key(c.meta["setup"]) == key]
        bounds = _VLLM_HOST_SEQUENCE_BOUNDS if key == HOST_SEQUENCE_KEY_VLLM else _HOST_SEQUENCE_BOUNDS
        cal = _fit_step_key(f"host per sequence ({key})", key, start, bounds, rows, cal)
    return cal


# which rows identify an engine's fixed latency per request (gpuplan.estimate.load.request_seconds): TTFT at light
# load with short prompts (at most SHORT_PROMPT tokens), where the prefill and the wait for the scheduler take a few
# milliseconds, so a cost of tens of milliseconds outside the GPU's work is what the TTFT shows above the model's; a
# long prompt or a busy server would let the fixed cost stand in for prefill or queueing errors instead. Light: a
# closed loop of at most LIGHT_CLIENTS clients, or Poisson arrivals that keep as few requests in the server on
# average — rate × predicted mean end-to-end latency, by Little's law (Little 1961, L = λW) — and keep the GPU's
# share of prompt work ρ = rate × prefill at most LIGHT_PREFILL_SHARE, where the mean M/D/1 wait for a busy GPU,
# ρ/(2(1 − ρ)) prefills, is at most an eighth of a prefill (a prompt of 1,000 tokens and a few outputs at 8 req/s
# has few requests in the server, yet queues)
LIGHT_CLIENTS = 8
LIGHT_PREFILL_SHARE = 0.2
SHORT_PROMPT = 1024
_REQUEST_BOUNDS = (0.0, 0.1)


def light_ttft_row(c: Case, cal: Calibration) -> bool:
    """Whether ``c`` is a TTFT row under light load with a short prompt (see LIGHT_CLIENTS), judged for an open
    stream with the efficiencies of ``cal`` and no fixed cost per request, so that the rows chosen do not depend on
    the value about to be fitted."""
    if c.cls != "ttft" or c.meta.get("kind") != "load" or c.meta["setup"].prompt_len > SHORT_PROMPT:
        return False
    clients, rate = c.meta.get("clients") or 0, c.meta.get("rate") or 0.0
    if clients:
        return clients <= LIGHT_CLIENTS
    if not rate:
        return False
    bare = Calibration(values={k: v for k, v in cal.values.items() if not k.startswith("request_overhead_s")})
    s = c.meta["setup"]
    try:
        state = at_rate(c.meta["model"], c.meta["gpu"], s, rate, bare)
    except Exception:
        return False
    in_server = rate * (state.ttft_mean_s + (s.output_len - 1) * state.tpot_mean_s)
    return not state.saturated and state.prefill_share <= LIGHT_PREFILL_SHARE and in_server <= LIGHT_CLIENTS


def fit_request_overhead(cases: list[Case], cal: Calibration) -> Calibration:
    """Each backend's and vLLM generation's ``request_overhead_s_<backend>`` (``request_overhead_s_vllm``,
    ``..._vllm_v0``, ``..._vllm_ascend``, as ``gpuplan.estimate.load.request_seconds`` looks them up) on its
    light-load, short-prompt TTFT rows (:func:`light_ttft_row`; at least three); a key without such rows is not
    held, and its setups pay the next key's (V0 V1's, a backend its prior's), or none. The efficiencies are fitted
    first and stay.

    vllm-ascend shares vLLM's API server but runs its own worker and model runner (a platform plugin), and what
    its rows show above the modelled prefill is not the frontend's cost: GPUStack's vLLM-Ascend 0.9.1 rows at 4
    clients leave 90 ms (Qwen3-8B, one 910B) and 317 ms (Qwen3-30B-A3B, TP 2) at the median, where its vLLM
    rows on NVIDIA parts under the same client leave 10-48 ms; pooled, they raised vLLM's fitted cost on every
    CUDA server from 36.7 ms to 42.1 ms. vLLM's V0 engine (before 0.8) takes a request to its first token along
    another path than V1 (gpuplan.estimate.engines.request_overhead_keys) and is fitted apart: V1's value, fitted
    on GPUStack's 0.10-0.11 servers alone, had been charged to every V0 build too."""
    by_key: dict[str, list[Case]] = {}
    for c in cases:
        if light_ttft_row(c, cal):
            by_key.setdefault(request_overhead_keys(c.meta["setup"], c.meta.get("gpu"))[0], []).append(c)
    for key, rows in sorted(by_key.items()):
        if len(rows) < 3:
            continue
        cal = cal.with_values(**{key: 0.01})
        cal = fit_group(Group(key, [key], [_REQUEST_BOUNDS], ("ttft",), scale={key: 1e-2}), rows, cal)
    return cal


def _ratio(case: Case, cal: Calibration) -> float | None:
    """true ÷ estimated in the direction the estimate is shown — bytes for memory, seconds for every speed
    class (a rate row counts as predicted ÷ measured rate: measuring half the tokens/s means twice the time) —
    or None for bound rows, rows the estimators cannot predict, and rows whose conditions the mapping had to
    assume (``Case.fit`` False: a user's estimate states its conditions, so its band comes from rows that do)."""
    if case.bound or not case.fit:
        return None
    try:
        pred = case.predict(cal)
    except Exception:
        return None
    if not pred or not math.isfinite(pred):
        return None
    return pred / case.measured if case.rate else case.measured / pred


def _band_keys(case: Case) -> tuple[str, ...]:
    """The bands a row counts in: its class's, and for a training run read as PyTorch's allocated peak also the
    band of the memory a run needs when the card has no room to spare (``Estimate.floor``: the tensors, without
    the allocator's cache)."""
    key = BAND_OF.get(case.cls, case.cls)
    return (key, "training_memory_allocated") if key == "training_memory" and case.meta.get("measure") == "active" \
        else (key,)


def _quantiles(by: dict[str, list[tuple[float, str]]]) -> dict[str, tuple[float, float, int]]:
    """p10 and p90 of each class's (ratio, source group) pairs, each source weighing the same in total (a source
    of 300 rows counts as much as one of 3: the band describes a setup drawn from a new source), and the rows."""
    out = {}
    for k, pairs in by.items():
        counts: dict[str, int] = {}
        for _, g in pairs:
            counts[g] = counts.get(g, 0) + 1
        order = sorted(pairs)
        values = np.array([r for r, _ in order])
        cum = np.cumsum([1.0 / counts[g] for _, g in order])
        cum = (cum - 0.5 / np.array([counts[g] for _, g in order])) / cum[-1]  # mid-point of each row's weight
        out[k] = (float(np.interp(0.1, cum, values)), float(np.interp(0.9, cum, values)), len(pairs))
    return out


def bands(cases: list[Case], cal: Calibration) -> dict[str, tuple[float, float, int]]:
    """p10/p90 of measured/predicted per class, on the rows the fit saw (in-sample)."""
    by: dict[str, list[tuple[float, str]]] = {}
    for c in cases:
        r = _ratio(c, cal)
        if r is not None:
            for key in _band_keys(c):
                by.setdefault(key, []).append((r, c.group))
    return _quantiles(by)


def held_out_bands(cases: list[Case]) -> dict[str, tuple[float, float, int]]:
    """The same quantiles, each row predicted by a fit that never saw its source group (leave one source out):
    what to expect for a model, GPU or engine the calibration does not cover."""
    by: dict[str, list[tuple[float, str]]] = {}
    for held, cal in source_refits(cases):
        for c in held:
            if (r := _ratio(c, cal)) is not None:
                for key in _band_keys(c):
                    by.setdefault(key, []).append((r, c.group))
    return _quantiles(by)


_REFIT_CASES: list[Case] = []  # the rows a forked refit worker reads (cases hold closures: they do not pickle)


def _refit_without(group: str) -> dict[str, float]:
    return fit_all([c for c in _REFIT_CASES if c.group != group], start_values()).values


def source_refits(cases: list[Case]) -> Iterator[tuple[list[Case], Calibration]]:
    """Each source group's rows, with a fit (from the neutral start) on all the other rows; the refits run in
    parallel on the machine's cores (forked workers)."""
    global _REFIT_CASES
    names = sorted({c.group for c in cases})
    _REFIT_CASES = cases
    workers = min(len(names), os.cpu_count() or 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            values = pool.map(_refit_without, names, chunksize=1)
    else:
        values = [_refit_without(g) for g in names]
    for group, vals in zip(names, values, strict=True):
        yield [c for c in cases if c.group == group], Calibration(values=vals)


# Where the optimiser starts: neutral values (no framework factor, datasheet-like efficiencies, small
# overheads). Every fit — the committed one and each leave-one-source-out refit — starts here, so a parameter
# that no remaining row identifies falls back to this, not to the value fitted on the held-out rows.
INITIAL: dict[str, float] = {
    "activation_scale_hf": 1.0, "activation_scale_native": 1.0, "activation_scale_pytorch": 1.0,
    "activation_compiled_factor": 1.0,
    "selective_recompute_keep": 0.5, "allocator_slack": 0.05, "allocator_slack_persistent": 0.0,
    "train_overhead_bytes": 0.5 * GiB,
    "infer_overhead_bytes": 0.5 * GiB, "infer_workspace_bytes": 0.1 * GiB,
    "infer_overhead_unified_bytes": 0.5 * GiB,  # the same neutral start as the CUDA context's
    "u_megatron": 0.5, "u_torchtitan": 0.5, "u_eager": 0.4, "f_compiled": 1.0, "f_consumer": 1.0,
    "f_frozen_base": 1.0, "eta_dequant": 0.5, "work_half_tflop": 1.0, "f_fp8": 1.0, "eta_optimizer": 0.5,
    "f_attention": 1.0, "f_attention_hopper": 1.0,
    "activation_traffic": 20.0, "f_fused_traffic": 1.0, "allreduce_latency_s": 1e-5, "eta_pcie": 0.5,
    "expert_gemm_launch_s": 1e-5,
    **{f"sm_load_bytes_{e}": SM_LOAD_START for e in SM_CAPPED},
    **{f"matvec_flops_per_weight_{e}": MATVEC_START for e in MATVEC_FLOORED},
    **{f"{k}_{e}": v for e in ENGINES for k, v in (("eta_memory", 0.8), ("eta_compute", 0.5), ("eta_kv", 0.8),
                                                   ("layer_overhead_s", 5e-5), ("f_moe", 1.0))},
    **{f"{k}_{e}": v for e in BACKENDS[len(ENGINES):] for k, v in (("eta_memory", 0.8), ("eta_compute", 0.5),
                                                                   ("eta_kv", 0.8), ("layer_overhead_s", 5e-5))},
}


def start_values() -> Calibration:
    return Calibration(values=dict(INITIAL))


def run(cases: list[Case] | None = None, held_out: bool = False) -> Calibration:
    """Fit on ``cases`` (default: every calibration row); ``held_out`` adds the leave-one-source-out bands
    (one refit per source group, about half a minute)."""
    cases = cases if cases is not None else all_cases()[0]
    cal = fit_all(cases, start_values())
    return Calibration(values=cal.values, bands=bands(cases, cal),
                       held_out_bands=held_out_bands(cases) if held_out else {},
                       fitted_on=f"{len(cases)} calibration rows (bench/calibration/), bench/fit.py")


def to_json(cal: Calibration) -> str:
    rounded = {k: float(f"{v:.6g}") for k, v in sorted(cal.values.items())}
    def table(b: dict[str, tuple[float, float, int]]) -> dict[str, list[float]]:
        return {k: [round(v[0], 4), round(v[1], 4), v[2]] for k, v in sorted(b.items())}

    priors = {k: reason for k, (_, reason) in PRIORS.items()}
    return json.dumps({"fitted_on": cal.fitted_on, "values": rounded, "bands": table(cal.bands),
                       "held_out_bands": table(cal.held_out_bands), "priors": priors},
                      indent=1, ensure_ascii=False) + "\n"


def check(cal: Calibration, rel: float = 0.02) -> int:
    """Compare a fresh fit with the committed params.json (2 % tolerance: BLAS and SciPy versions move the
    optimiser's last digits); report every parameter that moved more."""
    committed = json.loads(FITTED_PATH.read_text(encoding="utf-8"))["values"]
    moved = [(k, committed.get(k), v) for k, v in sorted(cal.values.items())
             if k not in committed or not math.isclose(committed[k], v, rel_tol=rel, abs_tol=1e-9)]
    for k, old, new in moved:
        print(f"{k}: committed {old} vs fresh fit {new:.6g}")
    print("params.json is up to date" if not moved else "params.json is out of date: run python bench/fit.py")
    return 1 if moved else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed params.json is out of date")
    args = ap.parse_args(argv)
    if args.check:  # the parameters only: the held-out bands follow from them and the same rows
        return check(run())
    cal = run(held_out=True)
    text = to_json(cal)
    FITTED_PATH.write_text(text, encoding="utf-8")
    for k, v in sorted(cal.values.items()):
        print(f"{k:32s} {v:.4g}")
    for k, b in sorted(cal.bands.items()):
        h = cal.held_out_bands.get(k)
        held = f"; held out p10 {h[0]:.3f}  p90 {h[1]:.3f}" if h else ""
        print(f"band {k:24s} p10 {b[0]:.3f}  p90 {b[1]:.3f}  (n={b[2]}){held}")
    return 0


Fitter = Callable[[list[Case], Calibration], Calibration]

if __name__ == "__main__":
    raise SystemExit(main())
