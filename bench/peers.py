"""Other tools' answers to the accuracy benchmark's questions, for the side by side in docs/accuracy.md.

Each peer turns a calibration :class:`~calib.Case` (its model, GPU, setup and what was measured, from
``Case.meta``) into that tool's prediction of the same quantity in the same base unit (bytes, seconds,
tokens/s, GPU-hours), or raises :class:`Skip` saying why the tool cannot represent the row. A tool answers
only rows whose setup it has settings for; every skip is counted with its reason.

- llm-analysis: its ``LLMAnalysis`` class with a ModelConfig and GPUConfig built from gpuplan's ModelSpec
  and Gpu (never its bundled names). Two runs: its default efficiencies (1.0 of peak FLOPs and of memory
  bandwidth, llm_analysis/constant.py) and efficiencies matched to what gpuplan fitted for the row
  (training: the utilisation of bench/fit.py; inference: the engine's eta_compute and eta_memory).
- vramcalc: ``vramcalc.estimate`` on the preset's local config.json (memory only).
- accelerate: the model built from the local config.json on the meta device (``init_empty_weights``),
  sized by ``calculate_maximum_sizes`` and ``estimate_training_usage`` exactly as ``accelerate
  estimate-memory`` does (its CLI needs the Hub).
- DeepSpeed: the ZeRO-2 / ZeRO-3 model-state estimators that ``estimate_zero{2,3}_model_states_mem_needs_
  all_cold`` print (model states per GPU, no activations).

Tools are imported lazily; one that is not installed is reported as such. Nothing here uses the network:
HF_HUB_OFFLINE is set before any Hugging Face import and every model comes from a local config.json.
Install the tools with ``bench/requirements-peers.txt`` (see its header).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from importlib import metadata
from pathlib import Path
from typing import Any

from calib import HERE, Case

from gpuplan import count_params, load_catalog
from gpuplan.catalog.models import find_preset
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.train_time import utilisation
from gpuplan.types import Gpu, InferSetup, ModelSpec, TrainSetup
from gpuplan.units import GB, HOUR, TERA, GiB

MEMORY = ("inference_memory", "finetune_memory", "pretrain_memory")
UNBOUNDED_BYTES = float(2**60)  # a capacity no estimate reaches: the tool's own fit check never gates its answer
PCIE_GB_S = {3: 16.0, 4: 32.0, 5: 64.0, 6: 128.0}  # one direction, x16 (llm-analysis's a10 config uses 32)
LA_MIN_MESSAGE_S = 8e-6  # intra_node_min_message_latency in every llm-analysis gpu_configs/*.json


class Skip(Exception):
    """The tool cannot represent this row; the message says why (no row-specific numbers, so reasons count)."""


@dataclass(frozen=True)
class Peer:
    name: str
    dists: tuple[str, ...]  # distributions whose versions the report prints
    modules: tuple[str, ...]  # all importable: the peer is installed
    answers: str  # one line for the report: what it answers and how
    predict: Callable[[Case, Calibration], float]
    uses_fit: bool = False  # given gpuplan's fitted values: no comparison with gpuplan's held-out errors

    @property
    def installed(self) -> bool:
        return all(importlib.util.find_spec(m) is not None for m in self.modules)

    @property
    def versions(self) -> str:
        return ", ".join(f"{d} {metadata.version(d)}" for d in self.dists)


@dataclass(frozen=True)
class PeerAnswer:
    peer: str
    case: Case
    predicted: float  # nan when not answered
    skipped: str = ""  # why not answered


def answer(peer: Peer, case: Case, cal: Calibration) -> PeerAnswer:
    """The peer's prediction for one case; a skip or a crash of the tool is recorded, never raised."""
    try:
        return PeerAnswer(peer.name, case, float(peer.predict(case, cal)))
    except Skip as why:
        return PeerAnswer(peer.name, case, math.nan, str(why))
    except Exception as exc:  # the tool's own assertions and errors: counted, not hidden
        return PeerAnswer(peer.name, case, math.nan, f"the tool raised {type(exc).__name__}")


def run(cases: list[Case], cal: Calibration, chosen: list[Peer]) -> dict[str, list[PeerAnswer]]:
    return {p.name: [answer(p, c, cal) for c in cases] for p in chosen}


# ---------------------------------------------------------------- what a row asks


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("DS_ACCELERATOR", "cpu")


def _train(case: Case) -> TrainSetup:
    s = case.meta.get("setup")
    if not isinstance(s, TrainSetup):
        raise Skip("not a training row")
    return s


def _infer(case: Case) -> InferSetup:
    s = case.meta.get("setup")
    if not isinstance(s, InferSetup):
        raise Skip("not an inference row")
    return s


def _memory_row(case: Case) -> None:
    if case.cls not in MEMORY:
        raise Skip("memory only")


def train_quantity(case: Case, tokens_per_s: float) -> float:
    """The case's measured quantity from a whole-job training rate (tokens/s over all GPUs)."""
    how, n = case.meta["measure"], _train(case).parallel.n_gpus
    seconds = case.meta["tokens"] / tokens_per_s
    return {"tokens_per_s": tokens_per_s, "tokens_per_s_per_gpu": tokens_per_s / n,
            "gpu_hours": seconds * n / HOUR}.get(how, seconds)


def infer_quantity(case: Case, ttft_s: float, tpot_s: float, batch: float) -> float:
    """The case's measured quantity from prefill and decode times at ``batch`` sequences (as gpuplan's latency():
    output rate = batch × output tokens / (TTFT + output tokens × TPOT))."""
    s, q = _infer(case), case.meta["quantity"]
    if q in ("ttft_s", "tpot_s"):
        return ttft_s if q == "ttft_s" else tpot_s
    rate = batch * s.output_len / (ttft_s + s.output_len * tpot_s)
    return rate / s.n_gpus if case.meta["per_gpu"] else rate


@cache
def config_of(model_name: str) -> tuple[str, bool]:
    """Path of the local config.json behind a case's model, and whether its code lives outside transformers."""
    if model_name.startswith("bench/"):
        return str(HERE / "models" / f"{model_name.split('/', 1)[1]}.json"), False
    entry = find_preset(load_catalog(), model_name)
    if entry is None:
        raise Skip("no local config.json")
    return entry.path, entry.remote_code


def _config_dict(model_name: str) -> dict[str, Any]:
    return json.loads(Path(config_of(model_name)[0]).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- llm-analysis

_LA_BITS = {"fp16": (16, 16), "bf16": (16, 16), "fp8": (8, 8), "int8-wo": (8, 16), "gptq-int4": (4, 16),
            "awq-int4": (4, 16), "int4-wo": (4, 16), "bnb-nf4": (4, 16)}  # (weight, activation) bits


def _llm_analysis() -> Any:
    import logging

    _offline()
    from llm_analysis import analysis

    logging.getLogger("__name__").setLevel(logging.ERROR)  # llm-analysis logs under the literal name "__name__"
    return analysis


def la_model(m: ModelSpec, seq_len: int) -> Any:
    """llm-analysis ModelConfig for gpuplan's architecture. Its MLP has two matrices of width ffn; a gated MLP
    (three matrices of width f) is given as ffn = 1.5·f, the same parameter count (its own Llama-2 config
    uses 4h ≈ 1.5 × 11,008 the same way)."""
    from llm_analysis.config import ModelConfig

    if m.is_mla or m.q_dim != m.hidden:
        raise Skip("attention width differs from the hidden size (llm-analysis ties them)")
    if m.is_moe and (m.n_shared_experts or m.n_dense_layers or m.moe_every != 1):
        raise Skip("MoE with shared experts or dense layers")
    width = m.moe_ffn_hidden if m.is_moe else m.ffn_hidden
    ffn = round(width * 1.5) if m.gated_mlp else width
    return ModelConfig(name=m.name, num_layers=m.n_layers, n_head=m.n_heads, hidden_dim=m.hidden, vocab_size=m.vocab,
                       max_seq_len=max(m.max_positions, seq_len), num_key_value_heads=m.n_kv_heads,
                       ffn_embed_dim=ffn, expansion_ratio=ffn / m.hidden, model_type=m.model_type,
                       moe_num_experts=max(1, m.n_experts), moe_top_k=max(1, m.n_active_experts))


def la_gpu(gpu: Gpu, capacity_bytes: float) -> Any:
    """llm-analysis GPUConfig from gpuplan's datasheet row. Its units: memory × 1024³, bandwidth × 10⁹."""
    from llm_analysis.config import GPUConfig

    if not gpu.memory_bandwidth_bytes_per_s:
        raise Skip("GPU memory bandwidth not in the catalog")
    link = (gpu.interconnect_bytes_per_s / 2 if gpu.has_fast_interconnect and gpu.interconnect_bytes_per_s
            else PCIE_GB_S.get(gpu.pcie_gen or 4, 32.0) * GB)
    eight_bit = gpu.fp8_flops_per_s or gpu.int8_ops_per_s or 2 * gpu.half_flops_per_s
    return GPUConfig(name=gpu.name, mem_per_GPU_in_GB=capacity_bytes / GiB,
                     hbm_bandwidth_in_GB_per_sec=gpu.memory_bandwidth_bytes_per_s / GB,
                     intra_node_bandwidth_in_GB_per_sec=link / GB, intra_node_min_message_latency=LA_MIN_MESSAGE_S,
                     peak_fp16_TFLOPS=gpu.half_flops_per_s / TERA, peak_i8_TFLOPS=eight_bit / TERA)


def la_efficiency(case: Case, cal: Calibration, matched: bool) -> dict[str, float]:
    """Keyword arguments for LLMAnalysis: none (its defaults) or gpuplan's fitted efficiencies for the row."""
    if not matched:
        return {}
    s = case.meta["setup"]
    if isinstance(s, TrainSetup):
        return {"flops_efficiency": min(1.0, utilisation(case.meta["model"], case.meta["gpu"], s, cal))}
    return {"flops_efficiency": cal.get(f"eta_compute_{s.engine}"),
            "hbm_memory_efficiency": cal.get(f"eta_memory_{s.engine}")}


def _la_train_gaps(case: Case, s: TrainSetup) -> None:
    if s.method != "full":
        raise Skip(f"{s.method}: llm-analysis models full training only")
    if s.precision not in ("bf16-mixed", "fp16-mixed", "bf16"):
        raise Skip(f"{s.precision} training")
    if s.optimizer not in ("adamw", "adamw-8bit"):
        raise Skip(f"optimizer {s.optimizer}")
    if s.parallel.cp > 1 or s.parallel.offload_optimizer:
        raise Skip("context parallelism or optimizer offload")
    if case.cls in MEMORY and (s.compiled or s.chunked_loss or s.fused_optimizer_step):
        raise Skip("torch.compile, chunked loss or fused optimizer step change memory; llm-analysis has no setting")


def _la_optimizer_bytes(s: TrainSetup) -> dict[str, int | None]:
    """Bytes per parameter of the master copy (also the gradient's, in llm-analysis) and of the other states."""
    master = 2 if s.precision == "bf16" else 4
    per_state = 1 if s.optimizer == "adamw-8bit" else master
    other = None if (master, per_state) == (4, 4) else 2 * per_state  # None: llm-analysis's fp32 Adam
    return {"master_weights_dtype_bytes": master, "other_op_bytes": other}


def la_training(case: Case, cal: Calibration, matched: bool) -> dict[str, Any]:
    s = _train(case)
    _la_train_gaps(case, s)
    a, m, par = _llm_analysis(), case.meta["model"], s.parallel
    from llm_analysis.config import DtypeConfig, ParallelismConfig

    sp = par.tp if par.sequence_parallel else 1
    la = a.LLMAnalysis(la_model(m, s.seq_len), la_gpu(case.meta["gpu"], UNBOUNDED_BYTES), DtypeConfig(),
                       ParallelismConfig(tp_size=par.tp, pp_size=par.pp, dp_size=par.dp, sp_size=sp),
                       **la_efficiency(case, cal, matched))
    recompute = {"none": 0, "selective": 1, "full": 2}[s.recompute]
    return la.training(batch_size_per_gpu=s.micro_batch, gradient_accumulation_steps=s.grad_accum, seq_len=s.seq_len,
                       activation_recomputation=a.ActivationRecomputation(recompute), ds_zero=a.DSZeRO(par.zero),
                       flash_attn=s.flash_attention, mlp_gated_linear_units=m.gated_mlp, **_la_optimizer_bytes(s))


def la_inference(case: Case, cal: Calibration, matched: bool, batch: int, capacity_bytes: float) -> dict[str, Any]:
    s = _infer(case)
    if s.weight_format not in _LA_BITS:
        raise Skip(f"weight format {s.weight_format}")
    a, (w, act) = _llm_analysis(), _LA_BITS[s.weight_format]
    from llm_analysis.config import DtypeConfig, ParallelismConfig

    la = a.LLMAnalysis(la_model(case.meta["model"], s.context_len), la_gpu(case.meta["gpu"], capacity_bytes),
                       DtypeConfig(name=f"w{w}a{act}e16", weight_bits=w, activation_bits=act),
                       ParallelismConfig(tp_size=s.tp, pp_size=s.pp), **la_efficiency(case, cal, matched))
    return la.inference(batch_size_per_gpu=batch, seq_len=s.prompt_len, num_tokens_to_generate=s.output_len,
                        kv_cache_dtype_bytes=1 if s.kv_dtype == "fp8" else 2)


def la_max_batch(case: Case, cal: Calibration, matched: bool) -> int:
    """The largest batch llm-analysis says fits the GPU (prefill and decode), capped like gpuplan's by the
    engine's sequence limit (an engine setting, engines.csv)."""
    s = _infer(case)
    one = la_inference(case, cal, matched, 1, case.meta["gpu"].memory_bytes)
    cap = s.max_num_seqs or get_engine(s.engine).max_num_seqs or math.inf
    batch = min(one["prefill_max_batch_size_per_gpu"], one["decode_max_batch_size_per_gpu"], cap)
    if batch < 1:
        raise Skip("llm-analysis finds no batch that fits")
    return int(batch)


def llm_analysis_predict(case: Case, cal: Calibration, matched: bool) -> float:
    if matched and case.cls in MEMORY:
        raise Skip("memory does not depend on efficiencies (see llm-analysis (default))")
    if isinstance(case.meta.get("setup"), TrainSetup):
        out = la_training(case, cal, matched)
        if case.cls in MEMORY:
            weights = case.meta["measure"] == "weights"
            return out["weight_memory_per_gpu" if weights else "(weight+op_state+grad+act)_memory_per_gpu"]
        return train_quantity(case, out["global_batch_size"] * out["seq_len"] / out["latency_per_iter"])
    if case.cls in MEMORY:
        return _la_inference_memory(case, la_inference(case, cal, matched, _infer(case).batch, UNBOUNDED_BYTES))
    offline = case.meta["quantity"] == "max_batch_output_tokens_per_s"
    batch = la_max_batch(case, cal, matched) if offline else _infer(case).batch
    out = la_inference(case, cal, matched, batch, case.meta["gpu"].memory_bytes if offline else UNBOUNDED_BYTES)
    return infer_quantity(case, out["prefill_latency"], out["decode_latency"], batch)


def _la_inference_memory(case: Case, out: dict[str, Any]) -> float:
    """Weights + the KV cache of the whole context + the larger of the prefill and decode activations."""
    if case.meta["measure"] == "weights":
        return out["weight_memory_per_gpu"]
    act = max(out["prefill_activation_memory_per_gpu"], out["decode_activation_memory_per_gpu"])
    return out["weight_memory_per_gpu"] + out["kv_cache_memory_per_gpu"] + act


# ---------------------------------------------------------------- vramcalc

_VC_PRECISION = {"bf16-mixed": ("bf16", "amp"), "fp16-mixed": ("fp16", "amp"), "bf16": ("bf16", "pure"),
                 "fp32": ("fp32", "pure")}  # vramcalc: amp = fp32 weights + autocast; pure = train in the dtype


def _vc_train_args(s: TrainSetup) -> dict[str, Any]:
    if s.method not in ("full", "lora") or s.base_quant:
        raise Skip(f"{s.method}: vramcalc models full fine-tuning and LoRA on 16/32-bit weights")
    if s.method == "lora" and s.lora_targets not in ("attention", "qv"):
        raise Skip("LoRA outside the attention projections (vramcalc adapts q, k, v, o)")
    if s.parallel.n_gpus > 1 or s.optimizer not in ("adamw", "sgd") or s.precision not in _VC_PRECISION:
        raise Skip("several GPUs, an optimizer other than AdamW/SGD, or fp8")
    if s.recompute == "selective" or s.compiled or s.chunked_loss or s.fused_optimizer_step:
        raise Skip("selective recompute, torch.compile, chunked loss or fused optimizer step: no vramcalc setting")
    dtype, precision = _VC_PRECISION[s.precision]
    return {"mode": "train", "dtype": dtype, "precision": precision, "batch": s.micro_batch, "seq_len": s.seq_len,
            "lora_rank": s.lora_rank if s.method == "lora" else None, "grad_checkpoint": s.recompute == "full",
            "optimizer": s.optimizer, "attn_impl": "sdpa" if s.flash_attention else "eager"}


def _vc_infer_args(s: InferSetup) -> dict[str, Any]:
    if s.engine != "hf" or s.weight_format not in ("bf16", "fp16"):
        raise Skip("vramcalc models transformers with 16-bit weights only")
    return {"mode": "inference", "dtype": s.weight_format, "batch": s.batch, "seq_len": s.context_len}


def vramcalc_predict(case: Case, cal: Calibration) -> float:
    """Allocator memory (``total``); device-level rows add its CUDA-context ``overhead``; weight rows its
    ``weights`` term."""
    _memory_row(case)
    from vramcalc import UnsupportedModelError, estimate

    s = case.meta["setup"]
    args = _vc_train_args(s) if isinstance(s, TrainSetup) else _vc_infer_args(s)
    try:
        e = estimate(_config_dict(case.meta["model_name"]), **args)
    except UnsupportedModelError:
        raise Skip("model type outside vramcalc's llama/mistral/qwen2/gemma list") from None
    how = case.meta["measure"]
    return e.weights if how == "weights" else e.total + (e.overhead if how.startswith("device") else 0)


# ---------------------------------------------------------------- accelerate

_ACC_DIVISOR = {"float32": 1, "float16": 2, "int8": 4, "int4": 8}  # accelerate/commands/estimate.py gather_data
_ACC_WEIGHTS = {"fp16": "float16", "bf16": "float16", "fp8": "int8", "int8-wo": "int8", "gptq-int4": "int4",
                "awq-int4": "int4", "int4-wo": "int4", "bnb-nf4": "int4"}


@cache
def accelerate_fp32_bytes(model_name: str) -> int:
    """``calculate_maximum_sizes`` of the causal-LM model built on the meta device in float32, as the CLI's
    ``create_empty_model`` does (the CLI builds ``AutoModel``, without the LM head, unless the config maps a
    causal-LM class; the causal LM is the model one loads to run)."""
    if config_of(model_name)[1]:
        raise Skip("modelling code outside transformers (trust_remote_code)")
    _offline()
    import torch
    from accelerate import init_empty_weights
    from accelerate.utils import calculate_maximum_sizes
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = _config_dict(model_name)
    conf = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(conf, dtype=torch.float32)
    return int(calculate_maximum_sizes(model)[0])


def _acc_weight_dtype(s: TrainSetup | InferSetup) -> str:
    if isinstance(s, InferSetup):
        fmt = s.weight_format
    else:
        fmt = s.base_quant or ("bnb-nf4" if s.method == "qlora" else "bf16" if s.precision != "fp32" else "fp32")
    if fmt == "fp32":
        return "float32"
    if fmt not in _ACC_WEIGHTS:
        raise Skip(f"weight format {fmt}")
    return _ACC_WEIGHTS[fmt]


def _acc_training(case: Case, fp32_bytes: int) -> float:
    """The CLI's 'Training using Adam' column: the largest of model, gradients, optimizer and step."""
    s = _train(case)
    if s.method != "full" or s.optimizer != "adamw" or s.parallel.n_gpus > 1 or s.precision == "fp8-mixed":
        raise Skip("accelerate sizes full training with AdamW on one GPU only")
    from accelerate.commands.estimate import estimate_training_usage

    return max(estimate_training_usage(fp32_bytes, "float32" if s.precision == "fp32" else "float16").values())


def accelerate_predict(case: Case, cal: Calibration) -> float:
    _memory_row(case)
    if case.meta["measure"] != "weights" and case.cls == "inference_memory":
        raise Skip("inference memory beyond the weights (accelerate sizes the model only)")
    fp32 = accelerate_fp32_bytes(case.meta["model_name"])
    if case.meta["measure"] == "weights":
        return fp32 / _ACC_DIVISOR[_acc_weight_dtype(case.meta["setup"])]
    return _acc_training(case, fp32)


# ---------------------------------------------------------------- DeepSpeed

GPUS_PER_NODE = 8


def largest_layer_params(m: ModelSpec) -> int:
    """Parameters of the largest single module (what DeepSpeed's model_to_params finds): the embedding or one
    projection matrix."""
    return max(m.vocab * m.hidden, m.hidden * max(m.ffn_hidden, m.moe_ffn_hidden), m.hidden * m.q_dim)


def _ds_gaps(case: Case, s: TrainSetup) -> None:
    if case.cls not in ("finetune_memory", "pretrain_memory") or case.meta["measure"] == "weights":
        raise Skip("training memory only")
    if s.method != "full" or s.optimizer != "adamw":
        raise Skip("DeepSpeed's estimators size full training with Adam")
    if s.precision not in ("bf16-mixed", "fp16-mixed", "fp8-mixed"):
        raise Skip("the estimators assume 16-bit weights with fp32 master weights and Adam states")
    par = s.parallel
    if par.tp > 1 or par.pp > 1 or par.cp > 1 or par.offload_optimizer:
        raise Skip("tensor, pipeline or context parallelism, or offload")


def deepspeed_predict(case: Case, cal: Calibration) -> float:
    """Model states per GPU: ZeRO-3 (FSDP full-shard) with the ZeRO-3 estimator, ZeRO-1/2 with the ZeRO-2 one
    over the data-parallel GPUs, no ZeRO as ZeRO-2 over one GPU (nothing partitioned)."""
    s = _train(case)
    _ds_gaps(case, s)
    _offline()
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    m, dp = case.meta["model"], s.parallel.dp if s.parallel.zero else 1
    per_node = min(dp, GPUS_PER_NODE)
    nodes, total = math.ceil(dp / per_node), count_params(m).total
    if s.parallel.zero >= 3:
        return estimate_zero3_model_states_mem_needs(total, largest_layer_params(m), per_node, nodes,
                                                     cpu_offload=False, cpu_offload_params=False)[1]
    return estimate_zero2_model_states_mem_needs(total, per_node, nodes, cpu_offload=False)[1]


# ---------------------------------------------------------------- the list

NOTES = (
    "llm-analysis is given gpuplan's architecture, with a gated MLP as one 1.5× wider two-matrix MLP (the same "
    "parameter count, as in its own Llama-2 config). It assumes a tied embedding, so an untied LM head is not "
    "counted (most of its under-prediction of inference memory), and heads × head size = hidden (rows where "
    "they differ are skipped). It reports no inference total: weights + KV cache of the whole context + the "
    "larger of its prefill and decode activations is used. Its own fit checks are given an unbounded capacity, "
    "except on max-batch throughput rows, where the batch is the largest it says fits (prefill and decode), "
    "capped by the engine's sequence limit as gpuplan's is.",
    "llm-analysis (matched) takes gpuplan's utilisation for the row, which gpuplan caps at 0.85 of peak; "
    "llm-analysis itself accepts at most 1.0.",
    "vramcalc predicts the allocator's peak; device-level rows add its 0.75 GB CUDA-context overhead. LoRA on "
    "a subset of the attention projections is given as its fixed q, k, v, o set. Inference rows pass "
    "prompt + output as its sequence length (it prefills the whole context).",
    "accelerate is run on the causal-LM model (12.55 GiB for Llama-2-7B in fp16); its CLI builds AutoModel, "
    "without the LM head, unless the config maps a class (12.31 GiB). 'Training using Adam' is the CLI's "
    "column: 8 bytes per parameter for a 16-bit run, with no activations.",
    "DeepSpeed's estimators take the exact parameter count (gpuplan's, equal to transformers' numel) and the "
    "largest layer (the embedding or the largest projection). Model states only: a floor, not a peak.",
    "gpuplan's parameters are fitted on these rows (in-sample); the tools are not. With `--loso` the table "
    "adds gpuplan's median |error| on the same rows when each row's source is left out of the fit (not beside "
    "llm-analysis (matched), whose efficiencies come from the fit on all rows).",
)


def peers() -> list[Peer]:
    la = ("llm-analysis",)
    return [
        Peer("llm-analysis (default)", la, ("llm_analysis",),
             "training memory and time, inference memory and speed, at its default efficiencies (100 % of peak "
             "FLOP/s and of memory bandwidth)", partial(llm_analysis_predict, matched=False)),
        Peer("llm-analysis (matched)", la, ("llm_analysis",),
             "the same time and speed runs with gpuplan's fitted efficiencies for the row (training: the fitted "
             "utilisation, capped at 1.0; inference: the engine's eta_compute and eta_memory)",
             partial(llm_analysis_predict, matched=True), uses_fit=True),
        Peer("vramcalc", ("vramcalc",), ("vramcalc",),
             "memory of transformers inference and single-GPU full/LoRA training (llama, mistral, qwen2, gemma)",
             vramcalc_predict),
        Peer("accelerate", ("accelerate", "transformers", "torch"), ("accelerate", "transformers", "torch"),
             "model size (weight rows) and 'Training using Adam' (single-GPU full training; no activations)",
             accelerate_predict),
        Peer("DeepSpeed", ("deepspeed",), ("deepspeed", "torch"),
             "ZeRO model states per GPU (full training; no activations)", deepspeed_predict),
    ]
