"""Serving engines and their memory semantics, read from ``data/engines.csv``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from gpuplan import types
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError

_COLUMNS = (
    Column("engine", required=True), Column("name", required=True),
    Column("memory_mode", "enum", True, ("on-demand", "preallocate", "context")),
    Column("gpu_memory_utilization", "float", positive=True, max=1),
    Column("kv_share_of", "enum", False, ("total", "free")),
    Column("max_num_seqs", "int", min=1), Column("max_batched_tokens", "int", min=1),
    Column("kv_block_tokens", "int", True, min=1), Column("mla_latent_cache", "bool", True),
    Column("half_accumulate", "bool", True), Column("prefill_dequant_fp16", "bool", True),
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
    source: str


@cache
def engines() -> dict[str, Engine]:
    rows = read_table(BUNDLED_DIR / "engines.csv", _COLUMNS, ["engine"], "gpuplan/data/engines.csv")
    return {r.values["engine"]: Engine(**{k: v for k, v in r.values.items() if k not in ("as_of", "notes")})
            for r in rows}


def engine_name(name: str, field: str = "--engine") -> types.Engine:
    """The engine ``name`` (or an alias: "llama.cpp", "tensorrt-llm") stands for."""
    return types.Engine(engine(name, field).engine)


def engine(name: str, field: str = "--engine") -> Engine:
    table = engines()
    key = {"transformers": "hf", "huggingface": "hf", "tensorrt-llm": "trtllm", "trt-llm": "trtllm",
           "llama.cpp": "llamacpp", "llama-cpp": "llamacpp"}.get(name.lower(), name.lower())
    if key not in table:
        raise InputError(field, f"unknown engine '{name}'.", f"use one of: {', '.join(table)}.")
    return table[key]


# Where each engine runs, by vendor and (for NVIDIA) the oldest architecture it supports. Sources: vLLM
# "GPU installation" docs (NVIDIA compute capability 7.0 or newer; AMD Instinct MI200/MI300 on ROCm; Google TPU;
# Intel Gaudi; Huawei Ascend through the vllm-ascend plugin); SGLang "Install" docs (NVIDIA, with RTX 20 / T4
# needing an extra flag; AMD Instinct MI300-class; TPU; Ascend NPUs); TensorRT-LLM support matrix (NVIDIA
# Ampere, Ada Lovelace, Hopper, Blackwell); llama.cpp backends (CUDA, HIP, Vulkan, SYCL, CANN, Metal on Apple
# silicon; no TPU); transformers runs wherever PyTorch does (MPS on Apple silicon).
NVIDIA_GENERATIONS = ("Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell", "Blackwell Ultra")
_RUNS_ON: dict[str, dict[str, tuple[str, ...] | str | None]] = {
    "vllm": {"NVIDIA": "Volta", "AMD": ("CDNA 2", "CDNA 3", "CDNA 4"), "Google": None, "Intel": None, "Huawei": None},
    "sglang": {"NVIDIA": "Turing", "AMD": ("CDNA 3", "CDNA 4"), "Google": None, "Huawei": None},
    "trtllm": {"NVIDIA": "Ampere"},
    "llamacpp": {"NVIDIA": None, "AMD": None, "Intel": None, "Huawei": None, "Apple": None},
    "hf": {"NVIDIA": None, "AMD": None, "Google": None, "Intel": None, "Huawei": None, "Apple": None},
}


def nvidia_generation(architecture: str) -> int:
    """Order of an NVIDIA architecture (Pascal 0 … Blackwell Ultra 7); -1 when unknown."""
    return NVIDIA_GENERATIONS.index(architecture) if architecture in NVIDIA_GENERATIONS else -1


def runs_on(engine_name: str, vendor: str, architecture: str) -> bool:
    """Whether ``engine_name`` supports a part of this vendor and architecture."""
    vendors = _RUNS_ON.get(engine_name, {})
    if vendor not in vendors:
        return False
    rule = vendors[vendor]
    if rule is None:
        return True
    if isinstance(rule, tuple):
        return architecture in rule
    return nvidia_generation(architecture) >= nvidia_generation(rule)
