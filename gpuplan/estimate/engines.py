"""Serving engines and their memory semantics, read from ``data/engines.csv``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

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
    source: str


@cache
def engines() -> dict[str, Engine]:
    rows = read_table(BUNDLED_DIR / "engines.csv", _COLUMNS, ["engine"], "gpuplan/data/engines.csv")
    return {r.values["engine"]: Engine(**{k: v for k, v in r.values.items() if k not in ("as_of", "notes")})
            for r in rows}


def engine(name: str, field: str = "--engine") -> Engine:
    table = engines()
    key = {"transformers": "hf", "huggingface": "hf", "tensorrt-llm": "trtllm", "trt-llm": "trtllm",
           "llama.cpp": "llamacpp", "llama-cpp": "llamacpp"}.get(name.lower(), name.lower())
    if key not in table:
        raise InputError(field, f"unknown engine '{name}'.", "use one of: " + ", ".join(table) + ".")
    return table[key]
