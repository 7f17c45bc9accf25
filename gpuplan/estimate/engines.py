"""Serving engines and their memory semantics, read from ``data/engines.csv``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from gpuplan import types
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError
from gpuplan.estimate import hardware

_COLUMNS = (
    Column("engine", required=True), Column("name", required=True),
    Column("memory_mode", "enum", True, ("on-demand", "preallocate", "context")),
    Column("gpu_memory_utilization", "float", positive=True, max=1),
    Column("kv_share_of", "enum", False, ("total", "free")),
    Column("max_num_seqs", "int", min=1), Column("max_batched_tokens", "int", min=1),
    Column("kv_block_tokens", "int", True, min=1), Column("mla_latent_cache", "bool", True),
    Column("half_accumulate", "bool", True), Column("prefill_dequant_fp16", "bool", True),
    Column("ggml_graph", "bool", True), Column("pp_microbatches", "bool", True),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@dataclass(frozen=True, slots=True)
class Engine:
    engine: str
    name: str
    memory_mode: str
    gpu_memory_utilization: float | None
    kv_share_of: str | None  # total: share of the whole GPU (vLLM); free: share of what weights leave (TRT-LLM)
    max_num_seqs: int | None
    max_batched_tokens: int | None
    kv_block_tokens: int
    mla_latent_cache: bool
    half_accumulate: bool  # 16-bit GEMMs accumulate in FP16 (full tensor rate on GeForce parts)
    prefill_dequant_fp16: bool  # batched GEMMs on quantized weights first write a 16-bit copy (llama.cpp CUDA/HIP)
    ggml_graph: bool  # one fp32 compute buffer sized for the worst-case graph; token embeddings on the host (llama.cpp)
    pp_microbatches: bool  # under pipeline parallelism, one batch per stage is in flight (vLLM, SGLang, TensorRT-LLM)
    source: str


@cache
def engines() -> Mapping[str, Engine]:
    rows = read_table(BUNDLED_DIR / "engines.csv", _COLUMNS, ["engine"], "gpuplan/data/engines.csv")
    return MappingProxyType({r.values["engine"]: Engine(**{k: v for k, v in r.values.items()
                                                             if k not in ("as_of", "notes")}) for r in rows})


_HF_CACHE_COLUMNS = (
    Column("model_type", required=True), Column("cache", "enum", True, ("tuple",)),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@cache
def hf_tuple_cache_types() -> frozenset[str]:
    """Model types whose own modeling code (``trust_remote_code``) returns the KV cache as a new tuple of
    concatenated tensors every step (``data/hf_kv_cache.csv``): transformers' generate holds the previous step's
    tuple until the forward returns the next, so two caches are alive at the peak."""
    rows = read_table(BUNDLED_DIR / "hf_kv_cache.csv", _HF_CACHE_COLUMNS, ["model_type"],
                      "gpuplan/data/hf_kv_cache.csv")
    return frozenset(r.values["model_type"] for r in rows)


# Engines that run kernels of their own on Apple parts (llama.cpp's ggml-metal backend), a different implementation
# from their CUDA kernels: their bandwidth and compute efficiencies are fitted apart, under "<engine>_metal"
METAL_BACKEND_ENGINES = ("llamacpp",)
# Engines that reach Huawei Ascend NPUs through a hardware plugin with kernels of its own: vLLM through vllm-ascend
# (vllm-project/vllm-ascend: a platform plugin whose attention, MoE and linear ops are torch_npu / CANN operators, not
# vLLM's CUDA kernels), fitted apart under "<engine>_ascend"
ASCEND_BACKEND_ENGINES = ("vllm",)
# Where a backend has no fitted efficiencies of its own (no published row yet, or its only source held out), it takes
# those of the nearest implementation: vllm-ascend and MindIE run on the same NPU kernels library (CANN), vllm-ascend
# otherwise follows vLLM's scheduler; MLX runs Metal kernels on the same Apple GPUs as llama.cpp's ggml-metal
# (whose share of the dense GEMM rate for the expert GEMMs, f_moe, is llama.cpp's own: fitted on its CUDA rows)
EFFICIENCY_PRIORS = {"vllm_ascend": "vllm", "mindie": "vllm_ascend", "mlx": "llamacpp_metal",
                     "llamacpp_metal": "llamacpp"}


def efficiency_key(name: str, engine: str, gpu: types.Gpu | None) -> str:
    """The fitted parameter ``name`` of ``engine`` on ``gpu``: e.g. ``eta_memory_llamacpp`` on a CUDA part,
    ``eta_memory_llamacpp_metal`` on Apple silicon, ``eta_memory_vllm_ascend`` for vLLM on an Ascend NPU."""
    return f"{name}_{backend_key(engine, gpu.vendor if gpu is not None else '')}"


def backend_key(engine: str, vendor: str) -> str:
    """The name ``engine``'s efficiencies are fitted under on ``vendor``'s parts: ``llamacpp_metal``,
    ``vllm_ascend``, else the engine's own."""
    backend = ("_metal" if vendor == "Apple" and engine in METAL_BACKEND_ENGINES else
               "_ascend" if vendor == "Huawei" and engine in ASCEND_BACKEND_ENGINES else "")
    return f"{engine}{backend}"


def efficiency_keys(name: str, engine: str, gpu: types.Gpu | None) -> tuple[str, ...]:
    """:func:`efficiency_key`, then the keys of its priors (:data:`EFFICIENCY_PRIORS`), nearest first: the first one
    a calibration holds is the value used."""
    key = efficiency_key(name, engine, gpu)
    keys = [key]
    backend = key[len(name) + 1:]
    while backend in EFFICIENCY_PRIORS:
        backend = EFFICIENCY_PRIORS[backend]
        keys.append(f"{name}_{backend}")
    return tuple(keys)


def engine_name(name: str, field: str = "--engine") -> types.Engine:
    """The engine ``name`` (or an alias: "llama.cpp", "tensorrt-llm") stands for."""
    return types.Engine(engine(name, field).engine)


def engine(name: str, field: str = "--engine") -> Engine:
    table = engines()
    key = {"transformers": "hf", "huggingface": "hf", "tensorrt-llm": "trtllm", "trt-llm": "trtllm",
           "llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "mlx-lm": "mlx", "mlx_lm": "mlx"
           }.get(name.lower(), name.lower())
    if key not in table:
        raise InputError(field, f"unknown engine '{name}'.", f"use one of: {', '.join(table)}.")
    return table[key]


def runs_on(engine_name: str, vendor: str, architecture: str) -> bool:
    """Whether ``engine_name`` supports a part of this vendor and architecture (``data/runs_on.csv``)."""
    return hardware.runs_on("engine", engine_name, vendor, architecture)
