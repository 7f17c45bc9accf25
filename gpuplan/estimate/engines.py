"""Serving engines and their memory semantics, read from ``data/engines.csv``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

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


def runs_on(engine_name: str, vendor: str, architecture: str) -> bool:
    """Whether ``engine_name`` supports a part of this vendor and architecture (``data/runs_on.csv``)."""
    return hardware.runs_on("engine", engine_name, vendor, architecture)
